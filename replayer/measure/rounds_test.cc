// The rounds core (rounds.h) through a fake runner: the order, the
// reference in every round, the race's looks, the budgets (no timing, no
// child processes). The stopping rule's own tests: stopping_rule_test.cc.
#include "alloctrace/replayer/measure/rounds.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "alloctrace/replayer/measure/stats.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

RoundsSettings TestSettings() {
  RoundsSettings s;
  s.precision = 0.03;
  s.budget_seconds = 3;
  s.min_runs = 5;
  s.max_runs = 50;
  s.race_min_runs = 5;
  return s;
}

// Twelve rounds at most, looked at from the third; nobody is ever precise
// and no budget runs out: only the race stops a contender early.
RoundsSettings RaceOnly() {
  RoundsSettings s = TestSettings();
  s.race_min_runs = 3;
  s.precision = 0.0001;
  s.budget_seconds = 1000;
  s.max_runs = 12;
  s.total_budget_seconds = 0;
  return s;
}

// A runner whose contender i takes seconds[i] per run, its figure in
// proportion, with a steady wobble of 1% by round; every run is logged.
class FakeRunner : public ContenderRunner {
 public:
  explicit FakeRunner(std::vector<double> seconds) : seconds_(std::move(seconds)) {}
  RunOutcome Run(size_t i, int round, const ChildLimits& limits, bool race_limited) override {
    log.emplace_back(i, round);
    RunOutcome o;
    const double t = seconds_[i] * (round % 2 ? 1.01 : 0.99);
    if (fail.count(i)) {
      o.end = RunOutcome::End::kFailed;
      o.error = "crashed with signal 11";
      o.fatal = true;
      o.seconds = t;
      return o;
    }
    if (limits.wall_seconds > 0 && t > limits.wall_seconds) {
      o.end = race_limited ? RunOutcome::End::kStopped : RunOutcome::End::kFailed;
      o.error = "killed after the time limit";
      o.seconds = limits.wall_seconds;
      return o;
    }
    o.figure = t * 1e6;
    o.seconds = t;
    return o;
  }
  std::vector<std::pair<size_t, int>> log;  // contender, round
  std::map<size_t, bool> fail;

 private:
  std::vector<double> seconds_;
};

std::vector<Contender> Three() {
  std::vector<Contender> cs(4);
  cs[0].name = "ref";
  cs[0].role = Role::kReference;
  cs[1].name = "noise";
  cs[1].role = Role::kNoise;
  cs[2].name = "fast";
  cs[3].name = "slow";
  return cs;
}

TEST(RaceLooksTest, AfterEveryRoundToEightThenByAnEighth) {
  std::vector<int> looks;
  for (int done = 3; done <= 30; done = NextLookAfter(done)) looks.push_back(done);
  EXPECT_EQ(looks, (std::vector<int>{3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 17, 20, 23, 26, 30}));
  // Far on, still an eighth: from 30 rounds to 1000, 29 looks, not 970.
  int n = 0;
  for (int done = 30; done < 1000; done = NextLookAfter(done)) ++n;
  EXPECT_EQ(n, 29);
}

TEST(RunRoundsTest, TheReferenceRunsInEveryRoundAnyoneRuns) {
  std::vector<Contender> cs = Three();
  FakeRunner runner({0.01, 0.01, 0.005, 0.05});
  RoundsSettings s = TestSettings();
  s.race = false;
  const RoundsResult r = RunRounds(cs, runner, s);
  std::map<int, int> ref_runs;
  std::map<int, int> runs;
  for (const auto& [i, round] : runner.log) {
    ++runs[round];
    if (i == 0) ++ref_runs[round];
  }
  for (const auto& [round, n] : runs) EXPECT_EQ(ref_runs[round], 1) << "round " << round;
  EXPECT_EQ(r.rounds, static_cast<int>(runs.size()));
  EXPECT_EQ(cs[2].stop_reason, "precise");
  EXPECT_EQ(cs[3].stop_reason, "precise");
  EXPECT_GE(cs[2].kept, 5);
}

TEST(RunRoundsTest, TheRaceEliminatesTheClearlySlowerAndLetsTheLeaderRunOn) {
  std::vector<Contender> cs = Three();
  FakeRunner runner({0.01, 0.01, 0.005, 0.015});  // 3x: not a gross loser (race.h)
  const RoundsSettings s = RaceOnly();
  RunRounds(cs, runner, s);
  EXPECT_TRUE(cs[3].eliminated);
  EXPECT_TRUE(absl::StartsWith(cs[3].stop_reason, "eliminated after 3 runs: 3.00x"))
      << cs[3].stop_reason;
  EXPECT_EQ(cs[2].stop_reason, "--max_runs=12 reached");
  // The reference ran first in the first round: the pace is known early.
  ASSERT_FALSE(runner.log.empty());
  EXPECT_EQ(runner.log[0].first, 0u);
}

// The race eliminates only what the verdict would call slower: a policy
// 3% slower than the leader in every round stays (the verdict's margin of
// practical equivalence is 5%), one 7% slower is eliminated.
TEST(RunRoundsTest, TheRaceKeepsWhatTheVerdictCallsEquallyFast) {
  std::vector<Contender> cs = Three();
  cs.emplace_back().name = "further";
  FakeRunner runner({0.01, 0.01, 0.005, 0.00515, 0.00535});
  const RoundsSettings s = RaceOnly();
  RunRounds(cs, runner, s);
  EXPECT_FALSE(cs[3].eliminated) << cs[3].stop_reason;
  EXPECT_EQ(cs[3].stop_reason, "--max_runs=12 reached");
  EXPECT_TRUE(cs[4].eliminated);
  EXPECT_TRUE(absl::StartsWith(cs[4].stop_reason, "eliminated after 3 runs: 1.07x"))
      << cs[4].stop_reason;
}

TEST(RunRoundsTest, ARunFarSlowerThanThePaceIsStoppedAndEliminated) {
  std::vector<Contender> cs = Three();
  FakeRunner runner({0.3, 0.3, 0.25, 30});
  RoundsSettings s = TestSettings();
  s.limits.wall_seconds = 280;
  RunRounds(cs, runner, s);
  int slow_runs = 0;
  for (const auto& [i, round] : runner.log) slow_runs += i == 3;
  EXPECT_EQ(slow_runs, 1);
  EXPECT_TRUE(cs[3].eliminated);
  EXPECT_EQ(cs[3].failed, 0);
  EXPECT_TRUE(absl::StartsWith(cs[3].stop_reason, "eliminated in round 1: its run passed "))
      << cs[3].stop_reason;
}

TEST(RunRoundsTest, TheTotalBudgetStopsEveryoneWhereTheyAre) {
  std::vector<Contender> cs = Three();
  FakeRunner runner({0.3, 0.3, 0.25, 0.26});
  RoundsSettings s = TestSettings();
  s.min_runs = 1000;
  s.max_runs = 1000;
  s.budget_seconds = 1000;
  s.total_budget_seconds = 4;
  s.max_total_budget_seconds = 4;
  RunRounds(cs, runner, s);
  EXPECT_EQ(cs[2].stop_reason, "total budget of 4 s spent (--total_budget)");
  double spent = 0;
  for (const Contender& c : cs) spent += c.spent;
  EXPECT_LT(spent, 4 + 0.31);  // checked before every run
}

// A limit on the number of runs counts the runs the mode made before the
// rounds (in situ's warm-up) and is never passed, not even by the first
// round: those whose first turn does not come are "not run".
TEST(RunRoundsTest, TheLimitOnRunsHoldsExactlyTheRunsBeforeIncluded) {
  // Five contenders, nobody precise, no budget of seconds in reach.
  auto run = [](int max_total_runs, std::vector<Contender>& cs) {
    cs = Three();
    cs.emplace_back().name = "third";
    FakeRunner runner({0.01, 0.01, 0.005, 0.006, 0.007});
    RoundsSettings s = TestSettings();
    s.precision = 0.0001;
    s.min_runs = s.max_runs = 1000;
    s.race_min_runs = 1000;  // no eliminations: every contender in every round
    s.total_budget_seconds = s.max_total_budget_seconds = 1000;
    s.first_round = 1;
    s.runs_before = 1;
    s.max_total_runs = max_total_runs;
    RunRounds(cs, runner, s);
    EXPECT_EQ(runner.log[0].first, 0u);  // the reference first
    return static_cast<int>(runner.log.size());
  };
  std::vector<Contender> cs;
  // 1 before, then rounds of 5, 5 and 2.
  EXPECT_EQ(run(13, cs), 12);
  EXPECT_EQ(cs[2].stop_reason, "total budget of 13 runs spent");
  // 1 before and 3 of the first round's 5.
  EXPECT_EQ(run(4, cs), 3);
  int not_run = 0;
  for (const Contender& c : cs) {
    not_run += c.attempts == 0;
    if (c.attempts == 0 && c.role != Role::kNoise) {
      EXPECT_TRUE(c.eliminated) << c.name;
      EXPECT_EQ(c.stop_reason,
                "not run: the first round made the total budget of 4 runs before its turn");
    }
  }
  EXPECT_EQ(not_run, 2);
}

// A trace too costly for the budget: each run would take 40 s, the
// reference's 100 s, against a 16 s budget with a 50 s cap.
std::vector<Contender> CostlyTraceContenders() {
  std::vector<Contender> cs = Three();
  cs.emplace_back().name = "third";
  return cs;
}
FakeRunner CostlyTraceRunner() { return FakeRunner({100, 100, 40, 40, 40}); }
RoundsSettings CostlyTraceSettings() {
  RoundsSettings s = TestSettings();
  s.limits.wall_seconds = 1000;
  s.total_budget_seconds = 16;
  s.max_total_budget_seconds = 50;
  return s;
}

TEST(RunRoundsTest, NoRunOutlastsTheBudgetsCapEvenInTheFirstRound) {
  // The first round stops at the cap: the run under way is stopped at what
  // is left of it (plus the allowance), and those whose turn did not come
  // are "not run"; none is failed.
  std::vector<Contender> cs = CostlyTraceContenders();
  FakeRunner runner = CostlyTraceRunner();
  RunRounds(cs, runner, CostlyTraceSettings());
  double spent = 0;
  for (const Contender& c : cs) spent += c.spent;
  EXPECT_LE(spent, 50 + kBudgetRunAllowanceSeconds);
  // The reference ran first, and was stopped at the cap plus the allowance.
  EXPECT_EQ(runner.log[0].first, 0u);
  EXPECT_TRUE(cs[0].eliminated);
  EXPECT_TRUE(absl::StrContains(cs[0].stop_reason, "outlasted the total budget's cap of 50 s"))
      << cs[0].stop_reason;
  int not_run = 0;
  for (const Contender& c : cs) {
    EXPECT_EQ(c.failed, 0) << c.name;
    not_run += absl::StartsWith(c.stop_reason, "not run: the first round spent");
  }
  EXPECT_GE(not_run, 2);
}

// Every stop reason of the total budget names the flag that raises it,
// the mode's (in situ's rows named --total_budget, which it does not read).
TEST(RunRoundsTest, TheBudgetsStopReasonsNameTheModesFlag) {
  std::vector<Contender> cs = CostlyTraceContenders();
  FakeRunner runner = CostlyTraceRunner();
  RoundsSettings s = CostlyTraceSettings();
  s.budget_flag = "--in_situ_budget";
  RunRounds(cs, runner, s);
  int named = 0;
  for (const Contender& c : cs) {
    if (c.role == Role::kNoise || (c.attempts > 0 && c.stop != Stop::kAtCap)) continue;
    EXPECT_TRUE(absl::EndsWith(c.stop_reason, " (--in_situ_budget)")) << c.stop_reason;
    ++named;
  }
  EXPECT_GE(named, 3);  // the reference stopped at the cap, and two not run
}

// A race whose total budget (4 s) stretches up to `cap`, and in which
// nobody is ever precise: the budget ends it.
RoundsSettings RaceToTheCap(double cap) {
  RoundsSettings s = TestSettings();
  s.race_min_runs = 3;
  s.precision = 0.0001;
  s.budget_seconds = 1000;
  s.min_runs = 1000;
  s.max_runs = 1000;
  s.total_budget_seconds = 4;
  s.max_total_budget_seconds = cap;
  return s;
}

// A long trace: the first round (4 s, a slow policy in it) stretches the
// budget to 5 rounds at its pace, 20 s, which would end before 10 rounds;
// once the race has dropped the slow policy (at its first look, after 3
// rounds), the rounds cost 2.5 s and the budget stretches to 29.5 s, so
// the policies left reach 10 rounds; short of the precision, they run on
// to the cap where the budget goes to it (to_cap). Where 10 rounds would
// pass the cap, the budget stays, or goes to the cap (to_cap).
TEST(RunRoundsTest, AStretchedBudgetReachesTenRoundsForThePoliciesLeft) {
  auto run = [](double cap, int reach, bool to_cap = true) {
    std::vector<Contender> cs = Three();
    FakeRunner runner({1, 1, 0.5, 1.5});
    RoundsSettings s = RaceToTheCap(cap);
    s.reach_rounds = reach;
    s.to_cap = to_cap;
    const RoundsResult r = RunRounds(cs, runner, s);
    EXPECT_TRUE(cs[3].eliminated);
    EXPECT_TRUE(absl::StartsWith(cs[3].stop_reason, "eliminated after 3 runs"))
        << cs[3].stop_reason;
    return r;
  };
  // 4 s, then 2 s (slow eliminated in round 3, its run not paid after),
  // then 2.5 s a round: 10 rounds by 29.5 s, then on to the cap (50 s).
  const RoundsResult reached = run(50, 10);
  EXPECT_GE(reached.rounds, 17);
  EXPECT_LE(reached.rounds, 19);
  EXPECT_EQ(reached.total_budget, 50);
  const RoundsResult ten = run(50, 10, /*to_cap=*/false);
  EXPECT_GE(ten.rounds, 10);
  EXPECT_LE(ten.rounds, 11);  // the runs' 1% wobble may leave room for one more
  EXPECT_NEAR(ten.total_budget, 29.5, 0.5);
  // 10 rounds would need 29.5 s: past a cap of 29 s the budget stays,
  // unless it goes to the cap (to_cap), where the rounds it affords are
  // run.
  const RoundsResult capped = run(29, 10, /*to_cap=*/false);
  EXPECT_NEAR(capped.total_budget, 20, 0.5);
  EXPECT_LT(capped.rounds, 10);
  const RoundsResult to_cap = run(29, 10);
  EXPECT_EQ(to_cap.total_budget, 29);
  EXPECT_GT(to_cap.rounds, capped.rounds);
}

// The reference (0.25 s a run) and its second run set share a noise by
// round (1 +- `noise`, median 1 over any few rounds); the leader takes
// `fast`
// seconds with the 1% wobble. Its figures are its seconds, as FakeRunner's.
class NoisyReferenceRunner : public ContenderRunner {
 public:
  NoisyReferenceRunner(double fast, double noise) : fast_(fast), noise_(noise) {}
  RunOutcome Run(size_t i, int round, const ChildLimits&, bool) override {
    RunOutcome o;
    // Spread evenly over the rounds (a step of 2.4 radians never repeats),
    // so that any few rounds have a median near 1.
    const double noise = 1 + noise_ * std::sin(2.4 * round);
    const double t = i <= 1 ? 0.25 * noise : fast_ * (round % 2 ? 1.01 : 0.99);
    o.figure = t * 1e6;
    o.seconds = t;
    return o;
  }

 private:
  double fast_;
  double noise_;
};

// A reference 1.25x the leader's time (at the median) that the budget's
// rounds cannot yet show slower: the verdict would keep it for want of
// rounds, so the budget stretches, a round at a time within its cap, until
// they do. As fast as the leader, it stretches nothing.
TEST(RunRoundsTest, TheBudgetStretchesWhileTheReferenceIsKeptOnlyForWantOfRounds) {
  const auto run = [](double fast, double noise, std::vector<Contender>* cs) {
    *cs = Three();
    cs->pop_back();  // ref, noise, fast
    NoisyReferenceRunner runner(fast, noise);
    RoundsSettings s = RaceToTheCap(50);  // 4 s, 5 rounds or so
    return RunRounds(*cs, runner, s);
  };
  std::vector<Contender> cs;
  const RoundsResult slower_ref = run(0.2, 0.45, &cs);
  EXPECT_GT(slower_ref.total_budget, 4);
  EXPECT_LT(slower_ref.total_budget, 50);  // stopped once shown slower
  const Estimate r = PairedRatio(cs[0].figures, cs[2].figures);
  EXPECT_GT(r.lo, 1) << "after " << slower_ref.rounds << " rounds: " << r.median << " [" << r.lo
                     << ", " << r.hi << "]";
  const RoundsResult same = run(0.25, 0.01, &cs);
  EXPECT_EQ(same.total_budget, 4);
}

// A long trace whose first round is cheap: 5 rounds at its pace (20 s)
// stay within the 30 s total budget, so the first round stretches nothing;
// the budget still goes to the cap once the race has looked (to_cap), and
// stays at 30 s otherwise.
TEST(RunRoundsTest, ACheapFirstRoundStillTakesALongTraceToTheCap) {
  auto run = [](bool to_cap) {
    std::vector<Contender> cs = Three();
    FakeRunner runner({1, 1, 0.5, 1.5});
    RoundsSettings s = RaceToTheCap(50);
    s.total_budget_seconds = 30;
    s.to_cap = to_cap;
    return RunRounds(cs, runner, s);
  };
  const RoundsResult capped = run(true);
  EXPECT_EQ(capped.total_budget, 50);
  EXPECT_GE(capped.rounds, 17);
  const RoundsResult kept = run(false);
  EXPECT_EQ(kept.total_budget, 30);
  EXPECT_LT(kept.rounds, capped.rounds);
}

// A budget spent past what --total_budget asked for says both.
TEST(RunRoundsTest, AStretchedBudgetSaysWhatWasAskedAndWhatWasSpent) {
  std::vector<Contender> cs = Three();
  FakeRunner runner({1, 1, 0.5, 1.5});
  RoundsSettings s = RaceToTheCap(50);
  s.total_budget_seconds = 30;
  s.to_cap = true;
  RunRounds(cs, runner, s);
  int stretched = 0;
  for (const Contender& c : cs) {
    stretched += c.stop_reason ==
                 "total budget of 50 s spent (--total_budget=30, stretched for the rounds this "
                 "trace needed, at most 50 s)";
  }
  EXPECT_GT(stretched, 0) << cs[0].stop_reason << " / " << cs[2].stop_reason;
}

// What a mode keeps of the cap for after the rounds (a windowed replay's
// whole runs): all of kept_seconds, or what the contenders still in the
// race will need, so an elimination gives its share back to the rounds.
TEST(RunRoundsTest, TheCapKeepsWhatTheContendersLeftWillNeedAfterTheRounds) {
  auto run = [](std::function<double(size_t)> kept_for) {
    std::vector<Contender> cs = Three();
    FakeRunner runner({1, 1, 0.5, 1.5});
    RoundsSettings s = RaceToTheCap(50);
    s.to_cap = true;
    s.kept_seconds = 14;
    s.kept_for = std::move(kept_for);
    const RoundsResult r = RunRounds(cs, runner, s);
    EXPECT_TRUE(cs[3].eliminated);
    return r;
  };
  // 2 s each for malloc and fast once slow is out (the noise set needs
  // none): 4 s kept, 46 s for the rounds.
  EXPECT_EQ(run([](size_t) { return 2.0; }).total_budget, 46);
  // At most kept_seconds; all of it while a contender cannot tell.
  EXPECT_EQ(run([](size_t) { return 10.0; }).total_budget, 36);
  EXPECT_EQ(run([](size_t i) { return i == 2 ? -1.0 : 2.0; }).total_budget, 36);
  EXPECT_EQ(run(nullptr).total_budget, 36);
}

// The total budget counts the wall time between runs too (the statistics,
// the window states): a runner whose runs report 1 ms but take 10 ms of
// real time is stopped by the real time. 4 runs a round, at least 40 ms:
// a 0.3 s budget affords at most 8 rounds (reported seconds alone would
// afford 75).
class SlowerThanReportedRunner : public FakeRunner {
 public:
  using FakeRunner::FakeRunner;
  RunOutcome Run(size_t i, int round, const ChildLimits& limits, bool race_limited) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return FakeRunner::Run(i, round, limits, race_limited);
  }
};

TEST(RunRoundsTest, TheTotalBudgetCountsTheTimeBetweenRunsToo) {
  std::vector<Contender> cs = Three();
  SlowerThanReportedRunner runner({0.001, 0.001, 0.001, 0.001});
  RoundsSettings s = RaceToTheCap(0.3);
  s.race_min_runs = 1000;  // no eliminations: 4 runs every round
  s.total_budget_seconds = 0.3;
  const RoundsResult r = RunRounds(cs, runner, s);
  EXPECT_LE(r.rounds, 9);
  EXPECT_EQ(cs[2].stop_reason, "total budget of 0 s spent (--total_budget)");
}

TEST(RunRoundsTest, WithoutTheReferenceNothingElseRunsWhenAsked) {
  std::vector<Contender> cs = Three();
  cs.erase(cs.begin() + 1);  // no noise contender
  FakeRunner runner({0.01, 0.005, 0.05});
  runner.fail[0] = true;
  RoundsSettings s = TestSettings();
  s.race = false;
  s.first_round = 1;
  s.stop_without_reference = true;
  RunRounds(cs, runner, s);
  EXPECT_EQ(cs[0].failed, 1);
  for (const auto& [i, round] : runner.log) EXPECT_EQ(round, 1);
  EXPECT_FALSE(cs[1].done);  // stopped with the others: the mode says so
}

}  // namespace
}  // namespace alloctrace
