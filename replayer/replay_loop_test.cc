#include "replayer/replay_loop.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "replayer/allocators/baseline_allocators.h"
#include "replayer/allocators/pool_allocators.h"
#include "replayer/replay_program.h"

namespace alloctrace {
namespace {

using replay_internal::LiveSet;

// Blocks whose first byte is `value`, registered as live objects 0..n-1.
struct Blocks {
  Blocks(uint32_t n, unsigned char value) : bytes(n, value), ptrs(n) {
    for (uint32_t i = 0; i < n; ++i) ptrs[i] = &bytes[i];
  }
  std::vector<unsigned char> bytes;
  std::vector<void*> ptrs;
};

// A descent reads 1 + ceil(log2(live)) blocks: with every first byte 1,
// what it returns is the number of reads.
TEST(LiveSetTest, DescentReadsOneBlockPerLevel) {
  for (const auto& [n, reads] : std::vector<std::pair<uint32_t, uint64_t>>{
           {1, 1}, {2, 2}, {3, 3}, {4, 3}, {1000, 11}, {1024, 11}, {1025, 12}}) {
    Blocks b(n, 1);
    LiveSet live(n);
    for (uint32_t i = 0; i < n; ++i) live.Add(i, b.ptrs[i], 1);
    EXPECT_EQ(live.Descend(b.ptrs.data(), 7), reads) << n << " live";
  }
  LiveSet empty(4);
  Blocks b(4, 1);
  EXPECT_EQ(empty.Descend(b.ptrs.data(), 0), 0u);
}

// Which blocks are read depends on the step and the live set only: two
// allocators' blocks holding different bytes are read at the same indexes.
TEST(LiveSetTest, DescentIsTheSameWhateverTheBlocksHold) {
  constexpr uint32_t kN = 5000;
  Blocks ids(kN, 0), ones(kN, 1);
  for (uint32_t i = 0; i < kN; ++i) ids.bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  LiveSet a(kN), b(kN);
  for (uint32_t i = 0; i < kN; ++i) {
    a.Add(i, ids.ptrs[i], 1);
    b.Add(i, ones.ptrs[i], 1);
  }
  for (uint64_t step = 0; step < 100; ++step) {
    const uint64_t first = a.Descend(ids.ptrs.data(), step);
    EXPECT_EQ(a.Descend(ids.ptrs.data(), step), first);
    EXPECT_EQ(b.Descend(ones.ptrs.data(), step), 14u);  // 1 + ceil(log2(5000))
  }
  // The top level is always the first live block: a descent of 14 reads
  // returns at least its 100 and at most 100 + 13 others' 1.
  Blocks marks(kN, 1);
  marks.bytes[0] = 100;
  LiveSet m(kN);
  for (uint32_t i = 0; i < kN; ++i) m.Add(i, marks.ptrs[i], 1);
  for (uint64_t step = 0; step < 50; ++step) {
    const uint64_t sum = m.Descend(marks.ptrs.data(), step);
    EXPECT_GE(sum, 113u) << step;
    EXPECT_LE(sum, 100u * 14) << step;
  }
}

TEST(LiveSetTest, RemoveKeepsTheRestAndSkipsEmptyBlocks) {
  Blocks b(8, 1);
  LiveSet live(8);
  live.Add(0, b.ptrs[0], 1);
  live.Add(1, nullptr, 0);    // malloc(0) may give no block
  live.Add(2, b.ptrs[2], 0);  // nothing to read in a 0-byte block
  live.Add(3, b.ptrs[3], 1);
  live.Remove(1);             // never added: no effect
  EXPECT_EQ(live.Descend(b.ptrs.data(), 1), 2u);  // 2 live: 2 reads
  live.Remove(0);
  EXPECT_EQ(live.Descend(b.ptrs.data(), 1), 1u);
  live.Clear();
  EXPECT_EQ(live.Descend(b.ptrs.data(), 1), 0u);
  live.Add(0, b.ptrs[0], 1);  // reusable after Clear
  EXPECT_EQ(live.Descend(b.ptrs.data(), 1), 1u);
}

// Every touch mode replays a real trace through glibc malloc and a pool,
// with the same result apart from timings.
TEST(ReplayWithTest, EveryTouchModeReplaysATrace) {
  auto p = LoadReplayProgram("traces/random.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  for (Touch touch :
       {Touch::kNone, Touch::kFirst, Touch::kWhole, Touch::kProgram, Touch::kDescent}) {
    RunOptions options;
    options.touch = touch;
    options.max_passes = 2;
    for (const RunResult& r : {ReplayWith<allocators::MallocAllocator>(ViewOf(*p), options),
                               ReplayWith<allocators::SlabPoolAllocator>(ViewOf(*p), options)}) {
      EXPECT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(r.ops, p->memory_ops());
      EXPECT_EQ(r.passes.size(), 2u);
    }
  }
}

}  // namespace
}  // namespace alloctrace
