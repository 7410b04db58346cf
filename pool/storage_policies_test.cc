#include "alloctrace/pool/storage_policies.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "alloctrace/pool/bunch.h"
#include "alloctrace/pool/policies.h"
#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

template <typename Storage>
class StoragePolicyTest : public ::testing::Test {};

using StorageTypes = ::testing::Types<StorageSimple, StorageBoundary, StorageOrdered>;
TYPED_TEST_SUITE(StoragePolicyTest, StorageTypes);

TYPED_TEST(StoragePolicyTest, GrowsByChunksAndReusesFreedBlocks) {
  Bunch<TypeParam, GrowthLinear> bunch(32);
  std::vector<void*> blocks;
  std::set<uintptr_t> distinct;
  for (int i = 0; i < 1000; ++i) {
    void* p = bunch.Allocate();
    ASSERT_NE(p, nullptr);
    blocks.push_back(p);
    distinct.insert(Address(p));
  }
  EXPECT_EQ(distinct.size(), 1000u);
  EXPECT_EQ(bunch.chunk_count(), 4u);  // ceil(1000 / 255)
  std::mt19937 rng(7);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  for (void* p : blocks) bunch.Deallocate(p);
  EXPECT_EQ(bunch.free_blocks(), 4u * 255);
  for (int i = 0; i < 1020; ++i) ASSERT_NE(bunch.Allocate(), nullptr);
  EXPECT_EQ(bunch.chunk_count(), 4u);
  EXPECT_EQ(bunch.free_blocks(), 0u);
}

TYPED_TEST(StoragePolicyTest, RandomChurnNeverHandsOutALiveBlock) {
  Bunch<TypeParam, GrowthExponential> bunch(48);
  std::mt19937 rng(11);
  std::vector<void*> live;
  std::set<uintptr_t> live_set;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      void* p = bunch.Allocate();
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(live_set.insert(Address(p)).second) << "block handed out twice";
      live.push_back(p);
    } else {
      const size_t i = rng() % live.size();
      bunch.Deallocate(live[i]);
      live_set.erase(Address(live[i]));
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (void* p : live) bunch.Deallocate(p);
  // Every block of every chunk is free again: 16, 32, 64, ... blocks.
  size_t capacity = 0;
  uint32_t blocks = GrowthExponential::FirstChunkBlocks(48);
  for (size_t c = 0; c < bunch.chunk_count(); ++c) {
    capacity += blocks;
    blocks = GrowthExponential::NextChunkBlocks(blocks, 48);
  }
  EXPECT_EQ(bunch.free_blocks(), capacity);
}

TYPED_TEST(StoragePolicyTest, SurvivesMovesOfTheBunch) {
  Bunch<TypeParam, GrowthLinear> first(16);
  std::vector<void*> blocks;
  for (int i = 0; i < 3 * 255; ++i) blocks.push_back(first.Allocate());
  first.Deallocate(blocks[3]);
  Bunch<TypeParam, GrowthLinear> second(std::move(first));
  EXPECT_EQ(second.Allocate(), blocks[3]);
  for (int i = 0; i < 300; ++i) blocks.push_back(second.Allocate());
  Bunch<TypeParam, GrowthLinear> third(8);
  third = std::move(second);
  for (void* p : blocks) third.Deallocate(p);
  EXPECT_EQ(third.free_blocks(), third.chunk_count() * 255);
}

TYPED_TEST(StoragePolicyTest, FreeingAForeignBlockDies) {
  Bunch<TypeParam, GrowthLinear> bunch(16);
  void* own = bunch.Allocate();
  static char foreign[64];
  EXPECT_DEATH(bunch.Deallocate(foreign), "not owned");
  bunch.Deallocate(own);
}

TEST(StorageSimpleTest, TriesTheLastUsedChunkFirst) {
  Bunch<StorageSimple, GrowthLinear> bunch(8);
  std::vector<void*> blocks;
  for (int i = 0; i < 3 * 255; ++i) blocks.push_back(bunch.Allocate());
  bunch.Deallocate(blocks[10]);  // Chunk 0.
  // The last-used chunk (2) is full, so the search finds chunk 0.
  EXPECT_EQ(bunch.Allocate(), blocks[10]);
}

TEST(StorageBoundaryTest, AFreedBlockOfAFullChunkIsServedNext) {
  Bunch<StorageBoundary, GrowthLinear> bunch(8);
  std::vector<void*> blocks;
  for (int i = 0; i < 255 + 10; ++i) blocks.push_back(bunch.Allocate());
  bunch.Deallocate(blocks[5]);  // Chunk 0 was full; now it is the newest non-full.
  EXPECT_EQ(bunch.Allocate(), blocks[5]);
}

TEST(StorageOrderedTest, AllocatesFromTheLowestChunkWithAFreeBlock) {
  Bunch<StorageOrdered, GrowthLinear> bunch(8);
  std::vector<void*> blocks;
  for (int i = 0; i < 4 * 255; ++i) blocks.push_back(bunch.Allocate());
  std::vector<void*> sorted = blocks;
  std::sort(sorted.begin(), sorted.end(), [](void* a, void* b) { return Address(a) < Address(b); });
  bunch.Deallocate(sorted.back());
  bunch.Deallocate(sorted.front());
  EXPECT_EQ(bunch.Allocate(), sorted.front());
  EXPECT_EQ(bunch.Allocate(), sorted.back());
}

TEST(GrowthTest, ExponentialDoublesUpToTheCap) {
  EXPECT_EQ(GrowthExponential::FirstChunkBlocks(64), 16u);
  EXPECT_EQ(GrowthExponential::NextChunkBlocks(16, 64), 32u);
  EXPECT_EQ(GrowthExponential::NextChunkBlocks(16384, 64), 16384u);
  EXPECT_EQ(GrowthExponential::NextChunkBlocks(16384, 8), 32768u);
  EXPECT_EQ(GrowthLinear::NextChunkBlocks(255, 8), 255u);

  Bunch<StorageBoundary, GrowthExponential> bunch(64);
  for (int i = 0; i < 16 + 32 + 1; ++i) bunch.Allocate();
  EXPECT_EQ(bunch.chunk_count(), 3u);
}

}  // namespace
}  // namespace alloctrace::pool
