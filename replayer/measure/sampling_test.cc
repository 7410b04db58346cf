// The one decision whether a trace is measured in sampled windows
// (sampling.h: UsesWindows), on sizes alone; which windows a trace gets.
#include "alloctrace/replayer/measure/sampling.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
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

// A trace of `threads` threads, each allocating 8 blocks in the heap and
// freeing them, interleaved; replayed per thread (with its schedule) or
// serialized.
SharedProgram ProgramOf(uint32_t threads, bool per_thread) {
  const std::string path = absl::StrCat(testing::TempDir(), "/threads_", threads, ".trace");
  auto w = TraceWriter::Create(path, proto::Header());
  EXPECT_TRUE(w.ok()) << w.status();
  if (!w.ok()) return {};
  for (uint64_t k = 0; k < 8; ++k) {
    for (uint32_t t = 0; t < threads; ++t) (*w)->Alloc(t, 0, (t * 8 + k + 1) * 64, Shape{32, 1, 8});
  }
  for (uint64_t k = 0; k < 8; ++k) {
    for (uint32_t t = 0; t < threads; ++t) (*w)->Free(t, 0, (t * 8 + k + 1) * 64);
  }
  EXPECT_TRUE((*w)->Finish().ok());
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  SharedProgram shared;
  shared.program = *std::move(p);
  if (per_thread) {
    absl::StatusOr<ThreadSchedule> schedule = BuildThreadSchedule(shared.program);
    EXPECT_TRUE(schedule.ok()) << schedule.status();
    if (schedule.ok()) shared.schedule = *std::move(schedule);
  }
  return shared;
}

// A per-thread replay is served whatever its threads: a process per
// contender keeps a replay thread per stream, each round's word giving
// every stream's bounds; the children need no start states.
TEST(SamplingTest, APerThreadReplayIsServedWhateverItsThreads) {
  for (const uint32_t threads : {2u, 64u, 65u, 128u}) {
    SCOPED_TRACE(threads);
    const SharedProgram shared = ProgramOf(threads, /*per_thread=*/true);
    ASSERT_TRUE(shared.schedule.has_value());
    ASSERT_EQ(shared.schedule->streams.size(), threads);
    std::unique_ptr<Sampling> sampling = Sampling::For(shared, WindowsMode::kAlways, Ranking(), 1);
    ASSERT_NE(sampling, nullptr);
    EXPECT_TRUE(sampling->served());
    EXPECT_EQ(sampling->Facts().per_run, 1);
    for (int round = 0; round < 3; ++round) {
      EXPECT_EQ(sampling->WindowsOf(round).size(), 1u);
      const std::vector<std::string> parts = absl::StrSplit(sampling->WordFor(round), ';');
      ASSERT_EQ(parts.size(), 2u);
      EXPECT_EQ(std::vector<std::string>(absl::StrSplit(parts[1], ',')).size(), 2 * threads);
      EXPECT_EQ(sampling->StatesFdFor(round), -1);
    }
  }
}

// Serialized, a small live heap beside its windows: rebuilt windows, one in
// each stratum a run, their start states shared with the children.
TEST(SamplingTest, ASerializedReplayOfASmallHeapIsRebuilt) {
  const SharedProgram shared = ProgramOf(2, /*per_thread=*/false);
  std::unique_ptr<Sampling> sampling = Sampling::For(shared, WindowsMode::kAlways, Ranking(), 1);
  ASSERT_NE(sampling, nullptr);
  EXPECT_FALSE(sampling->served());
  EXPECT_EQ(sampling->Facts().per_run, 16);
  EXPECT_EQ(sampling->WordFor(0).find(';'), std::string::npos);
  EXPECT_GE(sampling->StatesFdFor(0), 0);
}

}  // namespace
}  // namespace alloctrace
