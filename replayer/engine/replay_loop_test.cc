#include "alloctrace/replayer/engine/replay_loop.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// Every touch mode replays a real trace through glibc malloc and a pool,
// with the same result apart from timings.
TEST(ReplayWithTest, EveryTouchModeReplaysATrace) {
  auto p = LoadReplayProgram("traces/random.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  for (Touch touch : {Touch::kNone, Touch::kFirst, Touch::kWhole, Touch::kProgram, Touch::kWalk}) {
    RunOptions options;
    options.touch = touch;
    options.max_passes = 2;
    for (const RunResult& r :
         {ReplayWith<allocators::MallocAllocator>(ViewOf(*p), options),
          ReplayWith<allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>>(
              ViewOf(*p), options)}) {
      EXPECT_FALSE(r.error.failed()) << r.error.words;
      EXPECT_EQ(r.ops, p->memory_ops());
      EXPECT_EQ(r.passes.size(), 2u);
    }
  }
}

// A captured program's trace (reallocs, calloc, blocks of every size)
// through Touch::kWalk: the walks read only live blocks (ASan would see a
// freed one) over two passes.
TEST(ReplayWithTest, WalkReplaysACapturedProgram) {
  auto p = LoadReplayProgram("traces/capture_python.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_GT(p->reallocs_count, 0u);
  RunOptions options;
  options.touch = Touch::kWalk;
  options.max_passes = 2;
  const RunResult r = ReplayWith<allocators::MallocAllocator>(ViewOf(*p), options);
  EXPECT_FALSE(r.error.failed()) << r.error.words;
  EXPECT_EQ(r.passes.size(), 2u);
}

// The walks' schedule and order, read from what they return: the sum of
// the ids of the blocks each walk read.
TEST(LiveWalkTest, WalksTheGenerationsDue) {
  constexpr uint32_t kSlots = 2200;
  std::vector<void*> ptrs(kSlots, nullptr);
  replay_internal::LiveWalk walk(kSlots);
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

// glibc malloc that returns null for its 10th allocation on, and frees
// when it goes what the run, stopped at the failure, left live.
class FailingAllocator : public allocators::MallocAllocator {
 public:
  FailingAllocator() = default;
  FailingAllocator(const FailingAllocator&) = delete;
  FailingAllocator& operator=(const FailingAllocator&) = delete;
  ~FailingAllocator() {
    for (void* p : live_) MallocAllocator::Deallocate(p, 0, 0, 0);
  }

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    if (++calls_ >= 10) return nullptr;
    void* p = MallocAllocator::Allocate(bytes, align, arena);
    live_.insert(p);
    return p;
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    live_.erase(p);
    MallocAllocator::Deallocate(p, bytes, align, arena);
  }

 private:
  int calls_ = 0;
  std::set<void*> live_;
};

// An op the allocator cannot serve ends the run as kOpFailed, its words
// naming the op.
TEST(ReplayWithTest, AFailedOpIsTheRunsErrorOfItsKind) {
  auto p = LoadReplayProgram("traces/random.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  RunOptions options;
  options.max_passes = 1;
  const RunResult r = ReplayWith<FailingAllocator>(ViewOf(*p), options);
  EXPECT_EQ(r.error.Kind(), RunErrorKind::kOpFailed);
  EXPECT_NE(r.error.words.find(" bytes failed at op "), std::string::npos) << r.error.words;
  const RunResult ok = ReplayWith<allocators::MallocAllocator>(ViewOf(*p), options);
  EXPECT_EQ(ok.error.Kind(), RunErrorKind::kNone);
}

}  // namespace
}  // namespace alloctrace
