#include "alloctrace/tracer/call_sites.h"

#include <pthread.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <new>

#include "absl/container/flat_hash_map.h"

namespace alloctrace {
namespace {

// The calling thread's stack, [lo, hi): found once per thread.
struct StackBounds {
  uintptr_t lo = 0;
  uintptr_t hi = 0;
  bool known = false;
};

// A direct-mapped cache per thread: hash -> id.
constexpr int kCacheEntries = 1024;
struct CacheEntry {
  uint64_t hash;
  uint32_t id;
};

// Everything per thread in one block: one TLS address per call.
struct PerThread {
  StackBounds bounds;
  CacheEntry cache[kCacheEntries];
};
thread_local PerThread tls_sites;

const StackBounds& ThreadStack() {
  StackBounds& b = tls_sites.bounds;
  if (!b.known) {
    b.known = true;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        b.lo = reinterpret_cast<uintptr_t>(addr);
        b.hi = b.lo + size;
      }
      pthread_attr_destroy(&attr);
    }
  }
  return b;
}

uint64_t HashFrames(const uint64_t* pcs, int n) {
  uint64_t h = 0x9e3779b97f4a7c15u ^ static_cast<uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    h ^= pcs[i];
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  return h | 1;  // 0 marks an empty cache entry
}

struct Registry {
  std::mutex mu;
  absl::flat_hash_map<uint64_t, uint32_t> ids;  // hash -> id
  std::deque<std::vector<uint64_t>> stacks;     // id - 1 -> frames
};

// Set once the registry exists, so a forked child can mend its lock
// without creating it (which would allocate inside the fork handler).
std::atomic<Registry*> g_registry{nullptr};

Registry& TheRegistry() {
  static Registry* const r = [] {
    auto* made = new Registry;  // never destroyed: used until exit
    g_registry.store(made);
    return made;
  }();
  return *r;
}

}  // namespace

int WalkFrames(const void* frame, uint64_t* pcs, int depth) {
  auto fp = reinterpret_cast<uintptr_t>(frame);
  const auto* words = reinterpret_cast<const uintptr_t*>(fp);
  pcs[0] = words[1];
  int n = 1;
  const StackBounds& b = ThreadStack();
  if (b.hi == 0) return n;
  while (n < depth) {
    const uintptr_t next = reinterpret_cast<const uintptr_t*>(fp)[0];
    // The caller's frame is above this one (the stack grows down), within
    // the stack, aligned; the two words read must fit below its top
    // (compared without adding to `next`, which a garbage register such as
    // -16 would wrap past the check).
    if (next <= fp || next < b.lo || next > b.hi - 2 * sizeof(uintptr_t) || (next & 7) != 0) {
      break;
    }
    fp = next;
    const uintptr_t pc = reinterpret_cast<const uintptr_t*>(fp)[1];
    // A frame pointer register used for data can lead here: a stack
    // address is never a return address.
    if (pc == 0 || (pc >= b.lo && pc < b.hi)) break;
    pcs[n++] = pc;
  }
  return n;
}

uint32_t InternStack(const uint64_t* pcs, int n) {
  const uint64_t h = HashFrames(pcs, n);
  CacheEntry& e = tls_sites.cache[h & (kCacheEntries - 1)];
  if (e.hash == h) return e.id;
  Registry& r = TheRegistry();
  uint32_t id;
  {
    std::lock_guard<std::mutex> l(r.mu);
    auto [it, inserted] = r.ids.try_emplace(h, static_cast<uint32_t>(r.stacks.size() + 1));
    if (inserted) r.stacks.emplace_back(pcs, pcs + n);
    id = it->second;
  }
  e = CacheEntry{h, id};
  return id;
}

bool StackFrames(uint32_t id, std::vector<uint64_t>* pcs) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  if (id == 0 || id > r.stacks.size()) return false;
  *pcs = r.stacks[id - 1];
  return true;
}

void ResetCallSitesAfterFork() {
  if (Registry* r = g_registry.load()) new (&r->mu) std::mutex();
}

}  // namespace alloctrace
