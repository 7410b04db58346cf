// Helpers shared by the pool tests (testonly).
#ifndef ALLOCTRACE_POOL_POOL_TEST_UTIL_H_
#define ALLOCTRACE_POOL_POOL_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace::pool::testing_util {

inline uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The blocks a test holds, by address. Add fails the test (a fatal
// failure: wrap it in ASSERT_NO_FATAL_FAILURE) if a block is misaligned or
// overlaps one held.
class LiveBlocks {
 public:
  void Add(void* p, size_t bytes, size_t align) {
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(Address(p) % align, 0u) << bytes << " bytes, align " << align;
    auto [it, inserted] = live_.emplace(Address(p), Block{bytes, align});
    ASSERT_TRUE(inserted);
    if (it != live_.begin()) {
      auto prev = std::prev(it);
      ASSERT_LE(prev->first + prev->second.bytes, it->first);
    }
    auto next = std::next(it);
    if (next != live_.end()) {
      ASSERT_LE(it->first + bytes, next->first);
    }
  }

  // Frees every block into `pool` with the size and alignment it was
  // allocated with.
  template <typename Pool>
  void FreeAll(Pool& pool) {
    for (const auto& [address, block] : live_) {
      pool.Deallocate(reinterpret_cast<void*>(address), block.bytes, block.align);
    }
    live_.clear();
  }

 private:
  struct Block {
    size_t bytes;
    size_t align;
  };
  std::map<uintptr_t, Block> live_;
};

// Uses `pool` (Allocate(bytes, align), Deallocate(p, bytes, align)) from 4
// threads at once: each allocates blocks of min_bytes to max_bytes bytes,
// fills each with its thread's number and frees at random (newest first),
// checking that no other thread wrote into a block it holds.
template <typename Pool>
void UseFromThreads(Pool& pool, size_t min_bytes, size_t max_bytes, size_t align) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t, min_bytes, max_bytes, align] {
      std::mt19937 rng(t);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < 20000; ++i) {
        if (live.empty() || rng() % 2 == 0) {
          const size_t bytes = min_bytes + rng() % (max_bytes - min_bytes + 1);
          auto* p = static_cast<unsigned char*>(pool.Allocate(bytes, align));
          ASSERT_NE(p, nullptr);
          std::memset(p, t, bytes);
          live.emplace_back(p, bytes);
        } else {
          auto [p, bytes] = live.back();
          live.pop_back();
          for (size_t b = 0; b < bytes; ++b) ASSERT_EQ(p[b], t);
          pool.Deallocate(p, bytes, align);
        }
      }
      for (auto [p, bytes] : live) pool.Deallocate(p, bytes, align);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace alloctrace::pool::testing_util

#endif  // ALLOCTRACE_POOL_POOL_TEST_UTIL_H_
