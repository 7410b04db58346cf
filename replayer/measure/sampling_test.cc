// The one decision whether a trace is measured in sampled windows
// (sampling.h: UsesWindows), on sizes alone.
#include "alloctrace/replayer/measure/sampling.h"

#include <cstdint>
#include <functional>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// A windowed run replaying `ops`, and whether it was asked for.
struct WindowedRun {
  uint64_t ops = 0;
  bool asked = false;
  std::function<uint64_t()> Fn() {
    return [this] {
      asked = true;
      return ops;
    };
  }
};

bool Uses(WindowsMode mode, bool rank_warm, uint64_t num_ops, uint64_t memory_ops,
          uint64_t windowed_run_ops) {
  WindowedRun run{windowed_run_ops};
  return UsesWindows(mode, rank_warm, num_ops, memory_ops, run.Fn());
}

TEST(UsesWindowsTest, AutoTakesWindowsOnlyForALongTraceWithASmallLiveHeap) {
  EXPECT_FALSE(Uses(WindowsMode::kAuto, false, 3'000'000, 999'999, 100));
  EXPECT_TRUE(Uses(WindowsMode::kAuto, false, 3'000'000, 1'000'000, 750'000));
  // A windowed run that replays more than a quarter of the trace saves too
  // little: whole runs.
  EXPECT_FALSE(Uses(WindowsMode::kAuto, false, 3'000'000, 1'000'000, 750'001));
}

TEST(UsesWindowsTest, AlwaysAndNeverAreTheUsersButATraceNeedsMemoryOps) {
  EXPECT_TRUE(Uses(WindowsMode::kAlways, false, 10, 4, 1'000'000));
  EXPECT_FALSE(Uses(WindowsMode::kAlways, false, 10, 0, 0));
  EXPECT_FALSE(Uses(WindowsMode::kNever, false, 10'000'000, 10'000'000, 0));
}

// A window estimates a cold pass: ranked by the warm passes, whole runs.
TEST(UsesWindowsTest, WarmRankingNeverTakesWindows) {
  EXPECT_FALSE(Uses(WindowsMode::kAlways, true, 10, 4, 1));
  EXPECT_FALSE(Uses(WindowsMode::kAuto, true, 3'000'000, 1'000'000, 1));
}

// What a windowed run replays costs a walk of the trace: asked only where
// the answer turns on it.
TEST(UsesWindowsTest, AsksWhatAWindowedRunReplaysOnlyWhenItDecides) {
  WindowedRun run{100};
  EXPECT_FALSE(UsesWindows(WindowsMode::kAuto, false, 3'000'000, 999'999, run.Fn()));
  EXPECT_FALSE(run.asked);
  EXPECT_TRUE(UsesWindows(WindowsMode::kAlways, false, 3'000'000, 999'999, run.Fn()));
  EXPECT_FALSE(run.asked);
  EXPECT_TRUE(UsesWindows(WindowsMode::kAuto, false, 3'000'000, 1'000'000, run.Fn()));
  EXPECT_TRUE(run.asked);
}

}  // namespace
}  // namespace alloctrace
