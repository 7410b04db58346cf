// The stopping rule of the measurement protocol, fed with given runs (no
// timing, no child processes).
#include "alloctrace/replayer/measure.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "alloctrace/replayer/race.h"
#include "alloctrace/replayer/summary.h"

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
  EXPECT_EQ(RaceLook(set, 1, 0, 0.02, 1, 3, s), 1);
  EXPECT_TRUE(set[2].done);
  EXPECT_TRUE(set[2].runs.eliminated);
  EXPECT_EQ(set[2].runs.stop_reason,
            "eliminated after 5 runs: 3.10x [3.10, 3.10] slower than slab");
  EXPECT_FALSE(set[3].done);  // tied
  EXPECT_FALSE(set[0].done);  // the reference is never raced out
  EXPECT_FALSE(set[1].done);  // nor the leader
}

TEST(RaceTest, NoEliminationBeforeMinRunsOrWithinTheNoiseFloor) {
  const MeasureSettings s = TestSettings();
  std::vector<Measured> few = {Drifting("malloc", 4, 2), Drifting("slab", 4, 1),
                               Drifting("boost_pool", 4, 3)};
  EXPECT_EQ(RaceLook(few, 1, 0, 0, 1, 2, s), 0);
  // 5% slower in every round, but two malloc run sets read 10% apart.
  std::vector<Measured> near = {Drifting("malloc", 8, 2), Drifting("slab", 8, 1),
                                Drifting("close", 8, 1.05)};
  EXPECT_EQ(RaceLook(near, 1, 0, 0.10, 1, 2, s), 0);
  EXPECT_EQ(RaceLook(near, 1, 0, 0.0, 1, 2, s), 1);
}

}  // namespace
}  // namespace alloctrace
