// The container workloads of Dr. Dobb's "Improving Performance with Custom
// Pool Allocators for STL" (2005): std::map and std::set of ints, each node
// one allocation from the container's own allocator; and swap_splice, the
// operations the article says need allocators that compare equal.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_MAP_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_MAP_WORKLOADS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <set>
#include <utility>

#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_support.h"

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

// swap_splice: nodes moving between containers, which is only correct when
// the allocator that frees a node is one equal to the allocator that made
// it. Four maps: maps 0 and 1 share one allocator (equal: swapping them
// moves nodes, the allocators stay equal), maps 2 and 3 have their own
// (swapping moves the allocators with the nodes: propagate_on_container_swap).
// Four lists share one allocator, as splice requires. Each map and list
// starts with `entries` elements; then `operations` random steps: insert
// into a map (25%), erase from a map (15%), std::swap two random maps (10%),
// replace a map by a fresh one of entries / 10 + 1 entries with its own
// allocator, moved in (1%: the old nodes go with the old allocator), push
// into a list (21%), erase from a
// list (10%), splice one element (10%), a range (5%) or a whole list (3%)
// into another list. Everything is freed when the containers go.
template <template <typename> class Alloc>
void RunSwapSplice(const WorkloadParams& params, uint64_t seed) {
  using List = std::list<int, Alloc<int>>;
  const int64_t entries = params.Get("entries");
  const int64_t operations = params.Get("operations");
  WorkloadRng rng(seed);

  IntMap<Alloc> m0;
  IntMap<Alloc> m1(m0.get_allocator());
  IntMap<Alloc> m2;
  IntMap<Alloc> m3;
  std::array<IntMap<Alloc>*, 4> maps = {&m0, &m1, &m2, &m3};
  List l0;
  std::array<List, 3> rest = {List(l0.get_allocator()), List(l0.get_allocator()),
                              List(l0.get_allocator())};
  std::array<List*, 4> lists = {&l0, &rest[0], &rest[1], &rest[2]};
  for (IntMap<Alloc>* m : maps) FillIntMap<Alloc>(*m, entries, rng);
  for (List* l : lists) {
    for (int64_t i = 0; i < entries; ++i) l->push_back(rng.Key());
  }
  auto random_position = [&rng](List& l) {
    return std::next(l.begin(), static_cast<long>(rng.Below(l.size())));
  };

  for (int64_t op = 0; op < operations; ++op) {
    const uint64_t roll = rng.Below(100);
    IntMap<Alloc>& m = *maps[rng.Below(4)];
    List& l = *lists[rng.Below(4)];
    List& other = *lists[rng.Below(4)];
    if (roll < 25) {
      m.try_emplace(rng.Key(), 0);
    } else if (roll < 40) {
      if (!m.empty()) {
        auto it = m.lower_bound(rng.Key());
        m.erase(it == m.end() ? m.begin() : it);
      }
    } else if (roll < 50) {
      IntMap<Alloc>& with = *maps[rng.Below(4)];
      if (&with != &m) std::swap(m, with);
    } else if (roll < 51) {
      IntMap<Alloc> fresh;
      FillIntMap<Alloc>(fresh, entries / 10 + 1, rng);
      m = std::move(fresh);
    } else if (roll < 72) {
      l.push_back(rng.Key());
    } else if (roll < 82) {
      if (!l.empty()) l.erase(random_position(l));
    } else if (&l == &other || l.empty()) {
      continue;
    } else if (roll < 92) {
      other.splice(other.begin(), l, random_position(l));
    } else if (roll < 97) {
      auto first = random_position(l);
      auto last = std::next(
          first,
          static_cast<long>(rng.Below(static_cast<uint64_t>(std::distance(first, l.end())) + 1)));
      other.splice(other.end(), l, first, last);
    } else {
      other.splice(other.begin(), l);
    }
  }
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_MAP_WORKLOADS_H_
