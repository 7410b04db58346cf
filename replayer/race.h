// The race of the measurement protocol (--race, the default): successive
// elimination, as F-Race and irace race configurations. After each round,
// every policy still measuring is compared with the leader (the racing
// policy with the lowest median ns/op so far) by the ratio of their ns/op
// paired by round; a policy shown slower than the leader by more than the
// noise floor is eliminated: it runs no more, and its row keeps its figures
// and says when and why (PolicyRuns::stop_reason, eliminated).
//
// The test: one-sided paired t-test (stats.h SlowerPValue) of the mean log
// ratio (policy over leader, over the rounds both ran) against log(1 + m),
// m the noise margin of the noise floor measured so far (NoiseMargin).
// The correction for repeated looks: Bonferroni over the K entrants and a
// union bound over looks, look t testing at level 6 alpha / (pi^2 t^2 K)
// (the sum over all t and all entrants is at most alpha = kRaceAlpha). So
// the chance that a policy truly within the noise floor of the leader is
// ever eliminated is at most 5%, however long the race. A policy is first
// tested after MeasureSettings::race_min_runs paired runs.
//
// Thread-safety: pure functions over the caller's data.
#ifndef ALLOCTRACE_REPLAYER_RACE_H_
#define ALLOCTRACE_REPLAYER_RACE_H_

#include <cstddef>
#include <vector>

#include "alloctrace/replayer/measure.h"
#include "alloctrace/replayer/summary.h"

namespace alloctrace {

// The race's family-wise error rate (of eliminating a policy tied with the
// leader), over every look and every entrant.
inline constexpr double kRaceAlpha = 0.05;

// Whether `m` races: not skipped, no failed run, not bump (the harness floor,
// which never frees) and not eliminated. malloc races only as a leader.
bool Races(const Measured& m);

// The leader: of the entries that race, the lowest median ns/op of the
// ranking pass (RankFigures). set.size() if none has a run.
size_t RaceLeader(const std::vector<Measured>& set, const ReportContext& ctx);

// The level each comparison of look `look` (1, 2, ...) is tested at, with
// `entrants` policies in the race: 6 alpha / (pi^2 look^2 entrants).
double RaceLevel(int look, int entrants);

// One look: each entry that races and is not done, other than the leader
// and `reference` (glibc malloc, which runs as long as anyone does), with at
// least s.race_min_runs rounds in common with the leader, is eliminated when
// SlowerPValue of its log ratios to the leader against `noise_margin` is at
// most RaceLevel(look, entrants): done, eliminated, and a stop_reason such
// as "eliminated after 6 runs: 3.10x [2.80, 3.50] slower than slab" (the
// median paired ratio with its 95% bootstrap CI). Returns how many were
// eliminated.
int RaceLook(std::vector<Measured>& set, size_t leader, size_t reference, double noise_margin,
             int look, int entrants, const MeasureSettings& s);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_RACE_H_
