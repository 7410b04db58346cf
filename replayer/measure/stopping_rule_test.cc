// The rounds' stopping rule (rounds.h: UpdateDone, Precise,
// RecheckPrecise) on given figures: when a contender is done, and why.
#include <string>
#include <vector>

#include "alloctrace/replayer/measure/rounds.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

Contender WithFigures(const std::string& name, const std::vector<double>& figures) {
  Contender c;
  c.name = name;
  for (size_t i = 0; i < figures.size(); ++i) c.figures[static_cast<int>(i)] = figures[i];
  c.kept = c.attempts = static_cast<int>(figures.size());
  return c;
}

RoundsSettings TestSettings() {
  RoundsSettings s;
  s.precision = 0.03;
  s.budget_seconds = 3;
  s.min_runs = 5;
  s.max_runs = 50;
  s.race_min_runs = 5;
  return s;
}

TEST(UpdateDoneTest, SteadyRunsArePreciseOnlyAfterMinRuns) {
  const RoundsSettings s = TestSettings();
  Contender c = WithFigures("slab", {50, 50, 50, 50});
  UpdateDone(c, nullptr, s);
  EXPECT_FALSE(c.done);
  c.figures[4] = 50;
  ++c.kept;
  UpdateDone(c, nullptr, s);
  EXPECT_TRUE(c.done);
  EXPECT_EQ(c.stop_reason, "precise");
}

// Precise skips the bootstrap where the spread shows it cannot be met; a
// tight median among outliers is still found precise (the skip reads the
// logs' MAD, which the outliers do not widen), and a wide one is not.
TEST(UpdateDoneTest, OutliersDoNotKeepATightMedianFromBeingPrecise) {
  std::vector<double> tight(40, 50.0);
  for (size_t i = 0; i < tight.size(); i += 4) tight[i] = 500;  // a quarter 10x slower
  const Contender c = WithFigures("slab", tight);
  EXPECT_TRUE(Precise(c, nullptr, 0.03));
  const Contender ref = WithFigures("malloc", std::vector<double>(40, 100.0));
  EXPECT_TRUE(Precise(c, &ref, 0.03));
  std::vector<double> wide;
  for (int i = 0; i < 40; ++i) wide.push_back(i % 2 ? 40 : 60);
  EXPECT_FALSE(Precise(WithFigures("slab", wide), nullptr, 0.03));
  const Contender wide_ref = WithFigures("malloc", wide);
  EXPECT_FALSE(Precise(c, &wide_ref, 0.03));  // its ratio to a wide reference
}

TEST(UpdateDoneTest, TheRatioToTheReferenceMustBePreciseToo) {
  const RoundsSettings s = TestSettings();
  // Steady alone, but its ratio to a reference that swings by 2x is not.
  Contender c = WithFigures("slab", {50, 50, 50, 50, 50, 50});
  const Contender ref = WithFigures("malloc", {50, 100, 50, 100, 50, 100});
  EXPECT_TRUE(Precise(c, nullptr, s.precision));
  EXPECT_FALSE(Precise(c, &ref, s.precision));
  UpdateDone(c, &ref, s);
  EXPECT_FALSE(c.done);
  const Contender steady_ref = WithFigures("malloc", {75, 75, 75, 75, 75, 75});
  EXPECT_TRUE(Precise(c, &steady_ref, s.precision));
}

TEST(UpdateDoneTest, NoisyRunsStopAtTheBudgetThenAtMaxRuns) {
  RoundsSettings s = TestSettings();
  s.race = false;
  Contender c = WithFigures("slab", {10, 90, 10, 90, 10, 90});
  c.spent = 1;
  UpdateDone(c, nullptr, s);
  EXPECT_FALSE(c.done);
  c.spent = 3;
  UpdateDone(c, nullptr, s);
  EXPECT_TRUE(c.done);
  EXPECT_EQ(c.stop_reason, "budget of 3 s spent");

  // In a race with a total budget, the total budget decides, not the
  // contender's own; without a total budget, its own does.
  s.race = true;
  Contender racing = WithFigures("slab", {10, 90, 10, 90, 10, 90});
  racing.spent = 30;
  UpdateDone(racing, nullptr, s);
  EXPECT_FALSE(racing.done);
  s.total_budget_seconds = 0;
  UpdateDone(racing, nullptr, s);
  EXPECT_TRUE(racing.done);
  EXPECT_EQ(racing.stop_reason, "budget of 3 s spent");

  Contender n = WithFigures("slab", {10, 90, 10, 90, 10, 90});
  s.max_runs = 6;
  UpdateDone(n, nullptr, s);
  EXPECT_TRUE(n.done);
  EXPECT_EQ(n.stop_reason, "--max_runs=6 reached");
}

TEST(UpdateDoneTest, AFailureStopsAfterMinAttemptsOrAtOnceIfFatal) {
  const RoundsSettings s = TestSettings();
  Contender c = WithFigures("slab", {50, 50});
  c.failed = 1;
  c.attempts = 3;
  UpdateDone(c, nullptr, s);
  EXPECT_FALSE(c.done);
  c.attempts = 5;
  UpdateDone(c, nullptr, s);
  EXPECT_TRUE(c.done);
  EXPECT_EQ(c.stop_reason, "failed");

  Contender f = WithFigures("slab", {});
  f.failed = 1;
  f.attempts = 1;
  f.fatal = true;
  UpdateDone(f, nullptr, s);
  EXPECT_TRUE(f.done);
  EXPECT_EQ(f.stop_reason, "failed");
}

// slab/st/single, the race's leader, was precise after 10 runs and ran on
// so the others had their pair; ten noisy runs more widened its CI. The
// report listed it "(precise)" under "CI wider than +-3%".
TEST(UpdateDoneTest, APreciseLeaderThatRanOnIsRecheckedAtTheEnd) {
  const RoundsSettings s = TestSettings();
  Contender c = WithFigures("slab/st/single", std::vector<double>(10, 50));
  UpdateDone(c, nullptr, s);
  ASSERT_EQ(c.stop_reason, "precise");
  RecheckPrecise(c, nullptr, s.precision);
  EXPECT_EQ(c.stop_reason, "precise");  // still so
  std::vector<double> slower_later(10, 50);
  slower_later.insert(slower_later.end(), 10, 60);  // the machine slowed down
  Contender more = WithFigures("slab/st/single", slower_later);
  more.done = true;
  more.stop = Stop::kPrecise;
  more.stop_reason = "precise";
  RecheckPrecise(more, nullptr, s.precision);
  EXPECT_EQ(more.stop_reason,
            "precise once, then ran on so the others' runs had their pair; its CIs widened since");
}

TEST(UpdateDoneTest, ADoneContenderStaysAsItIs) {
  const RoundsSettings s = TestSettings();
  Contender c = WithFigures("slab", {});
  c.done = true;
  c.stop_reason = "skipped";
  UpdateDone(c, nullptr, s);
  EXPECT_EQ(c.stop_reason, "skipped");
}

}  // namespace
}  // namespace alloctrace
