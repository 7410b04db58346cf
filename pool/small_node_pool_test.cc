#include "alloctrace/pool/small_node_pool.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/pool/pool_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

using testing_util::Address;

using Small = SmallNodePool<SingleThreaded>;

TEST(SmallNodePoolTest, BlockSizesRoundToTheAlignmentOnly) {
  EXPECT_EQ(Small::BlockSize(0, 1), 1u);
  EXPECT_EQ(Small::BlockSize(1, 1), 1u);  // a pointer free list would need 8
  EXPECT_EQ(Small::BlockSize(3, 4), 4u);
  EXPECT_EQ(Small::BlockSize(5, 4), 8u);
  EXPECT_EQ(Small::BlockSize(40, 8), 40u);
  EXPECT_EQ(Small::BlockSize(17, 16), 32u);
  EXPECT_EQ(Small::BlockSize(256, 8), 256u);
  EXPECT_EQ(Small::BlockSize(257, 1), 0u);  // malloc path
  EXPECT_EQ(Small::BlockSize(8, 32), 0u);   // malloc path
}

TEST(SmallNodePoolTest, OneByteNodesPackTightlyIn255BlockChunks) {
  Small pool;
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < 255; ++i) {
    blocks.push_back(static_cast<unsigned char*>(pool.Allocate(1, 1)));
  }
  EXPECT_EQ(pool.chunk_count(), 1u);
  std::vector<unsigned char*> sorted = blocks;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted.back() - sorted.front(), 254);  // one byte apart
  // Every byte is the caller's while live.
  for (size_t i = 0; i < blocks.size(); ++i) *blocks[i] = static_cast<unsigned char>(i);
  for (size_t i = 0; i < blocks.size(); ++i) EXPECT_EQ(*blocks[i], static_cast<unsigned char>(i));
  void* extra = pool.Allocate(1, 1);
  EXPECT_EQ(pool.chunk_count(), 2u);
  pool.Deallocate(extra, 1, 1);
  for (unsigned char* p : blocks) pool.Deallocate(p, 1, 1);
}

TEST(SmallNodePoolTest, FreedBlocksAreReusedLastFreedFirstWithinTheChunk) {
  Small pool;
  void* a = pool.Allocate(8, 8);
  void* b = pool.Allocate(8, 8);
  void* c = pool.Allocate(8, 8);
  pool.Deallocate(a, 8, 8);
  pool.Deallocate(c, 8, 8);
  EXPECT_EQ(pool.Allocate(8, 8), c);
  EXPECT_EQ(pool.Allocate(8, 8), a);
  pool.Deallocate(a, 8, 8);
  pool.Deallocate(b, 8, 8);
  pool.Deallocate(c, 8, 8);
}

TEST(SmallNodePoolTest, KeepsEmptyChunksForReuse) {
  Small pool;
  const size_t per_chunk = pool.ClassFor(64, 8).blocks_per_chunk();
  EXPECT_EQ(per_chunk, 4096u / 64);
  std::vector<void*> blocks;
  for (size_t i = 0; i < 4 * per_chunk; ++i) blocks.push_back(pool.Allocate(64, 8));
  EXPECT_EQ(pool.chunk_count(), 4u);
  std::vector<void*> first = blocks;
  for (void* p : blocks) pool.Deallocate(p, 64, 8);
  EXPECT_EQ(pool.chunk_count(), 4u);
  EXPECT_EQ(pool.ClassFor(64, 8).free_blocks(), 4 * per_chunk);
  // The same memory serves the next round: no new chunk, no new address.
  blocks.clear();
  for (size_t i = 0; i < 4 * per_chunk; ++i) blocks.push_back(pool.Allocate(64, 8));
  EXPECT_EQ(pool.chunk_count(), 4u);
  std::sort(first.begin(), first.end());
  std::sort(blocks.begin(), blocks.end());
  EXPECT_EQ(first, blocks);
  for (void* p : blocks) pool.Deallocate(p, 64, 8);
}

TEST(SmallNodePoolTest, RandomProgramAgainstAModel) {
  Small pool;
  std::mt19937 rng(5);
  struct Live {
    unsigned char* p;
    size_t bytes;
    size_t align;
    unsigned char fill;
  };
  std::vector<Live> live;
  std::map<uintptr_t, uintptr_t> ranges;  // start -> end
  auto check_and_free = [&](size_t i) {
    const Live b = live[i];
    for (size_t k = 0; k < b.bytes; ++k) ASSERT_EQ(b.p[k], b.fill) << "byte " << k;
    ranges.erase(Address(b.p));
    pool.Deallocate(b.p, b.bytes, b.align);
    live[i] = live.back();
    live.pop_back();
  };
  for (int step = 0; step < 60000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      const size_t align = size_t{1} << (rng() % 6);  // 1..32
      const size_t bytes = rng() % 300;
      auto* p = static_cast<unsigned char*>(pool.Allocate(bytes, align));
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(Address(p) % align, 0u) << bytes << " bytes, align " << align;
      const uintptr_t start = Address(p);
      const uintptr_t end = start + std::max<size_t>(bytes, 1);
      auto next = ranges.lower_bound(start);
      ASSERT_TRUE(next == ranges.end() || next->first >= end) << "overlap";
      ASSERT_TRUE(next == ranges.begin() || std::prev(next)->second <= start) << "overlap";
      ranges.emplace(start, end);
      const auto fill = static_cast<unsigned char>(rng());
      std::memset(p, fill, bytes);
      live.push_back({p, bytes, align, fill});
    } else {
      check_and_free(rng() % live.size());
    }
  }
  while (!live.empty()) check_and_free(live.size() - 1);
}

TEST(SmallNodePoolTest, ReleaseAllFreesLiveBlocks) {
  // LeakSanitizer (bazel test --config=asan) proves nothing stays.
  Small pool;
  for (int i = 0; i < 1000; ++i) pool.Allocate(static_cast<size_t>(i % 300), 8);
  pool.ReleaseAll();
  EXPECT_EQ(pool.chunk_count(), 0u);
  EXPECT_NE(pool.Allocate(4, 4), nullptr);  // usable again
}

TEST(SmallNodePoolTest, MultiThreadedSurvivesConcurrentUse) {
  SmallNodePool<MultiThreaded> pool;
  testing_util::UseFromThreads(pool, 1, 24, 4);
}

TEST(SmallNodePoolTest, WorksAsAStdAllocator) {
  using Alloc = BasicPoolAllocator<int, SmallNodePool<SingleThreaded>, HoldingStack>;
  std::set<int, std::less<int>, Alloc> s;
  for (int i = 0; i < 10000; ++i) s.insert((i * 7919) % 10007);
  EXPECT_EQ(s.size(), 10000u);
  for (int i = 0; i < 10000; i += 2) s.erase((i * 7919) % 10007);
  EXPECT_EQ(s.size(), 5000u);
}

TEST(SmallNodePoolDeathTest, FreeOfAForeignBlockIsReported) {
  Small pool;
  void* mine = pool.Allocate(16, 8);
  alignas(16) unsigned char foreign[16];
  EXPECT_DEATH(pool.Deallocate(foreign, 16, 8), "belongs to no chunk");
  pool.Deallocate(mine, 16, 8);
}

}  // namespace
}  // namespace alloctrace::pool
