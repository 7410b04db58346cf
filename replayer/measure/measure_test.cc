// The replay's mode of the rounds (measure.h) with fake children: which
// policies run, under which limits, and what each run comes to (no timing,
// no child processes).
#include "alloctrace/replayer/measure/measure.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/windows.h"
#include "alloctrace/replayer/measure/runs.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// A run of 1000 ops whose cold pass took `cold_ns` and whose warm pass
// took `warm_ns` per op of CPU time (wall time twice as long).
RunRecord MakeRun(int round, double cold_ns, double warm_ns) {
  RunRecord r;
  r.round = round;
  r.result.ops = 1000;
  for (double ns : {cold_ns, warm_ns}) {
    PassFigures f;
    f.cpu_seconds = ns * 1000 * 1e-9;
    f.wall_seconds = 2 * f.cpu_seconds;
    r.result.passes.push_back(f);
  }
  return r;
}

TEST(RankFiguresTest, TakesTheRankingPassByTheClock) {
  PolicyRuns runs;
  runs.runs = {MakeRun(0, 100, 10), MakeRun(1, 100, 20)};
  Ranking ranking{RankBy::kWarm, 2, TimingClock::kCpu};
  EXPECT_EQ(RankFigures(runs, ranking), (std::vector<double>{10, 20}));
  ranking.rank_by = RankBy::kCold;
  EXPECT_EQ(RankFigures(runs, ranking), (std::vector<double>{100, 100}));
  ranking.clock = TimingClock::kWall;
  EXPECT_EQ(RankFigures(runs, ranking), (std::vector<double>{200, 200}));
  ranking = Ranking{RankBy::kWarm, 1, TimingClock::kCpu};  // one pass: cold ranks
  EXPECT_EQ(RankFigures(runs, ranking), (std::vector<double>{100, 100}));
}

// A malloc's process cost is paid once a run of the program: the cold
// figure spreads it over the trace's ops; the warm passes (a long-running
// program's steady state) never pay it.
TEST(RankFiguresTest, TheColdFigureCountsTheProcessCostOnce) {
  PolicyRuns runs;
  runs.runs = {MakeRun(0, 100, 10)};
  runs.runs[0].result.process_seconds = 50e-6;  // 50 ns over each of 1000 ops
  EXPECT_DOUBLE_EQ(RunNsPerOp(runs.runs[0].result, false, TimingClock::kCpu), 150);
  EXPECT_DOUBLE_EQ(RunNsPerOp(runs.runs[0].result, false, TimingClock::kWall), 250);
  EXPECT_DOUBLE_EQ(RunNsPerOp(runs.runs[0].result, true, TimingClock::kCpu), 10);
  EXPECT_EQ(RankFigures(runs, Ranking{RankBy::kCold, 2, TimingClock::kCpu}),
            (std::vector<double>{150}));
}

// --touch=auto walks a trace whose header names its program's collector,
// where a walk can replay it; every other touch is as asked.
TEST(TouchForTest, AutoWalksACollectorsTraceOnOneThreadInWholeRuns) {
  MeasureSettings s;
  SharedProgram t;
  EXPECT_TRUE(s.auto_touch);  // the replayer's default
  EXPECT_EQ(TouchFor(s, t), Touch::kProgram);
  (*t.program.header.mutable_labels())["collector"] = "cpython";
  EXPECT_EQ(CollectorOf(t.program.header), "cpython");
  EXPECT_EQ(TouchFor(s, t), Touch::kWalk);
  s.windows = WindowsMode::kAlways;  // a walk reads blocks live since the start
  EXPECT_EQ(TouchFor(s, t), Touch::kProgram);
  s.windows = WindowsMode::kAuto;
  t.schedule.emplace();  // replayed per thread
  EXPECT_EQ(TouchFor(s, t), Touch::kProgram);
  t.schedule.reset();
  t.program.arena_events = 2;  // a capture's call-site classes (inspect --classes_out)
  EXPECT_EQ(TouchFor(s, t), Touch::kWalk);
  s.auto_touch = false;  // --touch=program, as asked
  EXPECT_EQ(TouchFor(s, t), Touch::kProgram);
  s.run_options.touch = Touch::kFirst;
  EXPECT_EQ(TouchFor(s, t), Touch::kFirst);
}

TEST(ResolveClockTest, AutoIsWallPerThreadOnFreeCoresAndCpuOtherwise) {
  EXPECT_EQ(ResolveClock(TimingClock::kAuto, 4, 8), TimingClock::kWall);
  EXPECT_EQ(ResolveClock(TimingClock::kAuto, 2, 2), TimingClock::kWall);
  // More replay threads than cores: the wall clock would time the scheduler.
  EXPECT_EQ(ResolveClock(TimingClock::kAuto, 3, 2), TimingClock::kCpu);
  EXPECT_EQ(ResolveClock(TimingClock::kAuto, 1, 8), TimingClock::kCpu);  // serialized
  EXPECT_EQ(ResolveClock(TimingClock::kCpu, 4, 8), TimingClock::kCpu);
  EXPECT_EQ(ResolveClock(TimingClock::kWall, 1, 1), TimingClock::kWall);
  EXPECT_EQ(ResolveClock(TimingClock::kWall, 3, 2), TimingClock::kWall);
}

// Fake children for MeasureTrace: a run of policy P takes seconds[P] (its
// figures in proportion); past its time limit it is killed, as
// RunInFreshChild kills it. Every start is logged with its limit.
struct FakeChildren {
  std::map<std::string, double> seconds;
  std::vector<std::pair<std::string, double>> started;  // policy, time limit
  std::vector<std::string> windows;  // the windows= word of each start ("" if none)
  int64_t switches = 0;              // involuntary context switches in every pass
  // A policy's next runs' seconds, in order (then seconds[P]).
  std::map<std::string, std::vector<double>> sequence;
  std::map<std::string, RunError> errors;  // what every run of a policy fails with

  ChildRun Run(const std::vector<std::string>& argv, const ChildLimits& limits) {
    std::string policy, window_word;
    for (const std::string& a : argv) {
      if (absl::StartsWith(a, "policy=")) policy = a.substr(7);
      if (absl::StartsWith(a, "windows=")) window_word = a.substr(8);
    }
    windows.push_back(window_word);
    started.emplace_back(policy, limits.wall_seconds);
    double t = seconds.at(policy);
    if (auto seq = sequence.find(policy); seq != sequence.end() && !seq->second.empty()) {
      t = seq->second.front();
      seq->second.erase(seq->second.begin());
    }
    if (limits.wall_seconds > 0 && t > limits.wall_seconds) {
      return ChildRun{absl::DeadlineExceededError(absl::StrFormat(
                          "killed after the time limit of %g s per run", limits.wall_seconds)),
                      limits.wall_seconds};
    }
    RunResult r;
    if (auto e = errors.find(policy); e != errors.end()) {
      r.error = e->second;
      return ChildRun{r, t};
    }
    r.ops = 1000;
    for (double share : {0.5, 0.25}) {  // a cold pass, a warm one
      PassFigures f;
      f.cpu_seconds = f.wall_seconds = share * t;
      f.involuntary_switches = switches;
      r.passes.push_back(f);
    }
    r.seconds = r.passes[0].wall_seconds;
    r.peak_rss = 1 << 20;
    return ChildRun{r, t};
  }
};

struct FakeRace {
  std::shared_ptr<FakeChildren> children = std::make_shared<FakeChildren>();
  PolicyInfos policies;
  SharedProgram shared;  // no fds: the fake children map nothing
  ReplayProgram& program = shared.program;
  MeasureSettings s;

  FakeRace() {
    for (const char* name : {"malloc", "slab/st/single", "boost_pool"}) {
      allocators::AllocatorInfo info;
      info.name = name;
      policies[name] = info;
    }
    program.path = "fake.trace";
    program.allocs = 500;
    program.frees = 500;
    program.threads = 1;
    program.peak_live_bytes = 1 << 20;
    s.rank_by = RankBy::kCold;
    s.run_options.max_passes = 2;
    s.clock = TimingClock::kCpu;
    s.rounds.min_runs = 5;
    s.rounds.budget_seconds = 3;
    s.rounds.limits.wall_seconds = 280;  // the configured limit (--run_timeout)
    std::shared_ptr<FakeChildren> c = children;
    s.run_child = [c](std::vector<std::string> argv, const std::string&,
                      const ChildLimits& limits) { return c->Run(argv, limits); };
  }

  // `schedule`: replayed per thread.
  MeasuredTrace Measure(const ThreadSchedule* schedule = nullptr) {
    if (schedule != nullptr) {
      shared.schedule = *schedule;
      shared.cross_thread_frees = schedule->cross_thread_frees;
      shared.schedule_fd = 3;
    }
    return MeasureTrace(shared, {"malloc", "slab/st/single", "boost_pool"}, false, policies, "self",
                        s);
  }
};

const PolicyRuns* Find(const MeasuredTrace& t, const std::string& name) {
  for (const PolicyRuns& p : t.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST(RaceTimeLimitTest, APolicy100xSlowerIsStoppedAndEliminatedNotFailed) {
  FakeRace race;
  race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 30}};
  const MeasuredTrace t = race.Measure();
  // malloc ran first, so the pace was known before boost_pool ran.
  ASSERT_FALSE(race.children->started.empty());
  EXPECT_EQ(race.children->started[0].first, "malloc");
  int boost_runs = 0;
  for (const auto& [policy, limit] : race.children->started) {
    if (policy == "malloc") {
      // The reference: not the race's limit, but no more than what is left
      // of the total budget's cap (below the configured 280 s).
      EXPECT_LE(limit, race.s.rounds.max_total_budget_seconds + kBudgetRunAllowanceSeconds);
      EXPECT_GE(limit, kBudgetRunFloorSeconds);
    }
    if (policy != "boost_pool") continue;
    ++boost_runs;
    // 20x the fastest run so far: slab's 0.25 s, or malloc's 0.3 s if slab
    // had not run yet.
    EXPECT_TRUE(limit == 20 * 0.25 || limit == 20 * 0.3) << limit;
  }
  EXPECT_EQ(boost_runs, 1);  // stopped once, then out of the race
  const PolicyRuns* boost = Find(t, "boost_pool");
  ASSERT_NE(boost, nullptr);
  EXPECT_TRUE(boost->eliminated);
  EXPECT_TRUE(boost->runs.empty());
  EXPECT_EQ(boost->attempts, 1);
  EXPECT_EQ(boost->failed, 0);
  EXPECT_TRUE(absl::StartsWith(boost->stop_reason, "eliminated in round 1: its run passed "))
      << boost->stop_reason;
  for (const char* name : {"malloc", "slab/st/single"}) {
    const PolicyRuns* p = Find(t, name);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(p->eliminated) << name;
    EXPECT_GE(p->runs.size(), 5u) << name;
    EXPECT_EQ(p->failed, 0) << name;
  }
  EXPECT_GE(t.noise.runs.size(), 5u);
}

TEST(RaceTimeLimitTest, WithoutTheRaceTheConfiguredLimitAloneApplies) {
  FakeRace race;
  race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 30}};
  race.s.rounds.race = false;
  race.s.rounds.limits.wall_seconds = 20;
  const MeasuredTrace t = race.Measure();
  for (const auto& [policy, limit] : race.children->started) EXPECT_EQ(limit, 20) << policy;
  const PolicyRuns* boost = Find(t, "boost_pool");
  ASSERT_NE(boost, nullptr);
  // Killed at the configured limit: failed, as ever.
  EXPECT_EQ(boost->failed, 1);
  EXPECT_EQ(boost->stop_reason, "failed");
  EXPECT_FALSE(boost->eliminated);
  EXPECT_TRUE(absl::StrContains(boost->first_error, "killed after the time limit of 20 s"))
      << boost->first_error;
}

TEST(RaceTimeLimitTest, AStoppedRunSetsNoPaceForTheTotalBudget) {
  // Round 1: 0.3 + 0.3 (malloc twice) + 0.25 + boost_pool's 6 s stopped.
  // Stretched by the whole round, the budget would be 5 x 6.85 s; the
  // rounds to come cost 0.85 s, so 5 x 0.85 + 6 s stays under 16.
  FakeRace race;
  race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 30}};
  race.s.rounds.min_runs = 100;  // none stops before the budget
  race.s.rounds.budget_seconds = 100;
  const MeasuredTrace t = race.Measure();
  const PolicyRuns* slab = Find(t, "slab/st/single");
  ASSERT_NE(slab, nullptr);
  EXPECT_EQ(slab->stop_reason, "total budget of 16 s spent (--total_budget)");
}

TEST(RaceTimeLimitTest, AFastOnlyEnoughPolicyIsNotStopped) {
  // 15x slower: within the race's limit, so it runs and the race decides.
  FakeRace race;
  race.children->seconds = {{"malloc", 0.4}, {"slab/st/single", 0.4}, {"boost_pool", 6}};
  const MeasuredTrace t = race.Measure();
  const PolicyRuns* boost = Find(t, "boost_pool");
  ASSERT_NE(boost, nullptr);
  EXPECT_GE(boost->runs.size(), 1u);
  EXPECT_FALSE(absl::StartsWith(boost->stop_reason, "eliminated in round")) << boost->stop_reason;
  EXPECT_EQ(boost->failed, 0);
}

// Every run switched: a serialized replay re-runs and counts them (the
// machine is busy); a per-thread replay, whose threads preempt one another,
// counts none and re-runs none.
// A run's error is acted on by its kind, never its words: an op the
// allocator could not serve fails every run (one attempt), running out of
// memory is over the limit (not a fault), anything else is tried again.
TEST(MeasureTraceTest, AFailedRunIsActedOnByItsKind) {
  for (RunErrorKind kind : {RunErrorKind::kOpFailed, RunErrorKind::kOutOfMemory,
                            RunErrorKind::kOther, RunErrorKind::kNone}) {
    FakeRace race;
    race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 0.2}};
    race.children->errors["boost_pool"] = {kind, "it went wrong"};
    const MeasuredTrace t = race.Measure();
    const PolicyRuns* boost = Find(t, "boost_pool");
    ASSERT_NE(boost, nullptr);
    const std::string word = WordOf(kRunErrorKindWords, kind);
    EXPECT_TRUE(boost->runs.empty()) << word;
    EXPECT_EQ(boost->failed, boost->attempts) << word;
    EXPECT_EQ(boost->first_error, "run 1: it went wrong") << word;
    const bool fatal = kind == RunErrorKind::kOpFailed || kind == RunErrorKind::kOutOfMemory;
    if (fatal) {
      EXPECT_EQ(boost->attempts, 1) << word;
    } else {
      EXPECT_EQ(boost->attempts, race.s.rounds.min_runs) << word;
    }
    EXPECT_EQ(boost->over_limit, kind == RunErrorKind::kOutOfMemory ? 1 : 0) << word;
  }
}

TEST(DisturbanceTest, APerThreadReplayIsNeverCountedDisturbed) {
  FakeRace serialized;
  serialized.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 0.5}};
  serialized.children->switches = 3;
  const MeasuredTrace a = serialized.Measure();
  EXPECT_GT(a.disturbance.disturbed, 0);
  EXPECT_GT(a.disturbance.disturbed - a.disturbance.kept, 0);  // re-run

  FakeRace per_thread;
  per_thread.children->seconds = serialized.children->seconds;
  per_thread.children->switches = 3;
  ThreadSchedule schedule;
  schedule.streams.resize(4);
  const MeasuredTrace b = per_thread.Measure(&schedule);
  EXPECT_EQ(b.replay_threads, 4u);
  EXPECT_GT(b.disturbance.runs, 0);
  EXPECT_EQ(b.disturbance.disturbed, 0);
  EXPECT_EQ(b.disturbance.kept, 0);
}

// Every run disturbed (so re-run, up to 2 times), one run per policy, a
// time limit of 20 s per run.
void DisturbEveryRunUnder20Seconds(FakeRace& race) {
  race.children->switches = 1;
  race.s.rounds.race = false;
  race.s.rounds.min_runs = 1;
  race.s.rounds.max_runs = 1;
  race.s.rounds.limits.wall_seconds = 20;
  race.s.max_reruns = 2;
}

// A run's time limit bounds its attempts together: every run is disturbed
// and takes 9 s under a 20 s limit, so a policy gets one re-run (18 s),
// not two (27 s, past the limit the budget's cap set).
TEST(MeasureTraceTest, ReRunsOfADisturbedRunFitItsTimeLimit) {
  FakeRace race;
  race.children->seconds = {{"malloc", 9}, {"slab/st/single", 9}, {"boost_pool", 9}};
  DisturbEveryRunUnder20Seconds(race);
  const MeasuredTrace t = race.Measure();
  std::map<std::string, int> starts;
  for (const auto& [policy, limit] : race.children->started) {
    ++starts[policy];
    EXPECT_LE(limit, 20) << policy;
  }
  EXPECT_EQ(starts["slab/st/single"], 2);
  EXPECT_EQ(starts["boost_pool"], 2);
  // The re-run's limit is what the first attempt left (glibc malloc runs
  // twice over, as the reference and its second run set: left out here).
  for (size_t i = 1; i < race.children->started.size(); ++i) {
    const auto& [policy, limit] = race.children->started[i];
    if (policy != "malloc" && policy == race.children->started[i - 1].first) {
      EXPECT_DOUBLE_EQ(limit, 11) << policy;
    }
  }
  EXPECT_EQ(Find(t, "slab/st/single")->runs.size(), 1u);
}

// A re-run stopped at what its run's limit left keeps the disturbed
// attempt before it: the run is not lost, nor failed.
TEST(MeasureTraceTest, AReRunPastWhatIsLeftKeepsTheAttemptBeforeIt) {
  FakeRace race;
  race.children->seconds = {{"malloc", 1}, {"slab/st/single", 9}, {"boost_pool", 1}};
  race.children->sequence["slab/st/single"] = {9, 12};  // the re-run takes 12 s of the 11 left
  DisturbEveryRunUnder20Seconds(race);
  const MeasuredTrace t = race.Measure();
  const PolicyRuns* slab = Find(t, "slab/st/single");
  ASSERT_NE(slab, nullptr);
  EXPECT_EQ(slab->failed, 0);
  ASSERT_EQ(slab->runs.size(), 1u);
  EXPECT_EQ(slab->runs[0].reruns, 0);
  EXPECT_TRUE(slab->runs[0].disturbed);
  EXPECT_DOUBLE_EQ(slab->runs[0].result.passes[0].cpu_seconds, 4.5);  // the 9 s attempt's
}

// The default set on a one-thread trace: the article grid's thread-safe
// policies are left out (each its st twin plus a lock), never run, and the
// trace's note counts them.
TEST(MeasureTraceTest, TheGridsLockedTwinsAreLeftOutOfAOneThreadTrace) {
  FakeRace race;
  for (const allocators::AllocatorInfo& info : allocators::AllAllocators()) {
    if (!absl::StartsWith(info.name, "pool/")) continue;
    race.policies[info.name] = info;
  }
  race.children->seconds = {{"malloc", 0.02}, {"slab/st/single", 0.01}, {"boost_pool", 0.03}};
  for (const auto& [name, info] : race.policies) race.children->seconds.emplace(name, 0.02);
  race.s.rounds.min_runs = 3;
  race.s.rounds.max_runs = 3;
  const MeasuredTrace t = MeasureTrace(race.shared, {"malloc", "slab/st/single", "boost_pool"},
                                       /*screen=*/true, race.policies, "self", race.s);
  for (const auto& [policy, limit] : race.children->started) {
    EXPECT_EQ(policy.find("/mt/"), std::string::npos) << policy;
  }
  EXPECT_NE(Find(t, "pool/simple/exp/st/single/free"), nullptr);
  EXPECT_EQ(Find(t, "pool/simple/exp/mt/single/free"), nullptr);
  ASSERT_EQ(t.trace.left_out_notes.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(t.trace.left_out_notes[0],
                               "the default set leaves out 24 thread-safe ones (mt: the trace "
                               "was recorded on one thread"))
      << t.trace.left_out_notes[0];
  // Recorded on two threads (no arena shared), the grid's mt policies run.
  race.program.threads = 2;
  const MeasuredTrace two = MeasureTrace(race.shared, {"malloc", "boost_pool"},
                                         /*screen=*/true, race.policies, "self", race.s);
  EXPECT_NE(Find(two, "pool/simple/exp/mt/single/free"), nullptr);
}

TEST(WindowsTest, ARoundRunsEveryContenderOnItsWindowsThenEachHasOneWholeRun) {
  FakeRace race;
  race.children->seconds = {{"malloc", 0.02}, {"slab/st/single", 0.01}, {"boost_pool", 0.03}};
  for (uint32_t i = 0; i < 200'000; ++i) {
    race.program.ops.push_back(
        ReplayOp{i % 1000, 16, 0, i % 2000 < 1000 ? ReplayKind::kAlloc : ReplayKind::kFree, 3, 0});
  }
  race.program.object_limit = 1000;
  race.s.windows = WindowsMode::kAlways;
  race.s.rounds.min_runs = 3;
  race.s.rounds.max_runs = 3;
  const MeasuredTrace out = race.Measure();
  EXPECT_TRUE(out.sampling.windowed);
  EXPECT_EQ(out.sampling.strata, 16);
  EXPECT_EQ(out.sampling.window_ops, 4096u);
  const FakeChildren& c = *race.children;
  ASSERT_EQ(c.windows.size(), c.started.size());
  // The windowed runs come first, each with a plan; then one whole run
  // (no plan) for each of the three.
  size_t windowed = 0;
  while (windowed < c.windows.size() && !c.windows[windowed].empty()) ++windowed;
  ASSERT_EQ(c.windows.size() - windowed, 3u);
  for (size_t i = windowed; i < c.windows.size(); ++i) EXPECT_EQ(c.windows[i], "");
  // Every contender of a round has the same windows; the rounds differ.
  std::map<std::string, int> runs_per_plan;
  for (size_t i = 0; i < windowed; ++i) ++runs_per_plan[c.windows[i]];
  EXPECT_GE(runs_per_plan.size(), 3u);
  for (const auto& [plan, runs] : runs_per_plan) {
    EXPECT_EQ(ParseWindowsWord(plan, race.program.ops.size()).value().size(), 16u);
    EXPECT_GE(runs, 3) << plan;  // the three policies, and malloc's noise set
  }
  for (const PolicyRuns& p : out.policies) {
    EXPECT_EQ(p.whole_runs.size(), 1u) << p.name;
    EXPECT_EQ(p.whole_run_error, "");
  }
}

}  // namespace
}  // namespace alloctrace
