#include "alloctrace/replayer/config.h"

#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/reports/reporters.h"
#include "alloctrace/replayer/verdict/summary.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, rank_by);
ABSL_DECLARE_FLAG(std::string, clock);
ABSL_DECLARE_FLAG(std::string, threads);
ABSL_DECLARE_FLAG(std::string, windows);
ABSL_DECLARE_FLAG(std::string, touch);
ABSL_DECLARE_FLAG(std::string, format);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(int, passes);
ABSL_DECLARE_FLAG(int, min_runs);
ABSL_DECLARE_FLAG(int, max_runs);
ABSL_DECLARE_FLAG(bool, list_policies);

namespace alloctrace {
namespace {

// The flags' defaults, as --help shows them, are the structs'.
TEST(ReplayerConfigTest, FlagDefaultsAreTheStructDefaults) {
  const ReplayerConfig d;
  auto default_of = [](const char* name) {
    const absl::CommandLineFlag* f = absl::FindCommandLineFlag(name);
    return f == nullptr ? std::string("(no such flag)") : f->DefaultValue();
  };
  EXPECT_EQ(default_of("rank_by"), "cold");
  EXPECT_EQ(default_of("touch"), "auto");
  EXPECT_TRUE(d.measure.auto_touch);
  EXPECT_EQ(default_of("clock"), "auto");
  EXPECT_EQ(default_of("threads"), "auto");
  EXPECT_EQ(default_of("windows"), "auto");
  EXPECT_EQ(default_of("policies"), d.policies);
  EXPECT_EQ(default_of("format"), "table");
  EXPECT_EQ(default_of("out"), "");
  EXPECT_EQ(default_of("passes"), "50");
  EXPECT_EQ(default_of("warm_ms"), "5");
  EXPECT_EQ(default_of("precision"), "3");
  EXPECT_EQ(default_of("budget"), "3");
  EXPECT_EQ(default_of("min_runs"), "10");
  EXPECT_EQ(default_of("max_runs"), "500");
  EXPECT_EQ(default_of("rss_samples"), "200");
  EXPECT_EQ(default_of("seed"), "1");
  EXPECT_EQ(default_of("total_budget"), "16");
  EXPECT_EQ(default_of("race"), "true");
  EXPECT_EQ(default_of("race_min_runs"), "3");
  EXPECT_EQ(default_of("max_reruns"), "2");
  EXPECT_EQ(default_of("screen_runs"), "3");
}

// Parsing the untouched flags gives the default structs, field by field.
// --format's help lists the formats of the table, with what each writes.
TEST(ReplayerConfigTest, FormatHelpIsTheFormatTable) {
  const absl::CommandLineFlag* f = absl::FindCommandLineFlag("format");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Help(), "report format: " + ReportFormatHelp() +
                           "; several, comma-separated, with as many --out files, write one "
                           "measurement in each");
}

TEST(ReplayerConfigTest, UntouchedFlagsParseToTheDefaults) {
  absl::FlagSaver saver;
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  const ReplayerConfig d;
  EXPECT_EQ(c->policies, d.policies);
  const RoundsSettings &r = c->measure.rounds, &dr = d.measure.rounds;
  EXPECT_DOUBLE_EQ(r.precision, dr.precision);
  EXPECT_EQ(r.budget_seconds, dr.budget_seconds);
  EXPECT_EQ(r.min_runs, dr.min_runs);
  EXPECT_EQ(r.max_runs, dr.max_runs);
  EXPECT_EQ(r.seed, dr.seed);
  EXPECT_EQ(r.race, dr.race);
  EXPECT_EQ(r.race_min_runs, dr.race_min_runs);
  EXPECT_EQ(r.total_budget_seconds, dr.total_budget_seconds);
  const RunOptions &o = c->measure.run_options, &dopt = d.measure.run_options;
  EXPECT_EQ(o.max_passes, dopt.max_passes);
  EXPECT_DOUBLE_EQ(o.min_warm_seconds, dopt.min_warm_seconds);
  EXPECT_EQ(o.touch, dopt.touch);
  EXPECT_EQ(o.rss_samples, dopt.rss_samples);
  EXPECT_EQ(c->measure.max_reruns, d.measure.max_reruns);
  EXPECT_EQ(c->measure.screen_runs, d.measure.screen_runs);
  EXPECT_EQ(c->measure.rank_by, d.measure.rank_by);
  EXPECT_EQ(c->measure.clock, d.measure.clock);
  EXPECT_EQ(c->threads, d.threads);
  EXPECT_EQ(c->run_timeout_seconds, d.run_timeout_seconds);
  EXPECT_EQ(c->memory_limit_mb, d.memory_limit_mb);
  EXPECT_EQ(c->memory_limit_factor, d.memory_limit_factor);
  EXPECT_EQ(c->memory_limit_floor_mb, d.memory_limit_floor_mb);
  EXPECT_EQ(c->formats, d.formats);
  EXPECT_EQ(c->outs, d.outs);
  EXPECT_EQ(c->quiet, d.quiet);
}

// The report's context from the default config is the default context:
// code that builds one without the config reads runs as the replayer does.
TEST(ReplayerConfigTest, TheReportContextAgreesWithTheConfig) {
  const ReportContext from_config = ReportContextFor(ReplayerConfig());
  const ReportContext d;
  EXPECT_EQ(from_config.rank_by, d.rank_by);
  EXPECT_EQ(from_config.clock, d.clock);
  EXPECT_EQ(from_config.touch, d.touch);
  EXPECT_EQ(from_config.passes, d.passes);
  EXPECT_DOUBLE_EQ(from_config.warm_ms, d.warm_ms);
  EXPECT_DOUBLE_EQ(from_config.precision, d.precision);
  EXPECT_EQ(from_config.budget_seconds, d.budget_seconds);
  EXPECT_EQ(from_config.own_budget, d.own_budget);
  EXPECT_EQ(from_config.min_runs, d.min_runs);
  EXPECT_DOUBLE_EQ(from_config.rss_slack, d.rss_slack);
}

// Every enum flag is parsed and printed through one word table: each word
// reads back as its value.
TEST(ReplayerConfigTest, EnumWordTablesRoundTrip) {
  for (const auto& w : kTimingClockWords) EXPECT_EQ(*ParseWord(kTimingClockWords, w.word), w.value);
  for (const auto& w : kRankByWords) EXPECT_EQ(*ParseWord(kRankByWords, w.word), w.value);
  for (const auto& w : kTouchWords) EXPECT_EQ(*ParseWord(kTouchWords, w.word), w.value);
  for (const auto& w : kReplayThreadsWords) {
    EXPECT_EQ(*ParseWord(kReplayThreadsWords, w.word), w.value);
  }
  for (const auto& w : kWindowsModeWords) EXPECT_EQ(*ParseWord(kWindowsModeWords, w.word), w.value);
  for (const auto& w : kListFormatWords) EXPECT_EQ(*ParseWord(kListFormatWords, w.word), w.value);
  EXPECT_STREQ(WordOf(kTimingClockWords, TimingClock::kWall), "wall");
}

TEST(ReplayerConfigTest, BadValuesAreUsageErrorsNamingTheFlag) {
  struct Case {
    void (*set)();
    const char* message;
  };
  const Case cases[] = {
      {[] { absl::SetFlag(&FLAGS_passes, 0); }, "--passes=0: must be 1 to 1000"},
      {[] { absl::SetFlag(&FLAGS_rank_by, "best"); }, "--rank_by=best: must be cold or warm"},
      {[] { absl::SetFlag(&FLAGS_format, "xml"); },
       "--format=xml: must be table, markdown, csv, csv-runs, csv-classes, json or html"},
      {[] { absl::SetFlag(&FLAGS_format, "csv,json"); },
       "--format=csv,json needs 2 comma-separated --out files"},
      {[] { absl::SetFlag(&FLAGS_max_runs, 3); },
       "--min_runs=10, --max_runs=3: need 1 <= min_runs <= max_runs <= 100000"},
      {[] { absl::SetFlag(&FLAGS_clock, "tsc"); }, "--clock=tsc: must be auto, cpu or wall"},
      {[] { absl::SetFlag(&FLAGS_threads, "all"); }, "--threads=all: must be auto, one or each"},
      {[] { absl::SetFlag(&FLAGS_windows, "some"); },
       "--windows=some: must be auto, never or always"},
      {[] {
         absl::SetFlag(&FLAGS_windows, "always");
         absl::SetFlag(&FLAGS_rank_by, "warm");
       },
       "--windows=always --rank_by=warm: a window has no warm pass to rank by"},
      {[] {
         absl::SetFlag(&FLAGS_touch, "walk");
         absl::SetFlag(&FLAGS_threads, "each");
       },
       "--touch=walk --threads=each: a walk reads the live blocks in the trace's one recorded "
       "order, so it replays on one thread (--threads=one, or auto)"},
      {[] {
         absl::SetFlag(&FLAGS_touch, "walk");
         absl::SetFlag(&FLAGS_windows, "always");
       },
       "--touch=walk --windows=always: a walk reads every block live since the trace's start, "
       "so it replays whole runs (--windows=never, or auto)"},
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
  EXPECT_EQ(c->list_format, ListFormat::kCc);
  absl::SetFlag(&FLAGS_format, "csv");
  EXPECT_EQ(ReplayerConfigFromFlags().status().message(),
            "--list-policies --format=csv: must be table, markdown or cc");
}

// --touch=walk replays on one thread, whole runs: auto resolves so.
TEST(ReplayerConfigTest, WalkResolvesAutoToOneThreadAndWholeRuns) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_touch, "walk");
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->measure.run_options.touch, Touch::kWalk);
  EXPECT_EQ(c->threads, ReplayThreads::kOne);
  EXPECT_EQ(c->measure.windows, WindowsMode::kNever);
}

// --touch=auto, the default, is resolved per trace (measure.h, TouchFor):
// the program touch where no collector walks; an unknown word names all.
TEST(ReplayerConfigTest, TouchIsAutoByDefault) {
  absl::FlagSaver saver;
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->measure.auto_touch);
  EXPECT_EQ(c->measure.run_options.touch, Touch::kProgram);
  EXPECT_EQ(c->threads, ReplayThreads::kAuto);  // no walk forces one thread
  EXPECT_EQ(c->measure.windows, WindowsMode::kAuto);
  EXPECT_TRUE(ReportContextFor(*c).auto_touch);
  absl::SetFlag(&FLAGS_touch, "program");
  c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->measure.auto_touch);
  EXPECT_EQ(c->measure.run_options.touch, Touch::kProgram);
  absl::SetFlag(&FLAGS_touch, "gc");
  EXPECT_EQ(ReplayerConfigFromFlags().status().message(),
            "--touch=gc: must be auto, none, first, whole, program or walk");
}

// --threads and --clock=auto reach the measurement: the clock unresolved
// (MeasureTrace resolves it per trace), the replay threads as typed.
TEST(ReplayerConfigTest, ThreadsAndClockReachTheMeasureSettings) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_threads, "one");
  absl::StatusOr<ReplayerConfig> c = ReplayerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->threads, ReplayThreads::kOne);
  EXPECT_EQ(c->measure.clock, TimingClock::kAuto);
  absl::SetFlag(&FLAGS_clock, "wall");
  EXPECT_EQ(ReplayerConfigFromFlags()->measure.clock, TimingClock::kWall);
}

TEST(ReplayerConfigTest, WarmRankingWithOnePassRanksByTheColdPass) {
  ReplayerConfig c;
  c.measure.rank_by = RankBy::kWarm;
  EXPECT_TRUE(ReportContextFor(c).warm());
  c.measure.run_options.max_passes = 1;
  EXPECT_FALSE(ReportContextFor(c).warm());
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
