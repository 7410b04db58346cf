// An instrumented demo program for replayer --confirm: an LRU cache (a
// std::list in recency order and a std::unordered_map from key to list
// node), both on TraceAllocator, under a skewed stream of gets and puts.
//
//   ALLOCTRACE_OUT=lru.trace lru_cache_demo           # record a trace
//   replayer --confirm=3 lru.trace -- lru_cache_demo   # replay, then in situ
//
// usage: lru_cache_demo [OPS [CAPACITY]]; prints the hit count (stdout).
#include <cstdio>
#include <cstdlib>
#include <list>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>

#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/trace_allocator.h"

namespace {

template <typename T>
using A = alloctrace::TraceAllocator<T>;
using String = std::basic_string<char, std::char_traits<char>, A<char>>;

class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The value of `key`, made most recent; nullptr if absent.
  const String* Get(int key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Values share the list's allocator (and so its arena or pool): a string
  // that default-constructed its TraceAllocator would be an arena of its
  // own, a pool per string under a `stack` policy.
  void Put(int key, size_t length, char fill) {
    String value(length, fill, A<char>(order_.get_allocator()));
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  using Entry = std::pair<int, String>;
  using List = std::list<Entry, A<Entry>>;
  size_t capacity_;
  List order_;
  std::unordered_map<int, List::iterator, std::hash<int>, std::equal_to<int>,
                     A<std::pair<const int, List::iterator>>>
      index_;
};

}  // namespace

int main(int argc, char** argv) {
  const long ops = argc > 1 ? std::atol(argv[1]) : 1000000;
  const long capacity = argc > 2 ? std::atol(argv[2]) : 20000;
  if (ops <= 0 || capacity <= 0) {
    std::fprintf(stderr, "usage: lru_cache_demo [OPS [CAPACITY]]\n");
    return 2;
  }
  LruCache cache(static_cast<size_t>(capacity));
  std::mt19937 rng(42);
  // Keys skewed toward small numbers: a working set bigger than the cache.
  std::geometric_distribution<int> key_of(1.0 / (3.0 * static_cast<double>(capacity)));
  long hits = 0;
  for (long i = 0; i < ops; ++i) {
    const int key = key_of(rng);
    if (cache.Get(key) != nullptr) {
      ++hits;
    } else {
      // Values past the small-string buffer, so each is an allocation.
      cache.Put(key, 24 + key % 40, static_cast<char>('a' + key % 26));
    }
  }
  std::printf("%ld hits of %ld\n", hits, ops);
  return 0;
}
