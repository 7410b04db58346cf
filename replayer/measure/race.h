// The race of the measurement protocol (--race, the default): successive
// elimination, as F-Race and irace race configurations. After each round,
// every policy still measuring is compared with its leader by the ratio of
// their ns/op paired by round; a policy shown slower than its leader by
// more than the margin of practical equivalence (stats.h:
// EquivalenceMargin, 5% or the noise floor if wider: what the verdict
// would call slower) is eliminated: it runs no more, and its row
// keeps its figures and says when and why (Contender::stop_reason,
// eliminated). A policy that never frees its blocks (keep, monotonic)
// races the leader, the racing policy with the lowest median ns/op so far;
// one that frees races the freeing leader, the fastest of those that free:
// the recommendation takes a never-freeing policy over the fastest that
// frees only by a margin (summary.h: kNeverFreesMargin), so a freeing
// policy a few percent slower than a keep pool must stay in the race.
// A contender that races apart (Contender::races_apart: on a trace with no
// container arenas, a malloc the program adopts unchanged) races the
// fastest of those that race apart: a pool the program cannot adopt
// without rewriting its containers never eliminates what it can adopt
// (on a captured python3, a pool 5x glibc malloc's speed eliminated
// tcmalloc, jemalloc and mimalloc, and glibc malloc, the slowest in the
// program, was recommended).
//
// The test: one-sided paired t-test (stats.h SlowerPValue) of the mean log
// ratio (policy over leader, over the rounds both ran) against log(1 + m),
// m = EquivalenceMargin of the noise floor measured so far (NoiseMargin).
// The correction for repeated looks: Bonferroni over the K entrants and a
// union bound over looks, look t testing at level 6 alpha / (pi^2 t^2 K)
// (the sum over all t and all entrants is at most alpha = kRaceAlpha). So
// the chance that a policy truly within that margin of the leader is
// ever eliminated is at most 5%, however long the race. A policy is first
// tested after RoundsSettings::race_min_runs paired runs.
//
// The race's time limit on a run (RaceTimeLimit): once a policy that races
// has completed a run of the trace, a child is stopped past
// kRaceRunTimeFactor times the median run time (the child's whole life, as
// the parent times it) of the fastest such policy, the pace, but never
// before kRaceRunTimeFloorSeconds nor after the configured limit
// (--run_timeout). A policy whose run is stopped so is eliminated at once
// (EliminateStopped): not failed, its row without figures if it has no
// completed run. Why 20 is certain: both runs make the same passes over
// the same ops (a cold pass, then warm passes until --warm_ms: one when a
// pass is longer than that), so a run 20 times as long as the pace's
// spends, after the fixed costs both pay (start, mapping the program, all
// within the pace's run), at least 19 times the pace's whole run in its
// passes; even with its warm pass half as long again as its cold one, its
// ranking figure is more than 7x the pace's (19 / 2.5), where the race
// eliminates anything shown slower than 1.05x.
// (Its teardown, untimed, counts here too: a policy whose teardown alone
// takes 20 runs of another is not one to recommend either.) The factor
// also leaves room for the load of a shared machine changing by a few
// times between two runs; the floor keeps short runs, where a stall of a
// second would be the whole difference, from being judged by their length.
//
// Thread-safety: functions over the caller's data, no state of their own.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_RACE_H_
#define ALLOCTRACE_REPLAYER_MEASURE_RACE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "alloctrace/replayer/measure/rounds.h"

namespace alloctrace {

// The race's family-wise error rate (of eliminating a contender tied with
// the leader), over every look and every entrant.
inline constexpr double kRaceAlpha = 0.05;

// Whether `c` races: it is not the harness floor (Role::kFloor), has no
// failed run, is not eliminated and has a kept run. The reference races
// only as a leader.
bool Races(const Contender& c);

// The leader: of the contenders that race (and free their blocks, if
// freeing_only; and race apart, if apart_only), the lowest median figure.
// set.size() if none has a figure.
size_t RaceLeader(const std::vector<Contender>& set, bool freeing_only = false,
                  bool apart_only = false);

// The leaders of a look: the fastest, the fastest that frees, and the
// fastest of those that race apart (set.size() if none).
struct RaceLeaders {
  size_t fastest = 0;
  size_t freeing = 0;
  size_t apart = 0;
};
RaceLeaders FindRaceLeaders(const std::vector<Contender>& set);

// The level each comparison of look `look` (1, 2, ...) is tested at, with
// `entrants` contenders in the race: 6 alpha / (pi^2 look^2 entrants).
double RaceLevel(int look, int entrants);

// One look: each contender that races and is not done, other than its
// leader (leaders.apart if it races apart, else leaders.freeing if it frees
// its blocks, else leaders.fastest) and
// `reference` (which runs as long as anyone does), with at least
// `min_rounds` rounds in common with its leader, is eliminated when
// SlowerPValue of its log ratios to the leader against `noise_margin` is at
// most RaceLevel(look, entrants): done, eliminated, and a stop_reason such
// as "eliminated after 6 runs: 3.10x [2.80, 3.50] slower than slab" (the
// median paired ratio with its 95% bootstrap CI). Returns how many were
// eliminated.
int RaceLook(std::vector<Contender>& set, const RaceLeaders& leaders, size_t reference,
             double noise_margin, int look, int entrants, int min_rounds);

// A gross loser, before the test can look (before `min_rounds` rounds in
// common with its leader, when the test takes over): a contender slower
// than its leader by kGrossLoserFactor or more in each of 2 rounds or
// more, or by kGrossLoserFactorOneRound in its first, is eliminated
// ("eliminated after 2 runs: 4.8x to 5.3x slower than slab in every
// round"). On a trace whose runs cost a second, the test's first look at 3
// rounds came after the budget had gone on pools 5 to 170 times slower;
// and the spread between two runs of one policy on these machines reached
// 2.4x at its noisiest (fresh processes of one program, 2026-11-27), so 4x
// twice, or 10x once, is not noise. Does not count as a look of the test.
// Returns how many were eliminated.
inline constexpr double kGrossLoserFactor = 4;
inline constexpr double kGrossLoserFactorOneRound = 10;
int EliminateGrossLosers(std::vector<Contender>& set, const RaceLeaders& leaders, size_t reference,
                         int min_rounds);

// The race's time limit on a run (above): kRaceRunTimeFactor times the
// pace, at least kRaceRunTimeFloorSeconds.
inline constexpr double kRaceRunTimeFactor = 20;
inline constexpr double kRaceRunTimeFloorSeconds = 5;

struct RaceRunLimit {
  double seconds = 0;       // the child's limit; 0: the configured limit alone
  std::string pace_name;    // whose median run time sets it
  double pace_seconds = 0;  // that median (Contender::run_seconds)
};

// The limit on the next run of set[i], with `configured` the configured
// limit (ChildLimits::wall_seconds, 0: none): none (seconds 0) for
// `reference` (the other half of every pair), for the pace itself, before
// any contender that races has completed a run, or when the configured
// limit is as low.
RaceRunLimit RaceTimeLimit(const std::vector<Contender>& set, size_t i, size_t reference,
                           double configured);

// `c`, whose run in `round` (0: the first) the race's `limit` stopped, is
// done and eliminated, with a stop_reason such as "eliminated in round 1:
// its run passed 20x the fastest policy's run time (malloc: 0.31 s) and was
// stopped at 6.2 s".
void EliminateStopped(Contender& c, const RaceRunLimit& limit, int round);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_RACE_H_
