#include "alloctrace/tracer/handle_store.h"

#include <pthread.h>
#include <sys/mman.h>

#include <mutex>
#include <new>

namespace alloctrace::handle_store_internal {
namespace {

constexpr size_t kMappingBytes = size_t{1} << 16;

// The process-wide free list. The lock is held across fork(), so a child
// never inherits it taken.
struct Shared {
  std::mutex mu;
  FreeList free;  // guarded by mu
};

Shared& TheShared() {
  static Shared* const shared = [] {
    auto* s = new Shared;
    pthread_atfork([] { TheShared().mu.lock(); }, [] { TheShared().mu.unlock(); },
                   [] { TheShared().mu.unlock(); });
    return s;
  }();
  return *shared;
}

// Moves every block of `from` to the front of `to`.
void Splice(FreeList& from, FreeList& to) {
  if (from.head == nullptr) return;
  *static_cast<void**>(from.tail) = to.head;
  if (to.head == nullptr) to.tail = from.tail;
  to.head = from.head;
  to.count += from.count;
  from = FreeList{};
}

void AtThreadExit(void* cache) {
  auto& c = *static_cast<ThreadCache*>(cache);
  // A handle given or taken later in the thread's exit (another exit hook
  // destroying a container) sets the hook again, and it runs again.
  c.registered = false;
  // The rest of the thread's mapping, as free blocks.
  for (; c.next != c.end; c.next += kBlockBytes) Push(c.free, c.next);
  Shared& s = TheShared();
  std::lock_guard<std::mutex> l(s.mu);
  Splice(c.free, s.free);
}

// Sets the calling thread's exit hook once: a thread-specific key's
// destructor (a thread_local with a destructor would cost a guard on every
// access).
void Register(ThreadCache& c) {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    pthread_key_create(&k, &AtThreadExit);
    return k;
  }();
  if (pthread_setspecific(key, &c) == 0) c.registered = true;
}

}  // namespace

void* TakeSlow(ThreadCache& c) {
  if (!c.registered) Register(c);
  {
    Shared& s = TheShared();
    std::lock_guard<std::mutex> l(s.mu);
    Splice(s.free, c.free);
  }
  if (void* p = Pop(c.free); p != nullptr) return p;
  void* m =
      mmap(nullptr, kMappingBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  c.next = static_cast<char*>(m) + kBlockBytes;
  c.end = static_cast<char*>(m) + kMappingBytes;
  return m;
}

void GiveBack(ThreadCache& c) {
  if (!c.registered) {
    Register(c);
    if (c.free.count <= kMaxCached) return;
  }
  Shared& s = TheShared();
  std::lock_guard<std::mutex> l(s.mu);
  Splice(c.free, s.free);
}

uint32_t SharedCount() {
  Shared& s = TheShared();
  std::lock_guard<std::mutex> l(s.mu);
  return s.free.count;
}

}  // namespace alloctrace::handle_store_internal
