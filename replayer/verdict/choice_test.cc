#include "alloctrace/replayer/verdict/choice.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// A candidate whose figure is `base` times `factor` in each of `rounds`
// rounds, with a small wobble so that its intervals have a width.
ChoiceCandidate Candidate(const std::string& name, double factor, int order, double peak_mib = 10,
                          int rounds = 12, bool frees = true) {
  ChoiceCandidate c;
  c.name = name;
  c.order = order;
  c.peak_rss = peak_mib * 1024 * 1024;
  c.speed.frees_blocks = frees;
  std::vector<double> values;
  for (int r = 0; r < rounds; ++r) {
    // The same machine noise for every candidate in a round (paired), and
    // a small wobble of its own.
    const double round_noise = 1.0 + 0.2 * ((r * 7) % 5) / 5.0;
    const double own = 1.0 + 0.004 * ((r * 3 + name.size()) % 3);
    c.speed.by_round[r] = 100 * factor * round_noise * own;
    values.push_back(c.speed.by_round[r]);
  }
  c.speed.median = MedianWithCi(values);
  return c;
}

std::string PickName(const std::vector<ChoiceCandidate>& c, const Choice& ch) {
  return ch.pick == Choice::kNone ? "" : c[ch.pick].name;
}

TEST(ChooseTest, AmongTheEquallyFastThePreferenceDecidesNotTheNoise) {
  // Three pools within 3% of each other: the one first in the fixed order
  // is named whichever happens to be fastest in this invocation.
  for (const double slab : {0.97, 1.0, 1.03}) {
    const std::vector<ChoiceCandidate> c = {
        Candidate("malloc", 1.4, 0), Candidate("boost_fast_pool_nolock", 1.0, 3),
        Candidate("slab/st/single", slab, 1), Candidate("pool/simple/exp/st/single/free", 0.99, 4)};
    const Choice ch = Choose(c, /*noise_margin=*/0.01, /*rss_slack=*/0.10);
    EXPECT_EQ(PickName(c, ch), "slab/st/single") << "slab at " << slab;
    EXPECT_EQ(ch.equivalent.size(), 3u);
    EXPECT_DOUBLE_EQ(ch.margin, kEquivalenceMargin);
  }
}

TEST(ChooseTest, APolicyShownFasterByMoreThanTheMarginWins) {
  const std::vector<ChoiceCandidate> c = {Candidate("malloc", 1.0, 0),
                                          Candidate("tcmalloc", 0.8, 2)};
  const Choice ch = Choose(c, 0.01, 0.10);
  EXPECT_EQ(PickName(c, ch), "tcmalloc");
  EXPECT_EQ(ch.equivalent, (std::vector<size_t>{1}));
  // Within the margin, the reference stays: nothing to change.
  const std::vector<ChoiceCandidate> close = {Candidate("malloc", 1.0, 0),
                                              Candidate("tcmalloc", 0.97, 2)};
  const Choice held = Choose(close, 0.01, 0.10);
  EXPECT_EQ(PickName(close, held), "malloc");
  EXPECT_EQ(close[held.fastest].name, "tcmalloc");
  EXPECT_GT(held.pick_vs_fastest.median, 1.0);
}

TEST(ChooseTest, AWideNoiseFloorWidensTheMargin) {
  const std::vector<ChoiceCandidate> c = {Candidate("malloc", 1.0, 0),
                                          Candidate("jemalloc", 0.9, 2)};
  EXPECT_EQ(PickName(c, Choose(c, 0.01, 0.10)), "jemalloc");
  const Choice wide = Choose(c, 0.15, 0.10);
  EXPECT_DOUBLE_EQ(wide.margin, 0.15);
  EXPECT_EQ(PickName(c, wide), "malloc");
}

// A candidate whose figures over `base`'s are `ratios`, round by round.
ChoiceCandidate Against(const ChoiceCandidate& base, const std::string& name,
                        const std::vector<double>& ratios, int order) {
  ChoiceCandidate c = base;
  c.name = name;
  c.order = order;
  std::vector<double> values;
  for (size_t r = 0; r < ratios.size(); ++r) {
    c.speed.by_round[static_cast<int>(r)] = base.speed.by_round.at(static_cast<int>(r)) * ratios[r];
    values.push_back(c.speed.by_round[static_cast<int>(r)]);
  }
  c.speed.median = MedianWithCi(values);
  return c;
}

TEST(ChooseTest, FewNoisyRoundsDoNotMakeTheReferenceEquallyFast) {
  // A busy machine's 7 rounds: glibc malloc about 1.3x mimalloc's time,
  // every round slower, the interval wide. Shown slower, and by more than
  // the margin at the median: mimalloc is named, as with more rounds.
  const ChoiceCandidate mimalloc = Candidate("mimalloc", 1.0, 2, 10, 7);
  const std::vector<ChoiceCandidate> busy = {
      Against(mimalloc, "malloc", {1.01, 1.32, 1.55, 1.03, 1.40, 1.28, 1.35}, 0), mimalloc};
  const Choice ch = Choose(busy, 0.02, 0.10);
  EXPECT_GT(PairedRatio(busy[0].speed.by_round, mimalloc.speed.by_round).lo, 1.0);
  EXPECT_LT(PairedRatio(busy[0].speed.by_round, mimalloc.speed.by_round).lo, 1.05);
  EXPECT_EQ(PickName(busy, ch), "mimalloc");
  // Its interval reaching 1 does not keep it: its median, 1.28x, is
  // beyond the margin.
  const std::vector<ChoiceCandidate> unknown = {
      Against(mimalloc, "malloc", {0.85, 1.32, 1.55, 0.90, 1.40, 1.28, 0.95}, 0), mimalloc};
  EXPECT_LT(PairedRatio(unknown[0].speed.by_round, mimalloc.speed.by_round).lo, 1.0);
  const Choice noisy = Choose(unknown, 0.02, 0.10);
  EXPECT_EQ(PickName(unknown, noisy), "mimalloc");
  EXPECT_EQ(noisy.equivalent, (std::vector<size_t>{1}));
  // A median within the margin keeps it, however wide the interval: the
  // reference, first in the order, is named.
  const std::vector<ChoiceCandidate> close = {
      Against(mimalloc, "malloc", {0.70, 1.02, 1.45, 0.96, 1.30, 1.03, 0.80}, 0), mimalloc};
  EXPECT_EQ(PickName(close, Choose(close, 0.02, 0.10)), "malloc");
}

TEST(ChooseTest, MemoryDecidesOnlyAmongTheEquallyFast) {
  // A slower policy with half the memory is not chosen for it.
  const std::vector<ChoiceCandidate> slower = {Candidate("mimalloc", 0.8, 2, 40),
                                               Candidate("slab/mt/stack", 1.0, 1, 20)};
  const Choice a = Choose(slower, 0.01, 0.10);
  EXPECT_EQ(PickName(slower, a), "mimalloc");
  EXPECT_EQ(a.memory_passed_over, Choice::kNone);
  // Equally fast, the preference's pick is left out for 2x the peak.
  const std::vector<ChoiceCandidate> equal = {Candidate("slab/st/stack", 1.0, 1, 40),
                                              Candidate("tcmalloc", 1.01, 2, 20)};
  const Choice b = Choose(equal, 0.01, 0.10);
  EXPECT_EQ(PickName(equal, b), "tcmalloc");
  EXPECT_EQ(equal[b.memory_passed_over].name, "slab/st/stack");
  // With memory not weighed, the preference alone.
  EXPECT_EQ(PickName(equal, Choose(equal, 0.01, -1)), "slab/st/stack");
  // A peak within the slack changes nothing.
  const std::vector<ChoiceCandidate> near = {Candidate("slab/st/stack", 1.0, 1, 10.5),
                                             Candidate("tcmalloc", 1.01, 2, 10)};
  EXPECT_EQ(PickName(near, Choose(near, 0.01, 0.10)), "slab/st/stack");
}

TEST(ChooseTest, ANeverFreeingPolicyNeedsItsOwnMargin) {
  // 8% faster and never frees: the fastest that frees is named, and the
  // one passed over is said.
  const std::vector<ChoiceCandidate> c = {
      Candidate("pool/simple/lin/st/single/keep", 0.92, 4, 10, 12, /*frees=*/false),
      Candidate("slab/st/single", 1.0, 1)};
  const Choice ch = Choose(c, 0.01, 0.10);
  EXPECT_EQ(PickName(c, ch), "slab/st/single");
  EXPECT_EQ(ch.never_frees_passed_over, 0u);
  EXPECT_GT(ch.never_frees_edge.median, 1.0);
  // 30% faster: shown beyond the margin, it is named.
  const std::vector<ChoiceCandidate> far = {
      Candidate("pool/simple/lin/st/single/keep", 0.7, 4, 10, 12, /*frees=*/false),
      Candidate("slab/st/single", 1.0, 1)};
  EXPECT_EQ(PickName(far, Choose(far, 0.01, 0.10)), "pool/simple/lin/st/single/keep");
}

TEST(ChooseTest, APolicyMeasuredInTooFewRoundsIsNotNamedOverOnesMeasuredEnough) {
  // Two rounds only, and first in the order: not named over a policy
  // measured in twelve.
  const std::vector<ChoiceCandidate> c = {Candidate("malloc", 1.6, 0, 10, /*rounds=*/2),
                                          Candidate("jemalloc", 1.0, 2)};
  EXPECT_EQ(PickName(c, Choose(c, 0.01, 0.10)), "jemalloc");
  // When nothing is measured enough, the rule still names one.
  const std::vector<ChoiceCandidate> few = {Candidate("malloc", 1.0, 0, 10, 2),
                                            Candidate("jemalloc", 0.5, 2, 10, 2)};
  EXPECT_NE(Choose(few, 0.01, 0.10).pick, Choice::kNone);
}

// In the program std ran 43 rounds and jemalloc 42, the late ones on a
// quieter machine: std's median read lower, though jemalloc was 1.05x
// std's speed in every round both ran. The fastest is read paired.
TEST(ChooseTest, TheFastestIsReadPairedWithTheReference) {
  ChoiceCandidate std_c, jemalloc;
  std_c.name = "std";
  std_c.order = -1;
  std_c.speed.reference = true;
  jemalloc.name = "jemalloc";
  jemalloc.order = 200;
  std::vector<double> s, j, ratios;
  for (int r = 0; r < 20; ++r) {
    const double load = r < 10 ? 1.4 : 1.0;  // a busy first half
    std_c.speed.by_round[r] = 0.45 * load;
    s.push_back(0.45 * load);
    if (r < 10) {  // jemalloc ran in the busy rounds only
      jemalloc.speed.by_round[r] = 0.45 * load / (1.15 + 0.001 * r);
      j.push_back(jemalloc.speed.by_round[r]);
      ratios.push_back(std_c.speed.by_round[r] / jemalloc.speed.by_round[r]);
    }
  }
  std_c.speed.median = MedianWithCi(s);
  jemalloc.speed.median = MedianWithCi(j);
  jemalloc.speed.vs_reference = MedianWithCi(ratios);
  ASSERT_LT(std_c.speed.median.median, jemalloc.speed.median.median);
  const std::vector<ChoiceCandidate> c = {std_c, jemalloc};
  const Choice ch = Choose(c, 0.01, 0.10);
  EXPECT_EQ(c[ch.fastest].name, "jemalloc");
  EXPECT_EQ(PickName(c, ch), "jemalloc") << "15% faster: beyond the margin";
}

TEST(ChooseTest, NothingWithAFigureNamesNothing) {
  std::vector<ChoiceCandidate> c(2);
  c[0].name = "malloc";
  c[1].name = "tcmalloc";
  EXPECT_EQ(Choose(c, 0, 0.1).pick, Choice::kNone);
  EXPECT_EQ(Choose({}, 0, 0.1).pick, Choice::kNone);
}

}  // namespace
}  // namespace alloctrace
