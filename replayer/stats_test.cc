#include "replayer/stats.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

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

}  // namespace
}  // namespace alloctrace
