#include "alloctrace/replayer/engine/replay_loop.h"

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
