#include "alloctrace/replayer/config.h"

#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/verdict/summary.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, rank_by);
ABSL_DECLARE_FLAG(std::string, clock);
ABSL_DECLARE_FLAG(std::string, threads);
ABSL_DECLARE_FLAG(std::string, touch);
ABSL_DECLARE_FLAG(std::string, format);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(int, passes);
ABSL_DECLARE_FLAG(int, min_runs);
ABSL_DECLARE_FLAG(int, max_runs);
ABSL_DECLARE_FLAG(bool, list_policies);

namespace alloctrace {
namespace {

// The flags' defaults, as --help shows them, are the struct's.
TEST(ReplayerConfigTest, FlagDefaultsAreTheStructDefaults) {
  const ReplayerConfig d;
  auto default_of = [](const char* name) {
    const absl::CommandLineFlag* f = absl::FindCommandLineFlag(name);
    return f == nullptr ? std::string("(no such flag)") : f->DefaultValue();
  };
  EXPECT_EQ(default_of("rank_by"), "cold");
  EXPECT_EQ(default_of("touch"), "program");
  EXPECT_EQ(default_of("clock"), "auto");
  EXPECT_EQ(default_of("threads"), "auto");
  EXPECT_EQ(default_of("policies"), d.policies);
  EXPECT_EQ(default_of("format"), "table");
  EXPECT_EQ(default_of("out"), "");
  EXPECT_EQ(default_of("passes"), std::to_string(d.passes));
  EXPECT_EQ(default_of("min_runs"), std::to_string(d.min_runs));
  EXPECT_EQ(default_of("max_runs"), std::to_string(d.max_runs));
  EXPECT_EQ(default_of("rss_samples"), std::to_string(d.rss_samples));
  EXPECT_EQ(default_of("seed"), std::to_string(d.seed));
}

// Parsing the untouched flags gives the default struct, field by field.
TEST(ReplayerConfigTest, UntouchedFlagsParseToTheDefaults) {
  absl::FlagSaver saver;
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  const ReplayerConfig d;
  EXPECT_EQ(c->policies, d.policies);
  EXPECT_EQ(c->precision_percent, d.precision_percent);
  EXPECT_EQ(c->budget_seconds, d.budget_seconds);
  EXPECT_EQ(c->min_runs, d.min_runs);
  EXPECT_EQ(c->max_runs, d.max_runs);
  EXPECT_EQ(c->max_reruns, d.max_reruns);
  EXPECT_EQ(c->screen_runs, d.screen_runs);
  EXPECT_EQ(c->seed, d.seed);
  EXPECT_EQ(c->passes, d.passes);
  EXPECT_EQ(c->warm_ms, d.warm_ms);
  EXPECT_EQ(c->rank_by, d.rank_by);
  EXPECT_EQ(c->clock, d.clock);
  EXPECT_EQ(c->threads, d.threads);
  EXPECT_EQ(c->touch, d.touch);
  EXPECT_EQ(c->rss_samples, d.rss_samples);
  EXPECT_EQ(c->run_timeout_seconds, d.run_timeout_seconds);
  EXPECT_EQ(c->memory_limit_mb, d.memory_limit_mb);
  EXPECT_EQ(c->memory_limit_factor, d.memory_limit_factor);
  EXPECT_EQ(c->memory_limit_floor_mb, d.memory_limit_floor_mb);
  EXPECT_EQ(c->formats, d.formats);
  EXPECT_EQ(c->outs, d.outs);
  EXPECT_EQ(c->quiet, d.quiet);
}

// The structs the measurement takes have the command line's defaults too,
// so code that builds one without the config measures as the replayer does.
TEST(ReplayerConfigTest, MeasurementStructDefaultsAgreeWithTheConfig) {
  const MeasureSettings s = ToMeasureSettings(ReplayerConfig());
  EXPECT_EQ(ReportContext().rank_by, s.ctx.rank_by);
  EXPECT_EQ(ReportContext().clock, s.ctx.clock);
  EXPECT_EQ(ReportContext().touch, s.ctx.touch);
  EXPECT_EQ(ReportContext().precision, s.ctx.precision);
  EXPECT_EQ(ReportContext().min_runs, s.ctx.min_runs);
  EXPECT_EQ(RunOptions().touch, s.run_options.touch);
  EXPECT_EQ(RunOptions().rss_samples, s.run_options.rss_samples);
  EXPECT_EQ(MeasureSettings().touch, s.touch);
  EXPECT_EQ(MeasureSettings().max_runs, s.max_runs);
  EXPECT_EQ(MeasureSettings().max_reruns, s.max_reruns);
  EXPECT_EQ(MeasureSettings().screen_runs, s.screen_runs);
  EXPECT_EQ(MeasureSettings().seed, s.seed);
  EXPECT_EQ(MeasureSettings().threads, s.threads);
}

TEST(ReplayerConfigTest, EnumsRoundTripThroughTheirWords) {
  for (TimingClock c : {TimingClock::kAuto, TimingClock::kCpu, TimingClock::kWall}) {
    EXPECT_EQ(*ParseTimingClock(TimingClockName(c)), c);
  }
  for (ReplayThreads t : {ReplayThreads::kAuto, ReplayThreads::kOne}) {
    EXPECT_EQ(*ParseReplayThreads(ReplayThreadsName(t)), t);
  }
  for (RankBy r : {RankBy::kCold, RankBy::kWarm}) EXPECT_EQ(*ParseRankBy(RankByName(r)), r);
  for (Touch t : {Touch::kNone, Touch::kFirst, Touch::kWhole, Touch::kProgram}) {
    EXPECT_EQ(*ParseTouch(TouchName(t)), t);
  }
  EXPECT_EQ(ParseTimingClock("tsc").status().message(), "--clock=tsc: must be auto, cpu or wall");
  EXPECT_EQ(ParseReplayThreads("all").status().message(), "--threads=all: must be auto or one");
  EXPECT_EQ(ParseRankBy("best").status().message(), "--rank_by=best: must be warm or cold");
  EXPECT_EQ(ParseTouch("some").status().message(),
            "--touch=some: must be none, first, whole or program");
}

TEST(ReplayerConfigTest, BadValuesAreUsageErrorsNamingTheFlag) {
  struct Case {
    void (*set)();
    const char* message;
  };
  const Case cases[] = {
      {[] { absl::SetFlag(&FLAGS_passes, 0); }, "--passes=0: must be 1 to 1000"},
      {[] { absl::SetFlag(&FLAGS_rank_by, "best"); }, "--rank_by=best: must be warm or cold"},
      {[] { absl::SetFlag(&FLAGS_format, "xml"); },
       "--format=xml: must be table, markdown, csv, csv-runs, json or html"},
      {[] { absl::SetFlag(&FLAGS_format, "csv,json"); },
       "--format=csv,json needs 2 comma-separated --out files"},
      {[] { absl::SetFlag(&FLAGS_max_runs, 3); },
       "--min_runs=10, --max_runs=3: need 1 <= min_runs <= max_runs <= 100000"},
      {[] { absl::SetFlag(&FLAGS_clock, "tsc"); }, "--clock=tsc: must be auto, cpu or wall"},
      {[] { absl::SetFlag(&FLAGS_threads, "all"); }, "--threads=all: must be auto or one"},
  };
  for (const Case& c : cases) {
    absl::FlagSaver saver;
    c.set();
    absl::StatusOr<ReplayerConfig> config = ReplayerConfigFromFlags();
    ASSERT_FALSE(config.ok()) << c.message;
    EXPECT_TRUE(absl::IsInvalidArgument(config.status()));
    EXPECT_EQ(config.status().message(), c.message);
  }
}

TEST(ReplayerConfigTest, SeveralFormatsTakeOneOutEach) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_format, "csv,json");
  absl::SetFlag(&FLAGS_out, "a.csv,b.json");
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->formats, (std::vector<std::string>{"csv", "json"}));
  EXPECT_EQ(c->outs, (std::vector<std::string>{"a.csv", "b.json"}));
}

// --list-policies runs nothing: it takes its own formats and no other
// flag is checked.
TEST(ReplayerConfigTest, ListPoliciesTakesItsOwnFormatsAndChecksNothingElse) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_list_policies, true);
  absl::SetFlag(&FLAGS_passes, 0);
  absl::SetFlag(&FLAGS_format, "cc");
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->list_format, "cc");
  absl::SetFlag(&FLAGS_format, "csv");
  EXPECT_EQ(ReplayerConfigFromFlags().status().message(),
            "--list-policies --format=csv: must be table, markdown or cc");
}

// --threads and --clock=auto reach the measurement: the clock unresolved
// (MeasureTrace resolves it per trace), the replay threads as typed.
TEST(ReplayerConfigTest, ThreadsAndClockReachTheMeasureSettings) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_threads, "one");
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->threads, ReplayThreads::kOne);
  EXPECT_EQ(c->clock, TimingClock::kAuto);
  MeasureSettings s = ToMeasureSettings(*c);
  EXPECT_EQ(s.threads, ReplayThreads::kOne);
  EXPECT_EQ(s.ctx.clock, "auto");
  c->clock = TimingClock::kWall;
  EXPECT_EQ(ToMeasureSettings(*c).ctx.clock, "wall");
}

TEST(ReplayerConfigTest, WarmRankingWithOnePassRanksByTheColdPass) {
  ReplayerConfig c;
  c.rank_by = RankBy::kWarm;
  EXPECT_EQ(ToMeasureSettings(c).ctx.rank_by, "warm");
  c.passes = 1;
  EXPECT_EQ(ToMeasureSettings(c).ctx.rank_by, "cold");
}

#if !defined(__SANITIZE_ADDRESS__)  // under ASan no data limit is set
// The million-arena case: a trace that claims much gets no more than the
// machine can give; an explicit --memory_limit_mb is the user's to set.
TEST(ChildLimitsTest, DefaultMemoryLimitNeverExceedsTheMachineCap) {
  ReplayProgram p;
  p.peak_live_bytes = uint64_t{1} << 30;  // a million 1 KiB blocks
  p.object_limit = 1000000;
  ReplayerConfig c;
  const int64_t uncapped = ChildLimitsFor(c, p, 0).memory_bytes;
  EXPECT_EQ(uncapped, (int64_t{16} << 30) + (int64_t{512} << 20) + 32 * 1000001);
  EXPECT_EQ(ChildLimitsFor(c, p, int64_t{4} << 30).memory_bytes, int64_t{4} << 30);
  EXPECT_EQ(ChildLimitsFor(c, p, int64_t{64} << 30).memory_bytes, uncapped);
  p.peak_live_bytes = ~uint64_t{0};  // a hostile claim converts to no overflow
  EXPECT_EQ(ChildLimitsFor(c, p, int64_t{4} << 30).memory_bytes, int64_t{4} << 30);
  c.memory_limit_mb = 24;
  EXPECT_EQ(ChildLimitsFor(c, p, int64_t{4} << 30).memory_bytes, int64_t{24} << 20);
  c.memory_limit_mb = -1;
  EXPECT_EQ(ChildLimitsFor(c, p, int64_t{4} << 30).memory_bytes, 0);
}
#endif

TEST(ChildLimitsTest, TimeLimitGrowsWithTheTrace) {
  ReplayProgram p;
  p.allocs = 500000;
  p.frees = 500000;
  ReplayerConfig c;
  EXPECT_DOUBLE_EQ(ChildLimitsFor(c, p, 0).wall_seconds, 160);
  c.run_timeout_seconds = 2;
  EXPECT_DOUBLE_EQ(ChildLimitsFor(c, p, 0).wall_seconds, 2);
}

TEST(ChildLimitsTest, MachineCapIsHalfOfWhatIsAvailable) {
  const int64_t cap = MachineMemoryCap();
  EXPECT_GT(cap, 0);  // /proc/meminfo is readable on Linux
}

}  // namespace
}  // namespace alloctrace
