// The conformance suite every replay allocator passes, written once as a
// typed test suite and instantiated (conformance_*_test.cc) over the type
// lists of allocator_types.h, so a new allocator is tested by being listed.
//
// Checks: live blocks never overlap; alignment 1..64 is honored; contents
// written at allocation survive until the free; freed blocks are reused
// (where the allocator frees); Reallocate keeps contents; ArenaDestroyed on a
// Stack-holding pool releases the arena's blocks (the leak checker in
// `bazel test --config=asan` proves it); thread-safe allocators survive 4
// threads; and a random program of allocations, frees, reallocations and
// arena events runs against a reference model of the live blocks.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_CONFORMANCE_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_CONFORMANCE_H_

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/engine/allocators/allocator_types.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "gtest/gtest.h"

namespace alloctrace::allocators::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAsan = true;
#else
inline constexpr bool kUnderAsan = false;
#endif

// The gtest type list for one of our type lists.
template <typename List>
struct GtestTypesOf;
template <typename... A>
struct GtestTypesOf<TypeList<A...>> {
  using type = ::testing::Types<A...>;
};

// Test names from allocator names ("pool/simple/..." -> "pool_simple_...").
struct AllocatorTestName {
  template <typename A>
  static std::string GetName(int /*index*/) {
    std::string name = A::Info().name;
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return name;
  }
};

// A block as the tests remember it.
struct LiveBlock {
  unsigned char* p;
  size_t bytes;
  size_t align;
  uint32_t arena;
  uint32_t seed;
};

inline unsigned char PatternByte(uint32_t seed, size_t i) {
  return static_cast<unsigned char>((seed * 2654435761u) >> 24) ^
         static_cast<unsigned char>(i * 131 + seed);
}
inline void Fill(const LiveBlock& b) {
  for (size_t i = 0; i < b.bytes; ++i) b.p[i] = PatternByte(b.seed, i);
}
// Index of the first byte that lost its pattern, or b.bytes.
inline size_t FirstDamagedByte(const LiveBlock& b, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    if (b.p[i] != PatternByte(b.seed, i)) return i;
  }
  return bytes;
}

// Live address ranges, to catch overlapping blocks.
class AddressRanges {
 public:
  // False if [p, p + max(bytes, 1)) overlaps a live range.
  bool Insert(const void* p, size_t bytes) {
    const uintptr_t start = reinterpret_cast<uintptr_t>(p);
    const uintptr_t end = start + std::max<size_t>(bytes, 1);
    auto next = ranges_.lower_bound(start);
    if (next != ranges_.end() && next->first < end) return false;
    if (next != ranges_.begin() && std::prev(next)->second > start) return false;
    ranges_.emplace(start, end);
    return true;
  }
  void Erase(const void* p) { ranges_.erase(reinterpret_cast<uintptr_t>(p)); }

 private:
  std::map<uintptr_t, uintptr_t> ranges_;  // start -> end
};

// Whether small blocks come straight from the process malloc, whose freed
// blocks ASan quarantines instead of reusing.
template <typename A>
inline constexpr bool kSmallBlocksFromSystemMalloc =
    std::is_same_v<A, MallocAllocator> || std::is_same_v<A, NewAllocator>;

template <typename A>
class AllocatorConformanceTest : public ::testing::Test {
 protected:
  // A fresh allocator per test (some types allow one live instance).
  std::unique_ptr<A> allocator_ = std::make_unique<A>();
  A& a() { return *allocator_; }

  LiveBlock Allocate(size_t bytes, size_t align, uint32_t arena, uint32_t seed) {
    void* p = a().Allocate(bytes, align, arena);
    EXPECT_NE(p, nullptr);
    LiveBlock block{static_cast<unsigned char*>(p), bytes, align, arena, seed};
    if (p != nullptr) Fill(block);
    return block;
  }
  void Free(const LiveBlock& b) {
    EXPECT_EQ(FirstDamagedByte(b, b.bytes), b.bytes)
        << "contents damaged in a block of " << b.bytes << " bytes";
    a().Deallocate(b.p, b.bytes, b.align, b.arena);
  }
};

TYPED_TEST_SUITE_P(AllocatorConformanceTest);

TYPED_TEST_P(AllocatorConformanceTest, InfoIsComplete) {
  const AllocatorInfo info = TypeParam::Info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.name.find_first_of(" ,*?[]\t"), std::string::npos) << info.name;
  EXPECT_TRUE(info.family == Family::kBaseline || info.family == Family::kArticle ||
              info.family == Family::kOurs)
      << WordOf(kFamilyWords, info.family);
  EXPECT_FALSE(info.description.empty());
  static_assert(IsReplayAllocator<TypeParam>::value);
}

TYPED_TEST_P(AllocatorConformanceTest, BlocksNeverOverlapAndKeepContents) {
  std::mt19937 rng(1);
  this->a().ArenaCreated(1);
  AddressRanges ranges;
  std::vector<LiveBlock> live;
  for (uint32_t i = 0; i < 3000; ++i) {
    const size_t bytes = rng() % 201;  // 0..200: small and malloc paths.
    const LiveBlock b = this->Allocate(bytes, 8, i % 2, i);
    ASSERT_NE(b.p, nullptr);
    ASSERT_TRUE(ranges.Insert(b.p, bytes)) << "overlap at block " << i;
    live.push_back(b);
  }
  std::shuffle(live.begin(), live.end(), rng);
  for (const LiveBlock& b : live) this->Free(b);
  this->a().ArenaDestroyed(1);
}

TYPED_TEST_P(AllocatorConformanceTest, HonorsAlignment) {
  std::vector<LiveBlock> live;
  AddressRanges ranges;
  uint32_t seed = 0;
  for (size_t align : {1, 2, 4, 8, 16, 32, 64}) {
    for (size_t bytes :
         {size_t{0}, size_t{1}, size_t{3}, size_t{8}, size_t{16}, size_t{24}, size_t{40},
          size_t{64}, size_t{65}, size_t{100}, size_t{200}, align, 3 * align}) {
      for (int copy = 0; copy < 3; ++copy) {
        const LiveBlock b = this->Allocate(bytes, align, 0, ++seed);
        ASSERT_NE(b.p, nullptr);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(b.p) % align, 0u)
            << bytes << " bytes aligned to " << align;
        ASSERT_TRUE(ranges.Insert(b.p, bytes));
        live.push_back(b);
      }
    }
  }
  for (const LiveBlock& b : live) this->Free(b);
}

TYPED_TEST_P(AllocatorConformanceTest, ReusesFreedBlocks) {
  if (!TypeParam::kReusesFreedBlocks) {
    GTEST_SKIP() << "frees are no-ops by design";
  }
  if (kUnderAsan && kSmallBlocksFromSystemMalloc<TypeParam>) {
    GTEST_SKIP() << "ASan quarantines blocks freed to malloc";
  }
  // Rounds of allocating and freeing 200 blocks: an allocator that reuses
  // freed memory keeps handing out the same few hundred addresses, one that
  // does not needs 200 new ones every round.
  constexpr int kRounds = 30;
  constexpr uint32_t kBlocks = 200;
  // Node sizes within every pool's small limit (the article's is 64 bytes):
  // beyond it pools pass blocks to malloc, which ASan quarantines.
  for (size_t bytes : {16, 40, 48, 64}) {
    std::set<uintptr_t> addresses;
    for (int round = 0; round < kRounds; ++round) {
      std::vector<LiveBlock> blocks;
      for (uint32_t i = 0; i < kBlocks; ++i) {
        blocks.push_back(this->Allocate(bytes, 8, 0, i));
        addresses.insert(reinterpret_cast<uintptr_t>(blocks.back().p));
      }
      for (const LiveBlock& b : blocks) this->Free(b);
    }
    EXPECT_LE(addresses.size(), 4 * kBlocks) << bytes << "-byte blocks";
  }
}

TYPED_TEST_P(AllocatorConformanceTest, ReallocateKeepsContents) {
  for (size_t align : {8, 16, 64}) {
    for (uint32_t arena : {0u, 3u}) {
      this->a().ArenaCreated(arena);
      LiveBlock b = this->Allocate(24, align, arena, 7);
      for (size_t new_bytes : {100, 40, 300, 10, 64, 1000, 24}) {
        void* q = this->a().Reallocate(b.p, b.bytes, new_bytes, align, arena);
        ASSERT_NE(q, nullptr);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(q) % align, 0u);
        b.p = static_cast<unsigned char*>(q);
        const size_t kept = std::min(b.bytes, new_bytes);
        ASSERT_EQ(FirstDamagedByte(b, kept), kept) << b.bytes << " -> " << new_bytes << " bytes";
        b.bytes = new_bytes;
        Fill(b);
      }
      this->Free(b);
      this->a().ArenaDestroyed(arena);
    }
  }
}

TYPED_TEST_P(AllocatorConformanceTest, ArenaDestroyedReleasesItsBlocks) {
  std::mt19937 rng(2);
  std::vector<LiveBlock> in_arena[3];
  this->a().ArenaCreated(1);
  this->a().ArenaCreated(2);
  uint32_t seed = 0;
  for (int i = 0; i < 600; ++i) {
    const uint32_t arena = i % 3;
    const size_t bytes = i % 20 == 0 ? 500 : 1 + rng() % 96;
    in_arena[arena].push_back(this->Allocate(bytes, 8, arena, ++seed));
  }
  if (TypeParam::kArenaReleasesBlocks) {
    this->a().ArenaDestroyed(1);  // Its blocks go with it: no frees.
  } else {
    for (const LiveBlock& b : in_arena[1]) this->Free(b);
    this->a().ArenaDestroyed(1);
  }
  // Other arenas are untouched.
  for (uint32_t arena : {0u, 2u}) {
    for (const LiveBlock& b : in_arena[arena]) {
      ASSERT_EQ(FirstDamagedByte(b, b.bytes), b.bytes);
    }
  }
  // The id can be used again.
  this->a().ArenaCreated(1);
  const LiveBlock again = this->Allocate(40, 8, 1, 99);
  ASSERT_NE(again.p, nullptr);
  this->Free(again);
  if (TypeParam::kArenaReleasesBlocks) {
    // Stack holding: arena 2 goes with its event and arena 0 with the
    // allocator; the leak checker sees anything left behind.
    this->a().ArenaDestroyed(2);
    this->a().ArenaDestroyed(1);
    this->allocator_.reset();
  } else {
    for (uint32_t arena : {0u, 2u}) {
      for (const LiveBlock& b : in_arena[arena]) this->Free(b);
    }
  }
}

TYPED_TEST_P(AllocatorConformanceTest, SurvivesConcurrentUse) {
  if (!TypeParam::kThreadSafe) GTEST_SKIP() << "not thread-safe by design";
  constexpr int kThreads = 4;
  constexpr int kStepsPerThread = 20000;
  for (uint32_t arena = 1; arena <= kThreads; ++arena) {
    this->a().ArenaCreated(arena);
  }
  std::mutex mailbox_mutex;
  std::vector<LiveBlock> mailbox;  // Blocks freed by another thread.
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      TypeParam& a = this->a();
      std::mt19937 rng(100 + t);
      const uint32_t arena = t % 2 == 0 ? 0 : t;  // Threads 0, 2 share arena 0.
      std::vector<LiveBlock> live;
      auto free_block = [&](const LiveBlock& b) {
        if (FirstDamagedByte(b, b.bytes) != b.bytes) ++failures[t];
        a.Deallocate(b.p, b.bytes, b.align, b.arena);
      };
      for (int step = 0; step < kStepsPerThread; ++step) {
        const uint32_t r = rng() % 100;
        if (live.empty() || r < 50) {
          LiveBlock b{nullptr, 1 + rng() % 150, 8, arena,
                      static_cast<uint32_t>(t * kStepsPerThread + step)};
          b.p = static_cast<unsigned char*>(a.Allocate(b.bytes, b.align, arena));
          if (b.p == nullptr) {
            ++failures[t];
            continue;
          }
          Fill(b);
          live.push_back(b);
        } else {
          const size_t i = rng() % live.size();
          const LiveBlock b = live[i];
          live[i] = live.back();
          live.pop_back();
          if (r < 60) {  // Hand it to whichever thread looks next.
            std::lock_guard<std::mutex> lock(mailbox_mutex);
            mailbox.push_back(b);
          } else {
            free_block(b);
          }
        }
        if (step % 16 == 0) {
          std::vector<LiveBlock> taken;
          {
            std::lock_guard<std::mutex> lock(mailbox_mutex);
            taken.swap(mailbox);
          }
          for (const LiveBlock& b : taken) free_block(b);
        }
      }
      for (const LiveBlock& b : live) free_block(b);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const LiveBlock& b : mailbox) this->Free(b);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// The same random program against the allocator and a model of the live
// blocks (address ranges and contents).
TYPED_TEST_P(AllocatorConformanceTest, RandomProgramMatchesReferenceModel) {
  std::mt19937 rng(3);
  constexpr int kSteps = 100000;
  constexpr uint32_t kMaxArena = 12;
  std::vector<LiveBlock> live;
  AddressRanges ranges;
  std::vector<bool> arena_exists(kMaxArena + 1, false);
  arena_exists[0] = true;
  std::vector<uint32_t> arenas = {0};  // Existing arenas.
  auto remove_live = [&](size_t i) {
    ranges.Erase(live[i].p);
    live[i] = live.back();
    live.pop_back();
  };
  for (int step = 0; step < kSteps; ++step) {
    const uint32_t r = rng() % 1000;
    if (live.empty() || r < 500) {
      // Mostly node sizes, some over the article's 64-byte limit, a few
      // over-aligned.
      const size_t bytes = 1 + rng() % 200;
      const uint32_t a = rng() % 100;
      const size_t align = a < 80 ? 8 : a < 95 ? 16 : a < 98 ? 32 : 64;
      const uint32_t arena = arenas[rng() % arenas.size()];
      const LiveBlock b = this->Allocate(bytes, align, arena, step);
      ASSERT_NE(b.p, nullptr);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(b.p) % align, 0u);
      ASSERT_TRUE(ranges.Insert(b.p, bytes)) << "overlap at step " << step;
      live.push_back(b);
    } else if (r < 900) {
      const size_t i = rng() % live.size();
      const LiveBlock b = live[i];
      ASSERT_EQ(FirstDamagedByte(b, b.bytes), b.bytes) << "at step " << step;
      this->a().Deallocate(b.p, b.bytes, b.align, b.arena);
      remove_live(i);
    } else if (r < 960) {
      const size_t i = rng() % live.size();
      LiveBlock b = live[i];
      const size_t new_bytes = 1 + rng() % 200;
      void* q = this->a().Reallocate(b.p, b.bytes, new_bytes, b.align, b.arena);
      ASSERT_NE(q, nullptr);
      remove_live(i);
      b.p = static_cast<unsigned char*>(q);
      const size_t kept = std::min(b.bytes, new_bytes);
      ASSERT_EQ(FirstDamagedByte(b, kept), kept) << "at step " << step;
      b.bytes = new_bytes;
      b.seed = step;
      Fill(b);
      ASSERT_TRUE(ranges.Insert(b.p, b.bytes)) << "overlap at step " << step;
      live.push_back(b);
    } else if (r < 985) {
      const uint32_t arena = 1 + rng() % kMaxArena;
      if (!arena_exists[arena]) {
        this->a().ArenaCreated(arena);
        arena_exists[arena] = true;
        arenas.push_back(arena);
      }
    } else if (arenas.size() > 1) {
      const size_t k = 1 + rng() % (arenas.size() - 1);
      const uint32_t arena = arenas[k];
      for (size_t i = live.size(); i-- > 0;) {
        if (live[i].arena != arena) continue;
        if (!TypeParam::kArenaReleasesBlocks) {
          ASSERT_EQ(FirstDamagedByte(live[i], live[i].bytes), live[i].bytes);
          this->a().Deallocate(live[i].p, live[i].bytes, live[i].align, arena);
        }
        remove_live(i);
      }
      this->a().ArenaDestroyed(arena);
      arena_exists[arena] = false;
      arenas.erase(arenas.begin() + k);
    }
  }
  for (const LiveBlock& b : live) this->Free(b);
}

REGISTER_TYPED_TEST_SUITE_P(AllocatorConformanceTest, InfoIsComplete,
                            BlocksNeverOverlapAndKeepContents, HonorsAlignment, ReusesFreedBlocks,
                            ReallocateKeepsContents, ArenaDestroyedReleasesItsBlocks,
                            SurvivesConcurrentUse, RandomProgramMatchesReferenceModel);

}  // namespace alloctrace::allocators::testing

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_CONFORMANCE_H_
