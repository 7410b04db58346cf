// Statistics for repeated runs: medians with bootstrap confidence
// intervals, ratios paired by round, and ties.
//
// Every bootstrap here draws from a fixed seed, so the same runs always give
// the same intervals (a report can be regenerated from its raw runs).
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_STATS_H_
#define ALLOCTRACE_REPLAYER_MEASURE_STATS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace alloctrace {

// A median and its 95% confidence interval [lo, hi] from n samples. n == 0:
// no data (every field 0).
struct Estimate {
  double median = 0;
  double lo = 0;
  double hi = 0;
  int n = 0;

  bool has_data() const { return n > 0; }
  // The interval's longer side (from the median to lo or to hi) over the
  // median: 0.03 is "within +-3%", both ends. A bootstrap interval of a
  // median is seldom symmetric ([2.02, 2.20] about 2.09: -3.3%, +5.3%), and
  // half its width (4.3% there) would understate the longer side.
  // Infinite without data or with a median of 0.
  double HalfWidth() const;
};

inline constexpr uint64_t kBootstrapSeed = 0x616c6c6f63747263;  // "alloctrc"
inline constexpr int kBootstrapResamples = 2000;

double Median(std::vector<double> v);

// The figures of a by-round map (round -> figure), in round order.
std::vector<double> ValuesByRound(const std::map<int, double>& by_round);

// The sample median with a percentile-bootstrap 95% interval of the median
// (`resamples` resamples drawn with a generator seeded by `seed`). With one
// sample the interval is that sample. fidelity/analysis.py's bootstrap_ci is
// this bootstrap in Python, draw for draw; //fidelity:cpp_parity_test runs
// both on the same cases (through bootstrap_cases_main.cc).
Estimate MedianWithCi(const std::vector<double>& samples, int resamples = kBootstrapResamples,
                      uint64_t seed = kBootstrapSeed);

// reference / subject per round in both (the keys are rounds), as a median
// with its 95% CI: a ratio paired by round (> 1: subject is faster when
// the figures are times).
Estimate PairedRatio(const std::map<int, double>& reference, const std::map<int, double>& subject);
// The per-round ratios themselves, in round order.
std::vector<double> PairedRatios(const std::map<int, double>& reference,
                                 const std::map<int, double>& subject);

// Whether two intervals share any point.
bool Overlaps(const Estimate& a, const Estimate& b);

// The indexes of the estimates tied with the best, the one with the lowest
// median (the best included): those whose interval overlaps the best's.
// Estimates without data are never tied. Empty if none has data.
std::vector<size_t> TiedWithLowest(const std::vector<Estimate>& estimates);

// Whether a noise floor (two identical allocators compared, paired by
// round) can be used: from kMinPairedRounds rounds or more, and plausible
// (its median within [2/3, 3/2]; a malloc against itself reading 0.18x is
// a broken measurement, not a floor).
bool NoiseFloorUsable(const Estimate& noise_floor);

// The noise margin m read from a usable noise floor: how far two run sets
// of one allocator read apart, its median either way from 1,
// max(median, 1 / median) - 1. 0 if it is not usable. The median, not the
// interval's end: every comparison's own interval already carries the
// rounds' noise, and a margin from the floor's interval counted it twice,
// growing with the machine's load (7 rounds beside a busy core read
// 1.017x [0.777, 1.335] on a captured 5-thread trace: a 33% margin where
// the floor's offset is 2%).
double NoiseMargin(const Estimate& noise_floor);

// Policies closer than this (or than the noise floor, if wider) are one
// choice: a difference of a few percent on one machine in one minute
// reverses on the next (the sample trace's pick moved among three pools
// 1-4% apart in three invocations), and the done-when of a pick is "within
// 5% of the best". The verdict's rule (verdict/choice.h) and the race
// (race.h) both use it: the race eliminates only what the verdict would
// call slower, so which policies reach the verdict does not depend on how
// tight the machine's load lets the intervals get.
inline constexpr double kEquivalenceMargin = 0.05;

// The margin of practical equivalence for a measured noise margin: the
// larger of the two.
double EquivalenceMargin(double noise_margin);

// THE tie rule (fidelity/analysis.py's paired_tie is the same): given the
// paired ratio of two policies' ns/op (the median over common rounds of one's
// figure over the other's, with its 95% CI), they are tied when the CI
// includes 1, or lies within the noise floor: within [1/(1+m), 1+m] for the
// noise margin m. No data (no common round): not tied. Fewer than
// kMinPairedRounds common rounds: tied (the interval of one or two ratios is
// no interval; a difference seen in so few rounds is not a result).
inline constexpr int kMinPairedRounds = 3;
bool PairedTie(const Estimate& ratio, double noise_margin);

// P(T > t) for Student's t with `df` >= 1 degrees of freedom.
double StudentTUpperTail(double t, int df);

// The one-sided paired t-test of the race (measure.h): the p-value of
// "mean log ratio <= log(1 + margin)" against "greater", from the per-round
// log ratios (slower policy's ns/op over the leader's). 1 with fewer than two
// ratios; 0 if they are all equal and above the margin.
double SlowerPValue(const std::vector<double>& log_ratios, double margin);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_STATS_H_
