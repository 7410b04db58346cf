// lru_cache: a least-recently-used cache, written as a user would write one,
// with every container on the allocator named by the alias below.
//
//   lru_cache [operations [capacity]]     defaults: 2000000 and 20000
//
// Each operation looks up a key drawn from 4 x capacity keys (skewed: half
// the lookups go to the first eighth); a hit moves the key to the front of
// the recency list, a miss inserts it with a payload of 32 to 256 bytes and,
// when full, evicts the least recently used key. Beside the cache, a
// std::set of the cached keys' names: each name is a std::basic_string over
// Alloc<char> whose allocator is default-constructed, so with
// TraceAllocator every string is an arena of its own (an operation makes at
// least one: 100k operations, 100k+ arenas). Prints hits, misses and a
// checksum. The defaults take about 0.9 s of CPU with std::allocator
// (measured on this project's loaded 2-core machine); raise `operations` for
// longer runs.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits.
//
// To run on another allocator, change only the alias. It must be a
// default-constructible std allocator template; the program is
// single-threaded.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the alias
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the alias

// The one line to change to run on another allocator, e.g.
//   using Alloc = std::allocator<T>;
//   using Alloc = alloctrace::pool::SlabAllocator<T>;
template <class T>
using Alloc = alloctrace::TraceAllocator<T>;

namespace {

using String = std::basic_string<char, std::char_traits<char>, Alloc<char>>;
using Payload = std::vector<char, Alloc<char>>;

// A key's name, long enough that the string is on the heap (no small-string
// buffer), built in a string with its own default-constructed allocator.
String NameOf(uint64_t key) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "customer-%012llu-profile", static_cast<unsigned long long>(key));
  return String(buf);
}

class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The payload of `key`; on a miss, a new one of `payload_size` bytes.
  const Payload& Get(uint64_t key, size_t payload_size) {
    auto it = map_.find(key);
    if (it != map_.end()) {
      ++hits_;
      recency_.splice(recency_.begin(), recency_, it->second.position);
      return it->second.payload;
    }
    ++misses_;
    if (map_.size() == capacity_) Evict();
    recency_.push_front(key);
    names_.insert(NameOf(key));
    Entry entry{Payload(payload_size, static_cast<char>(key)), recency_.begin()};
    return map_.emplace(key, std::move(entry)).first->second.payload;
  }

  bool HasName(uint64_t key) const { return names_.count(NameOf(key)) != 0; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Entry {
    Payload payload;
    std::list<uint64_t, Alloc<uint64_t>>::iterator position;
  };

  void Evict() {
    const uint64_t victim = recency_.back();
    recency_.pop_back();
    map_.erase(victim);
    names_.erase(NameOf(victim));
  }

  const size_t capacity_;
  std::list<uint64_t, Alloc<uint64_t>> recency_;  // most recent first
  std::unordered_map<uint64_t, Entry, std::hash<uint64_t>, std::equal_to<uint64_t>,
                     Alloc<std::pair<const uint64_t, Entry>>>
      map_;
  std::set<String, std::less<String>, Alloc<String>> names_;
  uint64_t hits_ = 0, misses_ = 0;
};

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "usage: lru_cache [operations [capacity]] (integers >= 1)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long operations = Arg(argc, argv, 1, 2000000);
  const long capacity = Arg(argc, argv, 2, 20000);
  const uint64_t keys = 4 * static_cast<uint64_t>(capacity);
  std::mt19937_64 rng(42);
  uint64_t checksum = 0;
  {
    LruCache cache(static_cast<size_t>(capacity));
    for (long i = 0; i < operations; ++i) {
      const uint64_t r = rng();
      const uint64_t key = (r & 1) ? (r >> 1) % (keys / 8 + 1) : (r >> 1) % keys;
      const Payload& p = cache.Get(key, 32 + (r >> 40) % 225);
      checksum += p.size() + static_cast<unsigned char>(p[0]);
      if (i % 64 == 0) checksum += cache.HasName(key);
    }
    std::printf("lru_cache: %ld operations, capacity %ld: %llu hits, %llu misses, checksum %llu\n",
                operations, capacity, static_cast<unsigned long long>(cache.hits()),
                static_cast<unsigned long long>(cache.misses()),
                static_cast<unsigned long long>(checksum));
  }
  return 0;
}
