// The stopping rule of the measurement protocol, fed with given runs (no
// timing, no child processes).
#include "alloctrace/replayer/measure/measure.h"

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/measure/race.h"
#include "alloctrace/replayer/verdict/summary.h"
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

Measured WithRuns(const std::string& name, const std::vector<double>& warm_ns) {
  Measured m;
  m.policy = name;
  m.runs.name = name;
  for (size_t i = 0; i < warm_ns.size(); ++i) {
    m.runs.runs.push_back(MakeRun(static_cast<int>(i), 100, warm_ns[i]));
  }
  m.runs.attempts = static_cast<int>(warm_ns.size());
  return m;
}

MeasureSettings TestSettings() {
  MeasureSettings s;
  s.ctx.rank_by = "warm";
  s.ctx.passes = 2;
  s.ctx.clock = "cpu";
  s.ctx.precision = 0.03;
  s.ctx.budget_seconds = 3;
  s.ctx.min_runs = 5;
  s.max_runs = 50;
  s.race_min_runs = 5;  // (the default is 3: the tests below count from 5)
  return s;
}

TEST(RankFiguresTest, TakesTheRankingPassByTheClock) {
  MeasureSettings s = TestSettings();
  const Measured m = WithRuns("slab", {10, 20});
  EXPECT_EQ(RankFigures(m.runs, s.ctx), (std::vector<double>{10, 20}));
  s.ctx.rank_by = "cold";
  EXPECT_EQ(RankFigures(m.runs, s.ctx), (std::vector<double>{100, 100}));
  s.ctx.clock = "wall";
  EXPECT_EQ(RankFigures(m.runs, s.ctx), (std::vector<double>{200, 200}));
}

TEST(UpdateDoneTest, SteadyRunsArePreciseOnlyAfterMinRuns) {
  const MeasureSettings s = TestSettings();
  Measured m = WithRuns("slab", {50, 50, 50, 50});
  UpdateDone(m, nullptr, s);
  EXPECT_FALSE(m.done);
  m.runs.runs.push_back(MakeRun(4, 100, 50));
  UpdateDone(m, nullptr, s);
  EXPECT_TRUE(m.done);
  EXPECT_EQ(m.runs.stop_reason, "precise");
}

TEST(UpdateDoneTest, TheRatioToTheReferenceMustBePreciseToo) {
  const MeasureSettings s = TestSettings();
  // Steady alone, but its ratio to a reference that swings by 2x is not.
  Measured m = WithRuns("slab", {50, 50, 50, 50, 50, 50});
  const Measured ref = WithRuns("malloc", {50, 100, 50, 100, 50, 100});
  EXPECT_TRUE(Precise(m, nullptr, s.ctx));
  EXPECT_FALSE(Precise(m, &ref, s.ctx));
  UpdateDone(m, &ref, s);
  EXPECT_FALSE(m.done);
  const Measured steady_ref = WithRuns("malloc", {75, 75, 75, 75, 75, 75});
  EXPECT_TRUE(Precise(m, &steady_ref, s.ctx));
}

TEST(UpdateDoneTest, NoisyRunsStopAtTheBudgetThenAtMaxRuns) {
  MeasureSettings s = TestSettings();
  Measured m = WithRuns("slab", {10, 90, 10, 90, 10, 90});
  m.spent = 1;
  UpdateDone(m, nullptr, s);
  EXPECT_FALSE(m.done);
  m.spent = 3;
  UpdateDone(m, nullptr, s);
  EXPECT_TRUE(m.done);
  EXPECT_EQ(m.runs.stop_reason, "budget of 3 s spent");

  Measured n = WithRuns("slab", {10, 90, 10, 90, 10, 90});
  s.max_runs = 6;
  UpdateDone(n, nullptr, s);
  EXPECT_TRUE(n.done);
  EXPECT_EQ(n.runs.stop_reason, "--max_runs=6 reached");
}

TEST(UpdateDoneTest, AFailureStopsAfterMinAttemptsOrAtOnceIfFatal) {
  const MeasureSettings s = TestSettings();
  Measured m = WithRuns("slab", {50, 50});
  m.runs.failed = 1;
  m.runs.attempts = 3;
  UpdateDone(m, nullptr, s);
  EXPECT_FALSE(m.done);
  m.runs.attempts = 5;
  UpdateDone(m, nullptr, s);
  EXPECT_TRUE(m.done);
  EXPECT_EQ(m.runs.stop_reason, "failed");

  Measured f = WithRuns("slab", {});
  f.runs.failed = 1;
  f.runs.attempts = 1;
  f.fatal = true;
  UpdateDone(f, nullptr, s);
  EXPECT_TRUE(f.done);
  EXPECT_EQ(f.runs.stop_reason, "failed");
}

// slab/st/single, the race's leader, was precise after 10 runs and ran on
// so the others had their pair; ten noisy runs more widened its CI. The
// report listed it "(precise)" under "CI wider than +-3%".
TEST(UpdateDoneTest, APreciseLeaderThatRanOnIsRecheckedAtTheEnd) {
  const MeasureSettings s = TestSettings();
  Measured m = WithRuns("slab/st/single", std::vector<double>(10, 50));
  UpdateDone(m, nullptr, s);
  ASSERT_EQ(m.runs.stop_reason, "precise");
  RecheckPrecise(m, nullptr, s.ctx);
  EXPECT_EQ(m.runs.stop_reason, "precise");  // still so
  std::vector<double> slower_later(10, 50);
  slower_later.insert(slower_later.end(), 10, 60);  // the machine slowed down
  Measured more = WithRuns("slab/st/single", slower_later);
  more.done = true;
  more.runs.stop_reason = "precise";
  RecheckPrecise(more, nullptr, s.ctx);
  EXPECT_EQ(more.runs.stop_reason,
            "precise once, then ran on so the others' runs had their pair; its CIs widened since");
}

TEST(UpdateDoneTest, ADoneEntryStaysAsItIs) {
  const MeasureSettings s = TestSettings();
  Measured m = WithRuns("slab", {});
  m.done = true;
  m.runs.stop_reason = "skipped";
  UpdateDone(m, nullptr, s);
  EXPECT_EQ(m.runs.stop_reason, "skipped");
}

// Runs whose warm pass takes base[i % size] * factor ns in round i.
Measured Drifting(const std::string& name, int rounds, double factor) {
  static const double kBase[] = {50, 60, 45, 55, 52, 58, 47, 61};
  std::vector<double> v;
  for (int i = 0; i < rounds; ++i) v.push_back(kBase[i % 8] * factor);
  return WithRuns(name, v);
}

TEST(RaceTest, TheLevelSplitsAlphaOverEntrantsAndLooks) {
  EXPECT_NEAR(RaceLevel(1, 1), 6 * 0.05 / (M_PI * M_PI), 1e-12);
  EXPECT_NEAR(RaceLevel(2, 10), RaceLevel(1, 1) / 40, 1e-12);
  // Summed over every look, at most alpha per entrant.
  double sum = 0;
  for (int t = 1; t <= 100000; ++t) sum += RaceLevel(t, 1);
  EXPECT_LE(sum, kRaceAlpha);
  EXPECT_GT(sum, 0.99 * kRaceAlpha);
}

TEST(RaceTest, TheLeaderIsTheLowestMedianThatRaces) {
  const MeasureSettings s = TestSettings();
  std::vector<Measured> set = {Drifting("malloc", 5, 2), Drifting("slab", 5, 1),
                               Drifting("bump", 5, 0.1), Drifting("crashed", 5, 0.5)};
  set[3].runs.failed = 1;
  EXPECT_EQ(RaceLeader(set, s.ctx), 1u);  // bump and the failed one do not race
  set[1].runs.eliminated = true;
  EXPECT_EQ(RaceLeader(set, s.ctx), 0u);
}

TEST(RaceTest, AClearlySlowerPolicyIsEliminatedWithItsReason) {
  const MeasureSettings s = TestSettings();  // race_min_runs 5
  std::vector<Measured> set = {Drifting("malloc", 5, 2), Drifting("slab", 5, 1),
                               Drifting("boost_pool", 5, 3.1), Drifting("tied", 5, 1.0)};
  // tied is within 1% of slab, one way or the other, round by round.
  for (size_t i = 0; i < set[3].runs.runs.size(); ++i) {
    PassFigures& warm = set[3].runs.runs[i].result.passes[1];
    warm.cpu_seconds *= i % 2 ? 1.01 : 0.99;
  }
  EXPECT_EQ(RaceLook(set, {1, 1}, 0, 0.02, 1, 3, s), 1);
  EXPECT_TRUE(set[2].done);
  EXPECT_TRUE(set[2].runs.eliminated);
  EXPECT_EQ(set[2].runs.stop_reason,
            "eliminated after 5 runs: 3.10x [3.10, 3.10] slower than slab");
  EXPECT_FALSE(set[3].done);  // tied
  EXPECT_FALSE(set[0].done);  // the reference is never raced out
  EXPECT_FALSE(set[1].done);  // nor the leader
}

TEST(RaceTest, TheDefaultFirstLookComesAtThreeRoundsForGrossDifferencesOnly) {
  MeasureSettings s = TestSettings();
  s.race_min_runs = MeasureSettings{}.race_min_runs;
  ASSERT_EQ(s.race_min_runs, 3);
  // Three rounds, 61 entrants: the level is 6 x 0.05 / (pi^2 x 61), about
  // 0.0005. A policy 10x slower with per-round noise of a few percent is
  // out; one 1.3x slower with per-round noise of 20% is not, yet.
  auto noisy = [](const std::string& name, double factor, double spread) {
    Measured m = Drifting(name, 3, factor);
    for (size_t i = 0; i < m.runs.runs.size(); ++i) {
      m.runs.runs[i].result.passes[1].cpu_seconds *= 1 + spread * (static_cast<double>(i) - 1);
    }
    return m;
  };
  std::vector<Measured> set = {Drifting("malloc", 3, 2), Drifting("slab", 3, 1),
                               noisy("boost_pool", 10, 0.03), noisy("close", 1.3, 0.2)};
  EXPECT_EQ(RaceLook(set, {1, 1}, 0, 0.02, 1, 61, s), 1);
  EXPECT_TRUE(set[2].runs.eliminated);
  EXPECT_FALSE(set[3].runs.eliminated);
  // Two rounds: never.
  std::vector<Measured> two = {Drifting("malloc", 2, 2), Drifting("slab", 2, 1),
                               Drifting("boost_pool", 2, 10)};
  EXPECT_EQ(RaceLook(two, {1, 1}, 0, 0, 1, 2, s), 0);
}

TEST(RaceTest, NoEliminationBeforeMinRunsOrWithinTheNoiseFloor) {
  const MeasureSettings s = TestSettings();
  std::vector<Measured> few = {Drifting("malloc", 4, 2), Drifting("slab", 4, 1),
                               Drifting("boost_pool", 4, 3)};
  EXPECT_EQ(RaceLook(few, {1, 1}, 0, 0, 1, 2, s), 0);
  // 5% slower in every round, but two malloc run sets read 10% apart.
  std::vector<Measured> near = {Drifting("malloc", 8, 2), Drifting("slab", 8, 1),
                                Drifting("close", 8, 1.05)};
  EXPECT_EQ(RaceLook(near, {1, 1}, 0, 0.10, 1, 2, s), 0);
  EXPECT_EQ(RaceLook(near, {1, 1}, 0, 0.0, 1, 2, s), 1);
}

TEST(RaceTest, APolicyThatFreesRacesTheFastestThatFrees) {
  const MeasureSettings s = TestSettings();
  // keep never frees and leads by 5%; slab frees, boost_pool frees and is
  // 3x slower, slow_keep never frees and is 1.3x slower than keep.
  std::vector<Measured> set = {Drifting("malloc", 6, 2), Drifting("keep", 6, 0.95),
                               Drifting("slab", 6, 1), Drifting("boost_pool", 6, 3),
                               Drifting("slow_keep", 6, 1.3)};
  set[1].runs.frees_blocks = false;
  set[4].runs.frees_blocks = false;
  const RaceLeaders leaders = FindRaceLeaders(set, s.ctx);
  EXPECT_EQ(leaders.fastest, 1u);
  EXPECT_EQ(leaders.freeing, 2u);
  EXPECT_EQ(RaceLook(set, leaders, 0, 0.0, 1, 4, s), 2);
  EXPECT_FALSE(set[2].done);  // slab: 5% slower than keep, but the fastest that frees
  EXPECT_TRUE(set[3].runs.eliminated);
  EXPECT_EQ(set[3].runs.stop_reason,
            "eliminated after 6 runs: 3.00x [3.00, 3.00] slower than slab");
  EXPECT_TRUE(set[4].runs.eliminated);  // never frees: raced against keep
  EXPECT_NE(set[4].runs.stop_reason.find("slower than keep"), std::string::npos);
  // Were slab never to free, keep would eliminate it.
  std::vector<Measured> same = {Drifting("malloc", 6, 2), Drifting("keep", 6, 0.95),
                                Drifting("slab", 6, 1)};
  same[1].runs.frees_blocks = false;
  same[2].runs.frees_blocks = false;
  EXPECT_EQ(RaceLook(same, FindRaceLeaders(same, s.ctx), 0, 0.0, 1, 2, s), 1);
  EXPECT_TRUE(same[2].runs.eliminated);
}

TEST(RaceTimeLimitTest, TwentyTimesThePaceAtLeastTheFloorAtMostTheConfigured) {
  std::vector<Measured> set = {WithRuns("malloc", {50}), WithRuns("slab", {40}),
                               WithRuns("boost_pool", {})};
  // No completed run yet: no race limit.
  EXPECT_EQ(RaceTimeLimit(set, 2, 0, 280).seconds, 0);
  set[0].run_seconds = {0.5};
  set[1].run_seconds = {0.4, 0.3, 0.9};  // median 0.4: the pace
  RaceRunLimit l = RaceTimeLimit(set, 2, 0, 280);
  EXPECT_DOUBLE_EQ(l.seconds, 8);
  EXPECT_EQ(l.pace_policy, "slab");
  EXPECT_DOUBLE_EQ(l.pace_seconds, 0.4);
  EXPECT_EQ(RaceTimeLimit(set, 2, 0, 0).seconds, 8);    // no configured limit
  EXPECT_EQ(RaceTimeLimit(set, 2, 0, 8).seconds, 0);    // the configured one is as low
  EXPECT_EQ(RaceTimeLimit(set, 0, 0, 280).seconds, 0);  // malloc, the reference
  EXPECT_EQ(RaceTimeLimit(set, 1, 0, 280).seconds, 0);  // the pace itself
  // A failed or eliminated policy sets no pace; nor does bump.
  set[1].runs.failed = 1;
  EXPECT_DOUBLE_EQ(RaceTimeLimit(set, 2, 0, 280).seconds, 10);
  set[0].run_seconds = {0.01};
  EXPECT_DOUBLE_EQ(RaceTimeLimit(set, 2, 0, 280).seconds, kRaceRunTimeFloorSeconds);
}

TEST(RaceTimeLimitTest, AStoppedPolicyIsEliminatedSayingWhy) {
  Measured m = WithRuns("boost_pool", {});
  EliminateStopped(m, RaceRunLimit{6.1, "malloc", 0.305}, 0);
  EXPECT_TRUE(m.done);
  EXPECT_TRUE(m.runs.eliminated);
  EXPECT_EQ(m.runs.failed, 0);
  EXPECT_EQ(m.runs.stop_reason,
            "eliminated in round 1: its run passed 20x the fastest policy's run time (malloc: "
            "0.30 s) and was stopped at 6.1 s");
  Measured f = WithRuns("boost_pool", {});
  EliminateStopped(f, RaceRunLimit{5, "malloc", 0.05}, 2);
  EXPECT_EQ(f.runs.stop_reason,
            "eliminated in round 3: its run passed 5 s, more than 20x the fastest policy's "
            "run time (malloc: 0.05 s), and was stopped");
}

// Fake children for MeasureTrace: a run of policy P takes seconds[P] (its
// figures in proportion); past its time limit it is killed, as
// RunInFreshChild kills it. Every start is logged with its limit.
struct FakeChildren {
  std::map<std::string, double> seconds;
  std::vector<std::pair<std::string, double>> started;  // policy, time limit
  int64_t switches = 0;  // involuntary context switches in every pass

  ChildRun Run(const std::vector<std::string>& argv, const ChildLimits& limits) {
    std::string policy;
    for (const std::string& a : argv) {
      if (absl::StartsWith(a, "policy=")) policy = a.substr(7);
    }
    started.emplace_back(policy, limits.wall_seconds);
    const double t = seconds.at(policy);
    if (limits.wall_seconds > 0 && t > limits.wall_seconds) {
      return ChildRun{absl::DeadlineExceededError(absl::StrFormat(
                          "killed after the time limit of %g s per run", limits.wall_seconds)),
                      limits.wall_seconds};
    }
    RunResult r;
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
  ReplayProgram program;
  MeasureSettings s;

  FakeRace() {
    for (const char* name : {"malloc", "slab/st/single", "boost_pool"}) {
      allocators::AllocatorInfo info;
      info.name = name;
      info.family = "baseline";
      policies[name] = info;
    }
    program.path = "fake.trace";
    program.allocs = 500;
    program.frees = 500;
    program.threads = 1;
    program.peak_live_bytes = 1 << 20;
    s.ctx.rank_by = "cold";
    s.ctx.passes = 2;
    s.ctx.clock = "cpu";
    s.ctx.min_runs = 5;
    s.ctx.budget_seconds = 3;
    s.limits.wall_seconds = 280;  // the configured limit (--run_timeout)
    std::shared_ptr<FakeChildren> c = children;
    s.run_child = [c](std::vector<std::string> argv, const std::string&,
                      const ChildLimits& limits) { return c->Run(argv, limits); };
  }

  TraceReport Measure(const ThreadSchedule* schedule = nullptr) {
    return MeasureTrace(program, {"malloc", "slab/st/single", "boost_pool"}, false, policies,
                        "self", s, -1, schedule, schedule != nullptr ? 3 : -1);
  }
};

const PolicyResult* Find(const TraceReport& t, const std::string& name) {
  for (const PolicyResult& p : t.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST(RaceTimeLimitTest, APolicy100xSlowerIsStoppedAndEliminatedNotFailed) {
  FakeRace race;
  race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 30}};
  const TraceReport t = race.Measure();
  // malloc ran first, so the pace was known before boost_pool ran.
  ASSERT_FALSE(race.children->started.empty());
  EXPECT_EQ(race.children->started[0].first, "malloc");
  int boost_runs = 0;
  for (const auto& [policy, limit] : race.children->started) {
    if (policy == "malloc") {
      EXPECT_EQ(limit, 280);  // the reference: the configured limit
    }
    if (policy != "boost_pool") continue;
    ++boost_runs;
    // 20x the fastest run so far: slab's 0.25 s, or malloc's 0.3 s if slab
    // had not run yet.
    EXPECT_TRUE(limit == 20 * 0.25 || limit == 20 * 0.3) << limit;
  }
  EXPECT_EQ(boost_runs, 1);  // stopped once, then out of the race
  const PolicyResult* boost = Find(t, "boost_pool");
  ASSERT_NE(boost, nullptr);
  EXPECT_TRUE(boost->ok());
  EXPECT_TRUE(boost->eliminated);
  EXPECT_EQ(boost->runs, 0);
  EXPECT_EQ(boost->attempts, 1);
  EXPECT_EQ(boost->failed, 0);
  EXPECT_FALSE(boost->ns_per_op.has_data());
  EXPECT_TRUE(absl::StartsWith(boost->stop_reason, "eliminated in round 1: its run passed "))
      << boost->stop_reason;
  EXPECT_EQ(t.failed_policies, 0);
  EXPECT_EQ(t.policies.back().name, "boost_pool");  // after those with figures
  EXPECT_NE(t.verdict.recommended, "boost_pool");
  EXPECT_FALSE(t.verdict.recommended.empty());
  for (const char* name : {"malloc", "slab/st/single"}) {
    const PolicyResult* p = Find(t, name);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->ok()) << name;
    EXPECT_FALSE(p->eliminated) << name;
    EXPECT_GE(p->runs, 5) << name;
    EXPECT_EQ(p->failed, 0) << name;
  }
}

TEST(RaceTimeLimitTest, WithoutTheRaceTheConfiguredLimitAloneApplies) {
  FakeRace race;
  race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 30}};
  race.s.race = false;
  race.s.limits.wall_seconds = 20;
  const TraceReport t = race.Measure();
  for (const auto& [policy, limit] : race.children->started) EXPECT_EQ(limit, 20) << policy;
  const PolicyResult* boost = Find(t, "boost_pool");
  ASSERT_NE(boost, nullptr);
  // Killed at the configured limit: FAILED, as ever.
  EXPECT_EQ(boost->status, PolicyResult::Status::kFailed);
  EXPECT_FALSE(boost->eliminated);
  EXPECT_TRUE(absl::StrContains(boost->failure, "killed after the time limit of 20 s"))
      << boost->failure;
  EXPECT_EQ(t.failed_policies, 1);
}

TEST(RaceTimeLimitTest, AStoppedRunSetsNoPaceForTheTotalBudget) {
  // Round 1: 0.3 + 0.3 (malloc twice) + 0.25 + boost_pool's 6 s stopped.
  // Stretched by the whole round, the budget would be 5 x 6.85 s; the
  // rounds to come cost 0.85 s, so 5 x 0.85 + 6 s stays under 16.
  FakeRace race;
  race.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 30}};
  race.s.ctx.min_runs = 100;  // none stops before the budget
  race.s.ctx.budget_seconds = 100;
  const TraceReport t = race.Measure();
  const PolicyResult* slab = Find(t, "slab/st/single");
  ASSERT_NE(slab, nullptr);
  EXPECT_EQ(slab->stop_reason, "total budget of 16 s spent (--total_budget)");
}

TEST(RaceTimeLimitTest, AFastOnlyEnoughPolicyIsNotStopped) {
  // 15x slower: within the race's limit, so it runs and the race decides.
  FakeRace race;
  race.children->seconds = {{"malloc", 0.4}, {"slab/st/single", 0.4}, {"boost_pool", 6}};
  const TraceReport t = race.Measure();
  const PolicyResult* boost = Find(t, "boost_pool");
  ASSERT_NE(boost, nullptr);
  EXPECT_GE(boost->runs, 1);
  EXPECT_FALSE(absl::StartsWith(boost->stop_reason, "eliminated in round")) << boost->stop_reason;
  EXPECT_EQ(t.failed_policies, 0);
}

// Every run switched: a serialized replay re-runs and counts them (the
// machine is busy); a per-thread replay, whose threads preempt one another,
// counts none and re-runs none.
TEST(DisturbanceTest, APerThreadReplayIsNeverCountedDisturbed) {
  FakeRace serialized;
  serialized.children->seconds = {{"malloc", 0.3}, {"slab/st/single", 0.25}, {"boost_pool", 0.5}};
  serialized.children->switches = 3;
  const TraceReport a = serialized.Measure();
  EXPECT_GT(a.disturbance.disturbed, 0);
  EXPECT_GT(a.disturbance.disturbed - a.disturbance.kept, 0);  // re-run

  FakeRace per_thread;
  per_thread.children->seconds = serialized.children->seconds;
  per_thread.children->switches = 3;
  ThreadSchedule schedule;
  schedule.streams.resize(4);
  const TraceReport b = per_thread.Measure(&schedule);
  EXPECT_EQ(b.replay_threads, 4u);
  EXPECT_GT(b.disturbance.runs, 0);
  EXPECT_EQ(b.disturbance.disturbed, 0);
  EXPECT_EQ(b.disturbance.kept, 0);
}

}  // namespace
}  // namespace alloctrace
