#include "alloctrace/replayer/engine/replay_loop.h"

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
  for (Touch touch : {Touch::kNone, Touch::kFirst, Touch::kWhole, Touch::kProgram}) {
    RunOptions options;
    options.touch = touch;
    options.max_passes = 2;
    for (const RunResult& r :
         {ReplayWith<allocators::MallocAllocator>(ViewOf(*p), options),
          ReplayWith<allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>>(
              ViewOf(*p), options)}) {
      EXPECT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(r.ops, p->memory_ops());
      EXPECT_EQ(r.passes.size(), 2u);
    }
  }
}

}  // namespace
}  // namespace alloctrace
