#include "alloctrace/pool/pool.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "alloctrace/pool/pool_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

using SimplePool = Pool<StorageSimple, GrowthLinear, SingleThreaded>;

TEST(PoolTest, RoundsBlockSizesToTheAlignmentGranule) {
  EXPECT_EQ(SimplePool::BlockSize(0, 1), 8u);
  EXPECT_EQ(SimplePool::BlockSize(1, 1), 8u);
  EXPECT_EQ(SimplePool::BlockSize(8, 8), 8u);
  EXPECT_EQ(SimplePool::BlockSize(9, 4), 16u);
  EXPECT_EQ(SimplePool::BlockSize(24, 8), 24u);
  EXPECT_EQ(SimplePool::BlockSize(24, 16), 32u);
  EXPECT_EQ(SimplePool::BlockSize(8, 16), 16u);
  EXPECT_EQ(SimplePool::BlockSize(64, 16), 64u);
  EXPECT_TRUE(SimplePool::IsSmall(64, 16));
  EXPECT_FALSE(SimplePool::IsSmall(65, 8));
  EXPECT_FALSE(SimplePool::IsSmall(8, 32));
}

template <typename PoolT>
class PoolTypedTest : public ::testing::Test {};

using PoolTypes =
    ::testing::Types<Pool<StorageSimple, GrowthLinear, SingleThreaded>,
                     Pool<StorageBoundary, GrowthExponential, MultiThreaded>,
                     Pool<StorageOrdered, GrowthLinear, SingleThreaded, /*kDelete=*/false>,
                     Pool<StorageBoundary, GrowthLinear, SingleThreaded, true, 256>>;
TYPED_TEST_SUITE(PoolTypedTest, PoolTypes);

TYPED_TEST(PoolTypedTest, ServesEverySizeAndAlignmentWithoutOverlap) {
  TypeParam pool;
  testing_util::LiveBlocks live;
  for (size_t align : {1, 2, 4, 8, 16, 32, 64}) {
    for (size_t bytes = 0; bytes <= 300; bytes += (bytes < 80 ? 1 : 37)) {
      void* p = pool.Allocate(bytes, align);
      ASSERT_NO_FATAL_FAILURE(live.Add(p, bytes, align));
      std::memset(p, 0xab, bytes);
    }
  }
  live.FreeAll(pool);
  const PoolStats stats = pool.Stats();
  EXPECT_GT(stats.bunches, 1u);
  if (TypeParam::kFreesBlocks) {
    EXPECT_EQ(stats.large_blocks, 0u);
  }
}

TYPED_TEST(PoolTypedTest, ReusesFreedBlocksOnlyWhenItDeletes) {
  TypeParam pool;
  std::vector<void*> first;
  for (int i = 0; i < 500; ++i) first.push_back(pool.Allocate(40, 8));
  for (void* p : first) pool.Deallocate(p, 40, 8);
  const size_t chunks = pool.Stats().chunks;
  for (int i = 0; i < 500; ++i) ASSERT_NE(pool.Allocate(40, 8), nullptr);
  if (TypeParam::kFreesBlocks) {
    EXPECT_EQ(pool.Stats().chunks, chunks);
  } else {
    EXPECT_GT(pool.Stats().chunks, chunks);
  }
}

TYPED_TEST(PoolTypedTest, ReleaseAllFreesChunksAndLargeBlocks) {
  TypeParam pool;
  for (int i = 0; i < 300; ++i) {
    ASSERT_NE(pool.Allocate(i % 64 + 1, 8), nullptr);
    ASSERT_NE(pool.Allocate(1000, 64), nullptr);
  }
  EXPECT_EQ(pool.Stats().large_blocks, 300u);
  pool.ReleaseAll();
  const PoolStats stats = pool.Stats();
  EXPECT_EQ(stats.bunches, 0u);
  EXPECT_EQ(stats.chunks, 0u);
  EXPECT_EQ(stats.large_blocks, 0u);
  ASSERT_NE(pool.Allocate(16, 8), nullptr);  // Still usable.
  // Whatever is live now goes with the pool (the leak checker watches).
}

TEST(PoolTest, MaxSmallSizeIsConfigurable) {
  Pool<StorageSimple, GrowthLinear, SingleThreaded, true, 256> pool;
  void* p = pool.Allocate(200, 8);
  EXPECT_EQ(pool.Stats().large_blocks, 0u);
  EXPECT_EQ(pool.Stats().bunches, 1u);
  pool.Deallocate(p, 200, 8);
  SimplePool small;
  void* q = small.Allocate(200, 8);
  EXPECT_EQ(small.Stats().large_blocks, 1u);
  small.Deallocate(q, 200, 8);
  EXPECT_EQ(small.Stats().large_blocks, 0u);
}

TEST(PoolTest, BunchesStaySortedWhateverTheOrderOfFirstUse) {
  SimplePool pool;
  std::mt19937 rng(3);
  std::vector<std::pair<void*, size_t>> live;
  for (int i = 0; i < 5000; ++i) {
    const size_t bytes = 1 + rng() % 64;
    void* p = pool.Allocate(bytes, 8);
    std::memset(p, static_cast<int>(bytes), bytes);
    live.emplace_back(p, bytes);
  }
  EXPECT_EQ(pool.Stats().bunches, 8u);
  for (auto [p, bytes] : live) {
    ASSERT_EQ(static_cast<unsigned char*>(p)[bytes - 1], bytes);
    pool.Deallocate(p, bytes, 8);
  }
}

TEST(PoolTest, MultiThreadedPoolSurvivesConcurrentUse) {
  Pool<StorageOrdered, GrowthExponential, MultiThreaded> pool;
  testing_util::UseFromThreads(pool, 8, 97, 8);
  EXPECT_EQ(pool.Stats().large_blocks, 0u);
}

TEST(PoolDeathTest, FreeingWithASizeNeverServedDies) {
  SimplePool pool;
  void* p = pool.Allocate(16, 8);
  EXPECT_DEATH(pool.Deallocate(p, 40, 8), "never served");
  pool.Deallocate(p, 16, 8);
}

}  // namespace
}  // namespace alloctrace::pool
