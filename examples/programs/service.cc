// service: a multi-threaded message service, written as a user would write
// one, with one allocator alias per container role below, so that each role
// can be given its own allocator.
//
//   service [threads [ops_per_thread [registry_keys]]]
//       defaults: 2, 1000000 and 4096
//
// Each worker thread owns its working set: an index of in-flight messages
// (a std::map, role WorkerIndex) and a queue of the most recent keys (a
// std::list, role WorkerQueue), churned on every operation: a key drawn
// from the worker's own deterministic random source is looked up and, if
// present, completed (erased); if absent, a message is inserted and its key
// queued, and past 1024 queued keys the oldest is retired from both. One
// operation in 16 also updates the registry shared by all threads (a
// std::map of registry_keys keys to signed counts, role Registry) the way
// services keep a critical section short: the node is made OUTSIDE the lock
// (in a per-worker staging map that shares the registry's allocator) and
// spliced in under a std::mutex, so the registry's allocator is called by
// several threads at once. Prints a checksum that does not depend on how the
// threads interleave.
//
// The roles want different allocators: the per-thread containers a
// single-threaded pool per container (slab/st/stack), the registry a
// thread-safe one or std. A single-threaded policy is unsafe for the
// registry, and a single-threaded `single` policy (one pool for the process)
// unsafe for any role here, since the workers would share it:
//   ALLOCTRACE_POLICY='WorkerIndex=slab/st/stack;WorkerQueue=slab/st/stack;Registry=slab/mt/stack;*=std'
// The defaults take about 0.5 s of CPU (0.3 s on 2 idle cores) under
// ALLOCTRACE_POLICY=std (measured on this project's loaded 2-core machine);
// raise `ops_per_thread` for longer runs.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits; the trace's
// class table names the three roles.
//
// To adopt a verdict, change the alias of that role only. Each must be a
// default-constructible std allocator template; Registry's must be safe to
// call from several threads at once.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the aliases
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the aliases

// The roles (declared only: they name the classes in the trace and in
// ALLOCTRACE_POLICY).
struct WorkerIndex;
struct WorkerQueue;
struct Registry;

// The lines to change to adopt a per-role verdict, e.g.
//   template <class T> using WorkerIndexAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::SingleThreaded, alloctrace::pool::HoldingStack>;
//   template <class T> using RegistryAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::MultiThreaded, alloctrace::pool::HoldingStack>;
#ifdef ALLOCTRACE_ALIASES
// The lines a search in the program proves, pasted by its build
// (replayer --shipped_build; tools/shipped_build.sh passes them as
// -DALLOCTRACE_ALIASES=...): the build a user would ship.
ALLOCTRACE_ALIASES
#else
template <class T>
using WorkerIndexAlloc = alloctrace::TraceAllocator<T, WorkerIndex>;
template <class T>
using WorkerQueueAlloc = alloctrace::TraceAllocator<T, WorkerQueue>;
template <class T>
using RegistryAlloc = alloctrace::TraceAllocator<T, Registry>;
#endif

namespace {

constexpr size_t kQueueLength = 1024;
constexpr uint64_t kRegistryEvery = 16;

struct Msg {
  uint64_t id;
  uint64_t sequence;
  uint64_t payload[4];
};

using Index =
    std::map<uint64_t, Msg, std::less<uint64_t>, WorkerIndexAlloc<std::pair<const uint64_t, Msg>>>;
using Queue = std::list<uint64_t, WorkerQueueAlloc<uint64_t>>;
using RegistryMap = std::map<uint64_t, int64_t, std::less<uint64_t>,
                             RegistryAlloc<std::pair<const uint64_t, int64_t>>>;

struct SharedRegistry {
  std::mutex mu;
  RegistryMap map;
};

// One worker's operations; returns its checksum.
uint64_t Work(int worker, long ops, uint64_t registry_keys, SharedRegistry* registry) {
  std::mt19937_64 rng(1000 + static_cast<uint64_t>(worker));
  const uint64_t key_space = 4 * kQueueLength;
  Index index;
  Queue recent;
  // Registry nodes are made here, outside the lock, with the registry's
  // allocator (a copy: the same arena, the same pool).
  RegistryMap staging(registry->map.get_allocator());
  uint64_t checksum = 0;
  for (long op = 0; op < ops; ++op) {
    const uint64_t r = rng();
    const uint64_t key = r % key_space;
    auto it = index.find(key);
    if (it != index.end()) {
      checksum += it->second.sequence + it->second.payload[3];
      index.erase(it);
    } else {
      const uint64_t s = static_cast<uint64_t>(op);
      index.emplace(key, Msg{key, s, {r, r >> 8, r >> 16, r >> 24}});
      recent.push_back(key);
      if (recent.size() > kQueueLength) {
        checksum += index.erase(recent.front());
        recent.pop_front();
      }
    }
    if (op % kRegistryEvery == 0) {
      const uint64_t rkey = (r >> 20) % registry_keys;
      const int64_t delta = (r >> 60) & 1 ? 1 : -1;
      staging.emplace(rkey, delta);
      {
        std::lock_guard<std::mutex> lock(registry->mu);
        // Moves the node in if the key is new; else it stays in staging.
        // (Not extract + insert(node): libstdc++ 12's insert of a node
        // handle never destroys the handle's copy of the allocator.)
        registry->map.merge(staging);
        if (!staging.empty()) {
          auto entry = registry->map.find(rkey);
          entry->second += delta;
          if (entry->second == 0) registry->map.erase(entry);
        }
      }
      staging.clear();  // a node not moved in is freed here, outside the lock
    }
  }
  for (const auto& [key, msg] : index) checksum += key ^ msg.sequence;
  return checksum;
}

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr,
                 "usage: service [threads [ops_per_thread [registry_keys]]] (integers >= 1)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long threads = Arg(argc, argv, 1, 2);
  const long ops = Arg(argc, argv, 2, 1000000);
  const long registry_keys = Arg(argc, argv, 3, 4096);
  if (threads > 256) {
    std::fprintf(stderr, "service: at most 256 threads, not %ld\n", threads);
    return 2;
  }
  uint64_t checksum = 0;
  size_t registered = 0;
  {
    SharedRegistry registry;
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    std::vector<std::thread> workers;
    for (long t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        sums[static_cast<size_t>(t)] =
            Work(static_cast<int>(t), ops, static_cast<uint64_t>(registry_keys), &registry);
      });
    }
    for (std::thread& w : workers) w.join();
    for (uint64_t s : sums) checksum += s;
    // The registry's final counts are sums, whatever the interleaving.
    for (const auto& [key, count] : registry.map) {
      checksum += key * static_cast<uint64_t>(count);
    }
    registered = registry.map.size();
  }
  std::printf(
      "service: %ld threads x %ld operations, %ld registry keys: %zu registered, "
      "checksum %llu\n",
      threads, ops, registry_keys, registered, static_cast<unsigned long long>(checksum));
  return 0;
}
