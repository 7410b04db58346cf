// More container shapes beside the sources' maps and sets: a churning
// std::list, a std::unordered_map whose bucket arrays are allocations too,
// and an order book whose containers are named classes.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_CONTAINER_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_CONTAINER_WORKLOADS_H_

#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <unordered_map>
#include <utility>

#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_support.h"

namespace alloctrace::workloads {

namespace container_internal {

// An iterator to a uniformly chosen element of a non-empty list, walking from
// the nearer end.
template <typename List>
typename List::iterator RandomPosition(List& list, WorkloadRng& rng) {
  const uint64_t size = list.size();
  const uint64_t index = rng.Below(size);
  if (index < size / 2) return std::next(list.begin(), static_cast<long>(index));
  return std::prev(list.end(), static_cast<long>(size - index));
}

struct Order {
  int price;
  int quantity;
};

}  // namespace container_internal

// The order book's classes of containers (tags: declared, never defined).
struct OrderIndex;
struct PriceLevels;

// list_churn: two std::list<int> of `initial` elements each, then
// `operations` random steps on a random one of them: push_front (20%),
// push_back (20%), erase at a random position (40%), or splice a random
// element to the front of the other list (20%). Splicing needs equal
// allocators, so the second list is built with a copy of the first one's:
// both lists share one arena.
template <template <typename> class Alloc>
void RunListChurn(const WorkloadParams& params, uint64_t seed) {
  using List = std::list<int, Alloc<int>>;
  const int64_t initial = params.Get("initial");
  const int64_t operations = params.Get("operations");
  WorkloadRng rng(seed);
  List a;
  List b(a.get_allocator());
  for (int64_t i = 0; i < initial; ++i) {
    a.push_back(rng.Key());
    b.push_back(rng.Key());
  }
  for (int64_t i = 0; i < operations; ++i) {
    const bool first = rng.Percent(50);
    List& list = first ? a : b;
    List& other = first ? b : a;
    const uint64_t roll = rng.Below(100);
    if (roll < 20 || (roll >= 40 && list.empty())) {
      list.push_front(rng.Key());
    } else if (roll < 40) {
      list.push_back(rng.Key());
    } else if (roll < 80) {
      list.erase(container_internal::RandomPosition(list, rng));
    } else {
      other.splice(other.begin(), list, container_internal::RandomPosition(list, rng));
    }
  }
}

// unordered_map: insert `entries` random keys from [0, 2 * entries) (the
// table rehashes as it grows), then `operations` random steps: look a key up
// (allocates nothing), insert one, or erase one, a third each; then rehash to
// four times the buckets, erase every other entry, and rehash to fit.
template <template <typename> class Alloc>
void RunUnorderedMap(const WorkloadParams& params, uint64_t seed) {
  using Map = std::unordered_map<int, int, std::hash<int>, std::equal_to<int>,
                                 Alloc<std::pair<const int, int>>>;
  const int64_t entries = params.Get("entries");
  const int64_t operations = params.Get("operations");
  const uint64_t key_range = 2 * static_cast<uint64_t>(entries);
  WorkloadRng rng(seed);
  auto random_key = [&] { return static_cast<int>(rng.Below(key_range)); };

  Map m;
  while (static_cast<int64_t>(m.size()) < entries) m.try_emplace(random_key(), 0);
  int64_t found = 0;
  for (int64_t i = 0; i < operations; ++i) {
    const uint64_t roll = rng.Below(3);
    const int key = random_key();
    if (roll == 0) {
      found += m.count(key);
    } else if (roll == 1) {
      m.try_emplace(key, static_cast<int>(i));
    } else {
      m.erase(key);
    }
  }
  DoNotOptimize(&found);
  m.rehash(m.bucket_count() * 4);
  bool erase = true;
  for (auto it = m.begin(); it != m.end(); erase = !erase) {
    it = erase ? m.erase(it) : std::next(it);
  }
  m.rehash(0);
}

// order_book: a limit order book, one side for bids and one for asks, each
// an index of its resting orders by id (std::map<int64_t, Order>, tagged
// OrderIndex) and the quantity resting at each price (std::map<int,
// int64_t>, tagged PriceLevels): two named classes of two arenas each
// (tracer/trace_allocator.h). `orders` random steps on a random side: add an
// order at one of `levels` prices (50%), cancel a random earlier order if it
// is still resting (30%), or fill the side's oldest order (20%); a price
// level goes when its last order does. Then everything is let go.
template <template <typename> class Alloc>
void RunOrderBook(const WorkloadParams& params, uint64_t seed) {
  using container_internal::Order;
  using Orders = std::map<int64_t, Order, std::less<int64_t>,
                          TaggedAllocator<Alloc, std::pair<const int64_t, Order>, OrderIndex>>;
  using Levels = std::map<int, int64_t, std::less<int>,
                          TaggedAllocator<Alloc, std::pair<const int, int64_t>, PriceLevels>>;
  struct Side {
    Orders orders;
    Levels levels;
    void Remove(typename Orders::iterator it) {
      auto level = levels.find(it->second.price);
      if ((level->second -= it->second.quantity) == 0) levels.erase(level);
      orders.erase(it);
    }
  };
  const int64_t steps = params.Get("orders");
  const int64_t prices = params.Get("levels");
  WorkloadRng rng(seed);
  Side sides[2];
  int64_t next_id = 0;
  for (int64_t i = 0; i < steps; ++i) {
    Side& side = sides[rng.Below(2)];
    const uint64_t roll = rng.Below(100);
    if (roll < 50 || next_id == 0) {
      const Order order{static_cast<int>(rng.Below(static_cast<uint64_t>(prices))),
                        static_cast<int>(1 + rng.Below(100))};
      side.orders.emplace(next_id++, order);
      side.levels[order.price] += order.quantity;
    } else if (roll < 80) {
      auto it = side.orders.find(static_cast<int64_t>(rng.Below(static_cast<uint64_t>(next_id))));
      if (it != side.orders.end()) side.Remove(it);
    } else if (!side.orders.empty()) {
      side.Remove(side.orders.begin());
    }
  }
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_CONTAINER_WORKLOADS_H_
