#include "alloctrace/pool/slab_pool.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "alloctrace/pool/page_map.h"
#include "alloctrace/pool/pool_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

using testing_util::Address;

using Slab = SlabPool<SingleThreaded>;

TEST(SlabPoolTest, MapsSizesToClassesByArithmetic) {
  EXPECT_EQ(Slab::ClassIndex(0, 1), 1u);
  EXPECT_EQ(Slab::ClassIndex(1, 1), 1u);
  EXPECT_EQ(Slab::ClassIndex(8, 8), 1u);
  EXPECT_EQ(Slab::ClassIndex(9, 8), 2u);
  EXPECT_EQ(Slab::ClassIndex(24, 8), 3u);
  EXPECT_EQ(Slab::ClassIndex(24, 16), 4u);
  EXPECT_EQ(Slab::ClassIndex(40, 8), 5u);  // A std::map<int, int> node.
  EXPECT_EQ(Slab::ClassIndex(1, 64), 8u);
  EXPECT_EQ(Slab::ClassIndex(200, 32), 28u);
  EXPECT_EQ(Slab::ClassIndex(256, 8), 32u);
  EXPECT_EQ(Slab::ClassIndex(257, 8), Slab::kLargeClass);
  EXPECT_EQ(Slab::ClassIndex(1, 512), Slab::kLargeClass);
  EXPECT_EQ(Slab::ClassIndex(size_t{1} << 40, 8), Slab::kLargeClass);
  EXPECT_EQ(Slab::ClassBlockSize(5), 40u);
}

TEST(SlabPoolTest, HonorsEveryAlignmentWithoutOverlap) {
  Slab slab;
  testing_util::LiveBlocks live;
  for (size_t align = 1; align <= 512; align *= 2) {
    for (size_t bytes = 0; bytes <= 300; ++bytes) {
      void* p = slab.Allocate(bytes, align);
      ASSERT_NO_FATAL_FAILURE(live.Add(p, bytes, align));
      std::memset(p, 0x5a, bytes);
    }
  }
  live.FreeAll(slab);
}

TEST(SlabPoolTest, ReusesTheLastFreedBlockOfTheClass) {
  Slab slab;
  void* a = slab.Allocate(40, 8);
  void* b = slab.Allocate(40, 8);
  slab.Deallocate(a, 40, 8);
  slab.Deallocate(b, 37, 4);  // Same class.
  EXPECT_EQ(slab.Allocate(33, 1), b);
  EXPECT_EQ(slab.Allocate(40, 8), a);
  slab.Deallocate(a, 40, 8);
  slab.Deallocate(b, 40, 8);
}

TEST(SlabPoolTest, GivesEveryPageBackWhenDestroyedOrReleased) {
  const size_t before = MappedPageBytes();
  {
    Slab slab;
    for (int i = 0; i < 200000; ++i) ASSERT_NE(slab.Allocate(8 + i % 200, 8), nullptr);
    EXPECT_GT(slab.mapped_bytes(), 0u);
    EXPECT_EQ(MappedPageBytes() - before, slab.mapped_bytes());
    slab.ReleaseAll();
    EXPECT_EQ(MappedPageBytes(), before);
    ASSERT_NE(slab.Allocate(16, 8), nullptr);  // Usable again.
  }
  EXPECT_EQ(MappedPageBytes(), before);
}

TEST(SlabPoolTest, LargeRequestsGoToMalloc) {
  Slab slab;
  void* big = slab.Allocate(4096, 8);
  void* aligned = slab.Allocate(100, 1024);
  ASSERT_NE(big, nullptr);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(Address(aligned) % 1024, 0u);
  EXPECT_EQ(slab.mapped_bytes(), 0u);
  slab.Deallocate(big, 4096, 8);
  slab.Deallocate(aligned, 100, 1024);
}

// Releasing the pool frees the blocks on the malloc path too: a pool per
// container goes with its container (LeakSanitizer checks under ASan).
TEST(SlabPoolTest, ReleaseAllFreesLargeBlocksStillLive) {
  Slab slab;
  for (int i = 0; i < 10; ++i) ASSERT_NE(slab.Allocate(1000 + i, 8), nullptr);
  ASSERT_NE(slab.Allocate(64, 512), nullptr);
  slab.ReleaseAll();
  void* again = slab.Allocate(4096, 8);
  ASSERT_NE(again, nullptr);
  // Left live: the pool's destructor frees it.
}

TEST(SlabPoolTest, RandomChurnKeepsContents) {
  Slab slab;
  std::mt19937 rng(5);
  struct Block {
    unsigned char* p;
    size_t bytes;
    unsigned char tag;
  };
  std::vector<Block> live;
  for (int step = 0; step < 100000; ++step) {
    if (live.empty() || rng() % 100 < 52) {
      const size_t bytes = 1 + rng() % 300;
      auto* p = static_cast<unsigned char*>(slab.Allocate(bytes, 8));
      const auto tag = static_cast<unsigned char>(step);
      std::memset(p, tag, bytes);
      live.push_back({p, bytes, tag});
    } else {
      const size_t i = rng() % live.size();
      const Block block = live[i];
      for (size_t b = 0; b < block.bytes; ++b) ASSERT_EQ(block.p[b], block.tag);
      slab.Deallocate(block.p, block.bytes, 8);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (const Block& block : live) slab.Deallocate(block.p, block.bytes, 8);
}

TEST(SlabPoolTest, MultiThreadedSlabSurvivesConcurrentUse) {
  SlabPool<MultiThreaded> slab;
  testing_util::UseFromThreads(slab, 8, 307, 8);
}

}  // namespace
}  // namespace alloctrace::pool
