#include "alloctrace/replayer/engine/walker.h"

#include <cstdint>
#include <vector>

#include "alloctrace/replayer/engine/replay_program.h"
#include "gtest/gtest.h"

namespace alloctrace::replay_internal {
namespace {

// A view over `ops` (no reallocs), objects below 64, arenas below 3.
ReplayView ViewOver(const std::vector<ReplayOp>& ops) {
  ReplayView v;
  v.ops = ops.data();
  v.num_ops = ops.size();
  v.object_limit = 63;
  v.arena_limit = 3;
  return v;
}

ReplayOp Alloc(uint32_t object, uint32_t arena, uint32_t bytes = 16) {
  return ReplayOp{object, bytes, arena, ReplayKind::kAlloc, 4, 0};
}
ReplayOp Free(uint32_t object, uint32_t arena) {
  return ReplayOp{object, 16, arena, ReplayKind::kFree, 4, 0};
}

// Each object's block holds one byte saying which arena it is in (1 or
// 100), so the sum of what a walk read counts its reads per arena.
class WalkerTest : public testing::Test {
 protected:
  WalkerTest() : blocks_(64, 0), ptrs_(64, nullptr) {
    for (size_t i = 0; i < 64; ++i) ptrs_[i] = &blocks_[i];
  }

  // Lists `object` in `arena` (its block marked) and returns what the walk
  // before it read.
  uint64_t Allocate(Walker& w, uint32_t object, uint32_t arena, uint32_t bytes = 16) {
    blocks_[object] = arena == 1 ? 1 : 100;
    uint64_t sink = 0;
    w.Allocated(arena, object, bytes, ptrs_.data(), sink);
    return sink;
  }

  std::vector<unsigned char> blocks_;
  std::vector<void*> ptrs_;
};

TEST_F(WalkerTest, AnInsertReadsOneBlockPerLevelOfItsOwnArena) {
  std::vector<ReplayOp> ops;
  for (uint32_t i = 0; i < 20; ++i) ops.push_back(Alloc(i, 1));
  for (uint32_t i = 20; i < 26; ++i) ops.push_back(Alloc(i, 2));
  Walker w(ViewOver(ops));
  w.Reset();
  // Arena 1: 0, 1, 2, 3 ... listed: floor(log2(n)) reads before the n+1th.
  EXPECT_EQ(Allocate(w, 0, 1), 0u);
  EXPECT_EQ(Allocate(w, 1, 1), 0u);
  EXPECT_EQ(Allocate(w, 2, 1), 1u);
  EXPECT_EQ(Allocate(w, 3, 1), 1u);
  EXPECT_EQ(Allocate(w, 4, 1), 2u);
  for (uint32_t i = 5; i < 16; ++i) Allocate(w, i, 1);
  EXPECT_EQ(Allocate(w, 16, 1), 4u);  // 16 listed: 4 levels
  // Arena 2's walks read arena 2's blocks only, however many arena 1 holds.
  for (uint32_t i = 20; i < 25; ++i) Allocate(w, i, 2);
  EXPECT_EQ(Allocate(w, 25, 2), 200u);  // 5 listed: 2 levels of 100
}

TEST_F(WalkerTest, AFreedBlockIsNotWalkedAgain) {
  std::vector<ReplayOp> ops;
  for (uint32_t i = 0; i < 9; ++i) ops.push_back(Alloc(i, 1));
  for (uint32_t i = 0; i < 5; ++i) ops.push_back(Free(i, 1));
  Walker w(ViewOver(ops));
  w.Reset();
  for (uint32_t i = 0; i < 8; ++i) Allocate(w, i, 1);
  for (uint32_t i = 0; i < 5; ++i) {
    w.Freed(i);
    blocks_[i] = 50;  // a freed block read again shows in the sum
  }
  EXPECT_EQ(Allocate(w, 8, 1), 1u);  // 3 listed (5, 6, 7): one level
  w.Freed(40);                       // never listed: nothing happens
  EXPECT_EQ(Allocate(w, 9, 1), 2u);  // 4 listed: two levels
}

TEST_F(WalkerTest, EmptyBlocksAreNotListedAndResetEmptiesEveryList) {
  std::vector<ReplayOp> ops;
  for (uint32_t i = 0; i < 6; ++i) ops.push_back(Alloc(i, 1, i < 3 ? 0 : 16));
  Walker w(ViewOver(ops));
  w.Reset();
  for (uint32_t i = 0; i < 3; ++i) Allocate(w, i, 1, /*bytes=*/0);
  EXPECT_EQ(Allocate(w, 3, 1), 0u);  // the three empty blocks are not there
  w.Freed(0);                        // an empty block's free: nothing to unlist
  Allocate(w, 4, 1);
  EXPECT_EQ(Allocate(w, 5, 1), 1u);
  w.Reset();
  EXPECT_EQ(Allocate(w, 5, 1), 0u);
}

// The same trace walks the same blocks, in the same order, on every pass.
TEST_F(WalkerTest, EveryPassMakesTheSameChoices) {
  std::vector<ReplayOp> ops;
  for (uint32_t i = 0; i < 40; ++i) ops.push_back(Alloc(i, 1));
  for (uint32_t i = 0; i < 40; ++i) blocks_[i] = static_cast<unsigned char>(i + 1);
  Walker w(ViewOver(ops));
  auto pass = [&] {
    w.Reset();
    std::vector<uint64_t> reads;
    for (uint32_t i = 0; i < 40; ++i) {
      uint64_t sink = 0;
      w.Allocated(1, i, 16, ptrs_.data(), sink);
      reads.push_back(sink);
    }
    return reads;
  };
  const std::vector<uint64_t> first = pass();
  EXPECT_EQ(pass(), first);
  uint64_t total = 0;
  for (uint64_t r : first) total += r;
  EXPECT_GT(total, 0u);
}

}  // namespace
}  // namespace alloctrace::replay_internal
