// The four container workloads of Dr. Dobb's "Improving Performance with
// Custom Pool Allocators for STL" (2005): std::map and std::set of ints, each
// node one allocation from the container's own allocator.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_MAP_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_MAP_WORKLOADS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "tracer/workloads/workload_params.h"
#include "tracer/workloads/workload_support.h"

namespace alloctrace::workloads {

template <template <typename> class Alloc>
using IntMap = std::map<int, int, std::less<int>, Alloc<std::pair<const int, int>>>;

// Inserts random keys until `m` holds `entries` of them. try_emplace
// allocates nothing for a key already present, so this makes exactly
// `entries` node allocations.
template <template <typename> class Alloc>
void FillIntMap(IntMap<Alloc>& m, int64_t entries, WorkloadRng& rng) {
  while (static_cast<int64_t>(m.size()) < entries) {
    const int key = rng.Key();
    m.try_emplace(key, static_cast<int>(rng.Below(1 << 20)));
  }
}

// simple_map: fill a map with `entries` random keys, let it go out of scope.
template <template <typename> class Alloc>
void RunSimpleMap(const WorkloadParams& params, uint64_t seed) {
  WorkloadRng rng(seed);
  IntMap<Alloc> m;
  FillIntMap<Alloc>(m, params.Get("entries"), rng);
}

// fixed_priority_queue: a std::set of at most `capacity` ints. Of `inserts`
// random items, one arriving at a full set is inserted only if it is greater
// than the smallest, which is then erased.
template <template <typename> class Alloc>
void RunFixedPriorityQueue(const WorkloadParams& params, uint64_t seed) {
  const uint64_t capacity = params.Get("capacity");
  const int64_t inserts = params.Get("inserts");
  WorkloadRng rng(seed);
  std::set<int, std::less<int>, Alloc<int>> queue;
  for (int64_t i = 0; i < inserts; ++i) {
    const int item = rng.Key();
    if (queue.size() < capacity) {
      queue.insert(item);
    } else if (item > *queue.begin() && queue.insert(item).second) {
      queue.erase(queue.begin());
    }
  }
}

// remove_if: fill a map, then `passes` times erase every entry whose value
// matches a random predicate value % k == r (k in [2, 8]).
template <template <typename> class Alloc>
void RunRemoveIf(const WorkloadParams& params, uint64_t seed) {
  const int64_t passes = params.Get("passes");
  WorkloadRng rng(seed);
  IntMap<Alloc> m;
  FillIntMap<Alloc>(m, params.Get("entries"), rng);
  for (int64_t pass = 0; pass < passes; ++pass) {
    const int k = static_cast<int>(rng.Between(2, 8));
    const int r = static_cast<int>(rng.Below(k));
    for (auto it = m.begin(); it != m.end();) {
      if (it->second % k == r) {
        it = m.erase(it);
      } else {
        ++it;
      }
    }
  }
}

// random: fill a map, then `operations` times either insert a random key or
// erase the entry at or after a random key (50/50).
template <template <typename> class Alloc>
void RunRandomMap(const WorkloadParams& params, uint64_t seed) {
  const int64_t operations = params.Get("operations");
  WorkloadRng rng(seed);
  IntMap<Alloc> m;
  FillIntMap<Alloc>(m, params.Get("entries"), rng);
  for (int64_t i = 0; i < operations; ++i) {
    const int key = rng.Key();
    if (rng.Percent(50)) {
      m.try_emplace(key, key);
    } else if (!m.empty()) {
      auto it = m.lower_bound(key);
      m.erase(it == m.end() ? m.begin() : it);
    }
  }
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_MAP_WORKLOADS_H_
