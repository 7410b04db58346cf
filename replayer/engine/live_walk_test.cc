#include "alloctrace/replayer/engine/live_walk.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace::replay_internal {
namespace {

// The walks' schedule and order, read from what they return: the sum of
// the ids of the blocks each walk read.
TEST(LiveWalkTest, WalksTheGenerationsDue) {
  constexpr uint32_t kSlots = 2200;
  std::vector<void*> ptrs(kSlots, nullptr);
  LiveWalk walk(kSlots);
  walk.Reset();
  auto allocate = [&](uint32_t id) {
    ptrs[id] = std::malloc(16);
    return walk.Allocated(id, ptrs[id], 16, ptrs.data());
  };
  auto free_block = [&](uint32_t id) {
    walk.Freed(id);
    std::free(ptrs[id]);
    ptrs[id] = nullptr;
  };
  auto ids = [](uint64_t from, uint64_t to) { return (from + to - 1) * (to - from) / 2; };
  // The 700th allocation: the first collection finds the live blocks grown
  // from none, and walks them all.
  for (uint32_t id = 0; id < 699; ++id) EXPECT_EQ(allocate(id), 0u);
  EXPECT_EQ(allocate(699), ids(0, 700));
  // 100 freed, 700 more: 1300 live, more than 700 and a quarter: all again.
  for (uint32_t id = 0; id < 100; ++id) free_block(id);
  for (uint32_t id = 700; id < 1399; ++id) EXPECT_EQ(allocate(id), 0u);
  EXPECT_EQ(allocate(1399), ids(100, 1400));
  // 700 freed, 700 more (one of them reallocated into a new id, in its
  // place): 1300 live, not grown: only the young blocks, the realloc's
  // new id among them and not its old one.
  for (uint32_t id = 100; id < 800; ++id) free_block(id);
  for (uint32_t id = 1400; id < 1410; ++id) EXPECT_EQ(allocate(id), 0u);
  void* moved = std::realloc(ptrs[1400], 24);
  ptrs[1400] = nullptr;
  ptrs[2100] = moved;
  EXPECT_EQ(walk.Reallocated(1400, 2100, moved, 24, ptrs.data()), 0u);
  for (uint32_t id = 1410; id < 2099; ++id) EXPECT_EQ(allocate(id), 0u);
  EXPECT_EQ(allocate(2099), ids(1401, 2101));
  // A block under 4 bytes is neither stamped nor walked, nor counted.
  ptrs[2101] = std::malloc(2);
  EXPECT_EQ(walk.Allocated(2101, ptrs[2101], 2, ptrs.data()), 0u);
  walk.Freed(2101);
  for (void* p : ptrs) std::free(p);
}

}  // namespace
}  // namespace alloctrace::replay_internal
