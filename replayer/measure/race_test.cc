// The race (race.h) on given figures: no timing, no child processes.
#include "alloctrace/replayer/measure/race.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// A contender whose figure in round i is figures[i].
Contender WithFigures(const std::string& name, const std::vector<double>& figures) {
  Contender c;
  c.name = name;
  for (size_t i = 0; i < figures.size(); ++i) c.figures[static_cast<int>(i)] = figures[i];
  c.kept = c.attempts = static_cast<int>(figures.size());
  return c;
}

// Figures of base[i % size] * factor in round i.
Contender Drifting(const std::string& name, int rounds, double factor) {
  static const double kBase[] = {50, 60, 45, 55, 52, 58, 47, 61};
  std::vector<double> v;
  for (int i = 0; i < rounds; ++i) v.push_back(kBase[i % 8] * factor);
  return WithFigures(name, v);
}

constexpr int kMinRounds = 5;  // (the default is 3: the tests below count from 5)

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
  std::vector<Contender> set = {Drifting("malloc", 5, 2), Drifting("slab", 5, 1),
                                Drifting("bump", 5, 0.1), Drifting("crashed", 5, 0.5)};
  set[2].role = Role::kFloor;  // the harness floor
  set[3].failed = 1;
  EXPECT_EQ(RaceLeader(set), 1u);  // bump and the failed one do not race
  set[1].eliminated = true;
  EXPECT_EQ(RaceLeader(set), 0u);
}

TEST(RaceTest, AClearlySlowerContenderIsEliminatedWithItsReason) {
  std::vector<Contender> set = {Drifting("malloc", 5, 2), Drifting("slab", 5, 1),
                                Drifting("boost_pool", 5, 3.1), Drifting("tied", 5, 1.0)};
  // tied is within 1% of slab, one way or the other, round by round.
  for (auto& [round, x] : set[3].figures) x *= round % 2 ? 1.01 : 0.99;
  EXPECT_EQ(RaceLook(set, {1, 1}, 0, 0.02, 1, 3, kMinRounds), 1);
  EXPECT_TRUE(set[2].done);
  EXPECT_TRUE(set[2].eliminated);
  EXPECT_EQ(set[2].stop_reason, "eliminated after 5 runs: 3.10x [3.10, 3.10] slower than slab");
  EXPECT_FALSE(set[3].done);  // tied
  EXPECT_FALSE(set[0].done);  // the reference is never raced out
  EXPECT_FALSE(set[1].done);  // nor the leader
}

// A captured python3: slab/st/single 5x glibc malloc's speed, tcmalloc 4x,
// jemalloc 2.7x. The mallocs race apart (the program adopts them
// unchanged): the pool eliminates none of them, and among them the slower
// is eliminated by the fastest malloc, not by the pool.
TEST(RaceTest, WhatTheProgramAdoptsUnchangedRacesApart) {
  std::vector<Contender> set = {Drifting("malloc", 8, 5), Drifting("slab/st/single", 8, 1),
                                Drifting("tcmalloc", 8, 1.25), Drifting("jemalloc", 8, 1.85)};
  for (size_t i : {0, 2, 3}) set[i].races_apart = true;
  const RaceLeaders leaders = FindRaceLeaders(set);
  EXPECT_EQ(leaders.fastest, 1u);
  EXPECT_EQ(leaders.apart, 2u);
  EXPECT_EQ(RaceLook(set, leaders, 0, 0.02, 1, 3, kMinRounds), 1);
  EXPECT_FALSE(set[2].done);  // the fastest malloc: a leader
  EXPECT_TRUE(set[3].eliminated);
  EXPECT_EQ(set[3].stop_reason, "eliminated after 8 runs: 1.48x [1.48, 1.48] slower than tcmalloc");
  // Without the set apart, the pool eliminates every malloc.
  for (Contender& c : set)
    c = Drifting(c.name, 8,
                 c.name == "malloc"           ? 5
                 : c.name == "slab/st/single" ? 1
                 : c.name == "tcmalloc"       ? 1.25
                                              : 1.85);
  EXPECT_EQ(RaceLook(set, FindRaceLeaders(set), 0, 0.02, 1, 3, kMinRounds), 2);
  EXPECT_TRUE(set[2].eliminated);
}

// Before the test's first look at 3 rounds: 4x slower than the leader in
// each of 2 rounds is out, 4x in one round and 3.9x in the other is not;
// after one round, 10x is out; nothing once the test has its rounds.
TEST(RaceTest, AGrossLoserIsEliminatedAfterTwoRounds) {
  std::vector<Contender> set = {WithFigures("malloc", {100, 110}), WithFigures("slab", {50, 60}),
                                WithFigures("keep", {210, 250}), WithFigures("close", {200, 234}),
                                WithFigures("bump", {500, 600})};
  set[4].role = Role::kFloor;  // the harness floor: never raced out
  EXPECT_EQ(EliminateGrossLosers(set, {1, 1}, 0, 3), 1);
  EXPECT_TRUE(set[2].eliminated);
  EXPECT_EQ(set[2].stop_reason,
            "eliminated after 2 runs: 4.2x to 4.2x slower than slab in every round (4x or more in "
            "each of 2 rounds: a gross loser)");
  EXPECT_FALSE(set[3].done);  // 3.9x in round 2
  EXPECT_FALSE(set[0].done);  // the reference
  EXPECT_FALSE(set[4].done);
  // After one round, only 10x or more; and at min_rounds the test decides
  // instead.
  std::vector<Contender> one = {WithFigures("malloc", {100}), WithFigures("slab", {50}),
                                WithFigures("keep", {450}), WithFigures("stack", {8500})};
  EXPECT_EQ(EliminateGrossLosers(one, {1, 1}, 0, 3), 1);
  EXPECT_FALSE(one[2].done);  // 9x
  EXPECT_EQ(one[3].stop_reason,
            "eliminated after 1 run: 170.0x slower than slab in its first round (10x or more in "
            "one round: a gross loser)");
  std::vector<Contender> three = {WithFigures("malloc", {100, 100, 100}),
                                  WithFigures("slab", {50, 50, 50}),
                                  WithFigures("keep", {500, 500, 500})};
  EXPECT_EQ(EliminateGrossLosers(three, {1, 1}, 0, 3), 0);
}

TEST(RaceTest, TheDefaultFirstLookComesAtThreeRoundsForGrossDifferencesOnly) {
  ASSERT_EQ(RoundsSettings{}.race_min_runs, 3);
  // Three rounds, 61 entrants: the level is 6 x 0.05 / (pi^2 x 61), about
  // 0.0005. A contender 10x slower with per-round noise of a few percent is
  // out; one 1.3x slower with per-round noise of 20% is not, yet.
  auto noisy = [](const std::string& name, double factor, double spread) {
    Contender c = Drifting(name, 3, factor);
    for (auto& [round, x] : c.figures) x *= 1 + spread * (round - 1);
    return c;
  };
  std::vector<Contender> set = {Drifting("malloc", 3, 2), Drifting("slab", 3, 1),
                                noisy("boost_pool", 10, 0.03), noisy("close", 1.3, 0.2)};
  EXPECT_EQ(RaceLook(set, {1, 1}, 0, 0.02, 1, 61, 3), 1);
  EXPECT_TRUE(set[2].eliminated);
  EXPECT_FALSE(set[3].eliminated);
  // Two rounds: never.
  std::vector<Contender> two = {Drifting("malloc", 2, 2), Drifting("slab", 2, 1),
                                Drifting("boost_pool", 2, 10)};
  EXPECT_EQ(RaceLook(two, {1, 1}, 0, 0, 1, 2, 3), 0);
}

TEST(RaceTest, NoEliminationBeforeMinRoundsOrWithinTheNoiseFloor) {
  std::vector<Contender> few = {Drifting("malloc", 4, 2), Drifting("slab", 4, 1),
                                Drifting("boost_pool", 4, 3)};
  EXPECT_EQ(RaceLook(few, {1, 1}, 0, 0, 1, 2, kMinRounds), 0);
  // 5% slower in every round, but two malloc run sets read 10% apart.
  std::vector<Contender> near = {Drifting("malloc", 8, 2), Drifting("slab", 8, 1),
                                 Drifting("close", 8, 1.05)};
  EXPECT_EQ(RaceLook(near, {1, 1}, 0, 0.10, 1, 2, kMinRounds), 0);
  EXPECT_EQ(RaceLook(near, {1, 1}, 0, 0.0, 1, 2, kMinRounds), 1);
}

TEST(RaceTest, AContenderThatFreesRacesTheFastestThatFrees) {
  // keep never frees and leads by 5%; slab frees, boost_pool frees and is
  // 3x slower, slow_keep never frees and is 1.3x slower than keep.
  std::vector<Contender> set = {Drifting("malloc", 6, 2), Drifting("keep", 6, 0.95),
                                Drifting("slab", 6, 1), Drifting("boost_pool", 6, 3),
                                Drifting("slow_keep", 6, 1.3)};
  set[1].frees_blocks = false;
  set[4].frees_blocks = false;
  const RaceLeaders leaders = FindRaceLeaders(set);
  EXPECT_EQ(leaders.fastest, 1u);
  EXPECT_EQ(leaders.freeing, 2u);
  EXPECT_EQ(RaceLook(set, leaders, 0, 0.0, 1, 4, kMinRounds), 2);
  EXPECT_FALSE(set[2].done);  // slab: 5% slower than keep, but the fastest that frees
  EXPECT_TRUE(set[3].eliminated);
  EXPECT_EQ(set[3].stop_reason, "eliminated after 6 runs: 3.00x [3.00, 3.00] slower than slab");
  EXPECT_TRUE(set[4].eliminated);  // never frees: raced against keep
  EXPECT_NE(set[4].stop_reason.find("slower than keep"), std::string::npos);
  // Were slab never to free, keep would eliminate it.
  std::vector<Contender> same = {Drifting("malloc", 6, 2), Drifting("keep", 6, 0.95),
                                 Drifting("slab", 6, 1)};
  same[1].frees_blocks = false;
  same[2].frees_blocks = false;
  EXPECT_EQ(RaceLook(same, FindRaceLeaders(same), 0, 0.0, 1, 2, kMinRounds), 1);
  EXPECT_TRUE(same[2].eliminated);
}

TEST(RaceTimeLimitTest, TwentyTimesThePaceAtLeastTheFloorAtMostTheConfigured) {
  std::vector<Contender> set = {WithFigures("malloc", {50}), WithFigures("slab", {40}),
                                WithFigures("boost_pool", {})};
  // No completed run yet: no race limit.
  EXPECT_EQ(RaceTimeLimit(set, 2, 0, 280).seconds, 0);
  set[0].run_seconds = {0.5};
  set[1].run_seconds = {0.4, 0.3, 0.9};  // median 0.4: the pace
  RaceRunLimit l = RaceTimeLimit(set, 2, 0, 280);
  EXPECT_DOUBLE_EQ(l.seconds, 8);
  EXPECT_EQ(l.pace_name, "slab");
  EXPECT_DOUBLE_EQ(l.pace_seconds, 0.4);
  EXPECT_EQ(RaceTimeLimit(set, 2, 0, 0).seconds, 8);    // no configured limit
  EXPECT_EQ(RaceTimeLimit(set, 2, 0, 8).seconds, 0);    // the configured one is as low
  EXPECT_EQ(RaceTimeLimit(set, 0, 0, 280).seconds, 0);  // malloc, the reference
  EXPECT_EQ(RaceTimeLimit(set, 1, 0, 280).seconds, 0);  // the pace itself
  // A failed or eliminated contender sets no pace.
  set[1].failed = 1;
  EXPECT_DOUBLE_EQ(RaceTimeLimit(set, 2, 0, 280).seconds, 10);
  set[0].run_seconds = {0.01};
  EXPECT_DOUBLE_EQ(RaceTimeLimit(set, 2, 0, 280).seconds, kRaceRunTimeFloorSeconds);
}

TEST(RaceTimeLimitTest, AStoppedContenderIsEliminatedSayingWhy) {
  Contender c = WithFigures("boost_pool", {});
  EliminateStopped(c, RaceRunLimit{6.1, "malloc", 0.305}, 0);
  EXPECT_TRUE(c.done);
  EXPECT_TRUE(c.eliminated);
  EXPECT_EQ(c.failed, 0);
  EXPECT_EQ(c.stop_reason,
            "eliminated in round 1: its run passed 20x the fastest policy's run time (malloc: "
            "0.30 s) and was stopped at 6.1 s");
  Contender f = WithFigures("boost_pool", {});
  EliminateStopped(f, RaceRunLimit{5, "malloc", 0.05}, 2);
  EXPECT_EQ(f.stop_reason,
            "eliminated in round 3: its run passed 5 s, more than 20x the fastest policy's "
            "run time (malloc: 0.05 s), and was stopped");
}

}  // namespace
}  // namespace alloctrace
