#include "alloctrace/replayer/measure/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// The bootstrap as it was first written: each resample copied and sorted.
// The counting version must give bitwise the same estimates.
Estimate SortingMedianWithCi(const std::vector<double>& samples, int resamples, uint64_t seed) {
  Estimate e;
  e.n = static_cast<int>(samples.size());
  e.median = Median(samples);
  std::mt19937_64 rng(seed);
  const size_t n = samples.size();
  std::vector<double> draw(n);
  std::vector<double> medians(static_cast<size_t>(resamples));
  for (double& m : medians) {
    for (double& d : draw) {
      d = samples[static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64)];
    }
    m = Median(draw);
  }
  std::sort(medians.begin(), medians.end());
  const double last = static_cast<double>(resamples - 1);
  e.lo = medians[static_cast<size_t>(std::floor(0.025 * last))];
  e.hi = medians[static_cast<size_t>(std::ceil(0.975 * last))];
  return e;
}

TEST(MedianWithCiTest, CountingRanksGivesTheSortedResamplesBitwise) {
  std::mt19937_64 rng(42);
  for (size_t n = 2; n <= 41; ++n) {
    std::vector<double> x(n);
    for (double& v : x) v = static_cast<double>(rng() % 1000) / 7.0;  // ties included
    if (n % 5 == 0) x[1] = x[0];
    for (uint64_t seed : {kBootstrapSeed, uint64_t{7}}) {
      const Estimate fast = MedianWithCi(x, 500, seed);
      const Estimate slow = SortingMedianWithCi(x, 500, seed);
      EXPECT_EQ(fast.median, slow.median) << n;
      EXPECT_EQ(fast.lo, slow.lo) << n;
      EXPECT_EQ(fast.hi, slow.hi) << n;
    }
  }
}

TEST(StatsTest, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({}), 0);
}

TEST(StatsTest, BootstrapIntervalHoldsTheMedianAndIsReproducible) {
  std::vector<double> x;
  for (int i = 0; i < 40; ++i) x.push_back(100 + (i * 37) % 11);
  const Estimate a = MedianWithCi(x);
  const Estimate b = MedianWithCi(x);
  EXPECT_EQ(a.n, 40);
  EXPECT_LE(a.lo, a.median);
  EXPECT_GE(a.hi, a.median);
  EXPECT_GE(a.lo, 100);
  EXPECT_LE(a.hi, 110);
  // Same runs, same seed: the same interval, to the bit.
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  // Another seed may differ, but stays a valid interval.
  const Estimate c = MedianWithCi(x, 2000, 7);
  EXPECT_LE(c.lo, c.median);
  EXPECT_GE(c.hi, c.median);
}

TEST(StatsTest, IntervalNarrowsAsSpreadShrinks) {
  std::vector<double> wide, narrow;
  for (int i = 0; i < 30; ++i) {
    wide.push_back(100 + (i % 10) * 10);
    narrow.push_back(100 + (i % 10) * 0.1);
  }
  EXPECT_GT(MedianWithCi(wide).HalfWidth(), 10 * MedianWithCi(narrow).HalfWidth());
  EXPECT_LT(MedianWithCi(narrow).HalfWidth(), 0.03);
}

TEST(StatsTest, HalfWidthIsTheIntervalsLongerSide) {
  // [2.02, 2.20] about 2.09: 3.3% below, 5.3% above. "Within +-4.3%" (half
  // the width) would be false above the median.
  const Estimate lopsided{2.09, 2.02, 2.20, 170};
  EXPECT_NEAR(lopsided.HalfWidth(), 0.11 / 2.09, 1e-9);
  const Estimate low_side{100, 90, 102, 40};
  EXPECT_NEAR(low_side.HalfWidth(), 0.10, 1e-9);
  const Estimate symmetric{100, 97, 103, 40};
  EXPECT_NEAR(symmetric.HalfWidth(), 0.03, 1e-9);
}

TEST(StatsTest, NoDataAndOneSample) {
  EXPECT_FALSE(MedianWithCi({}).has_data());
  EXPECT_TRUE(std::isinf(Estimate().HalfWidth()));
  const Estimate one = MedianWithCi({5});
  EXPECT_EQ(one.lo, 5);
  EXPECT_EQ(one.hi, 5);
}

TEST(StatsTest, TiesAreOverlapsWithTheLowest) {
  const Estimate best{10, 9, 11, 10};
  const Estimate touching{12, 11, 13, 10};  // shares 11 with the best
  const Estimate apart{20, 18, 22, 10};
  const Estimate empty;
  EXPECT_TRUE(Overlaps(best, touching));
  EXPECT_FALSE(Overlaps(best, apart));
  EXPECT_FALSE(Overlaps(best, empty));
  EXPECT_EQ(TiedWithLowest({apart, touching, empty, best}), (std::vector<size_t>{1, 3}));
  EXPECT_TRUE(TiedWithLowest({empty}).empty());
  // Equal medians are a tie however they compare as floats.
  const Estimate same{10, 10, 10, 10};
  EXPECT_EQ(TiedWithLowest({same, same}).size(), 2u);
}

TEST(StatsTest, PairedTieIncludesOneOrLiesWithinTheNoiseFloor) {
  EXPECT_TRUE(PairedTie({1.02, 0.99, 1.05, 10}, 0));      // includes 1
  EXPECT_FALSE(PairedTie({1.05, 1.02, 1.08, 10}, 0));     // excludes 1, no noise
  EXPECT_TRUE(PairedTie({1.05, 1.02, 1.08, 10}, 0.10));   // within +-10%
  EXPECT_FALSE(PairedTie({1.05, 1.02, 1.12, 10}, 0.10));  // reaches beyond it
  EXPECT_TRUE(PairedTie({0.95, 0.93, 0.97, 10}, 0.10));   // either side
  EXPECT_FALSE(PairedTie(Estimate{}, 1));                 // no common round
  // One or two rounds tell nothing apart, whatever their degenerate interval.
  EXPECT_TRUE(PairedTie({1.5, 1.5, 1.5, 1}, 0));
  EXPECT_TRUE(PairedTie({1.5, 1.4, 1.6, 2}, 0));
  EXPECT_FALSE(PairedTie({1.5, 1.4, 1.6, 3}, 0));
  // The new user's paradox: 1.28x [1.27, 1.33] is no tie under a 3% floor.
  EXPECT_FALSE(PairedTie({1.28, 1.27, 1.33, 10}, 0.03));
}

TEST(StatsTest, NoiseMarginIsHowFarTheFloorsMedianReadsFromOne) {
  EXPECT_NEAR(NoiseMargin({0.991, 0.968, 1.002, 20}), 1 / 0.991 - 1, 1e-12);
  EXPECT_NEAR(NoiseMargin({1.04, 1.01, 1.06, 20}), 0.04, 1e-12);
  // A busy machine's few rounds widen the floor's interval, not its offset.
  EXPECT_NEAR(NoiseMargin({1.017, 0.777, 1.335, 7}), 0.017, 1e-12);
  EXPECT_EQ(NoiseMargin(Estimate{}), 0);
}

TEST(StatsTest, ANoiseFloorFromFewRoundsOrImplausibleIsNotUsed) {
  EXPECT_TRUE(NoiseFloorUsable({0.991, 0.968, 1.002, 3}));
  EXPECT_FALSE(NoiseFloorUsable({0.991, 0.968, 1.002, 2}));  // too few rounds
  // A malloc against itself reading 0.18x is a broken measurement.
  EXPECT_FALSE(NoiseFloorUsable({0.180, 0.150, 0.210, 12}));
  EXPECT_FALSE(NoiseFloorUsable({1.6, 1.5, 1.7, 12}));
  EXPECT_EQ(NoiseMargin({0.180, 0.150, 0.210, 12}), 0);
  EXPECT_EQ(NoiseMargin({0.991, 0.968, 1.002, 1}), 0);
}

TEST(StatsTest, StudentTailMatchesTables) {
  EXPECT_NEAR(StudentTUpperTail(0, 5), 0.5, 1e-12);
  EXPECT_NEAR(StudentTUpperTail(12.706, 1), 0.025, 1e-4);
  EXPECT_NEAR(StudentTUpperTail(2.776, 4), 0.025, 1e-4);
  EXPECT_NEAR(StudentTUpperTail(8.610, 4), 0.0005, 2e-5);
  EXPECT_NEAR(StudentTUpperTail(-2.776, 4), 0.975, 1e-4);
  EXPECT_NEAR(StudentTUpperTail(1.96, 100000), 0.025, 1e-4);
}

TEST(StatsTest, SlowerPValueTestsTheLogRatioAgainstTheMargin) {
  // Three times slower, steadily: tiny p even at five rounds.
  const std::vector<double> slow = {std::log(3.0), std::log(3.1), std::log(2.9), std::log(3.05),
                                    std::log(2.95)};
  EXPECT_LT(SlowerPValue(slow, 0.03), 1e-5);
  // Around 1: no evidence of being slower.
  const std::vector<double> tie = {0.01, -0.02, 0.015, -0.01, 0.0};
  EXPECT_GT(SlowerPValue(tie, 0), 0.3);
  // 5% slower is within a 10% noise margin: not shown slower than it.
  const std::vector<double> five = {std::log(1.05), std::log(1.04), std::log(1.06)};
  EXPECT_GT(SlowerPValue(five, 0.10), 0.5);
  EXPECT_EQ(SlowerPValue({1.0}, 0), 1);
  EXPECT_EQ(SlowerPValue({1.0, 1.0}, 0), 0);
}

}  // namespace
}  // namespace alloctrace
