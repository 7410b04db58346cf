#include "alloctrace/replayer/verdict/in_situ_verdict.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// A policy of a class's race whose runs take `seconds` x (1 + a small
// per-round wobble) of CPU time in rounds 1..n, summarized as in_situ.cc
// does (the ranked figure and the ratio to the reference, paired).
InSituPolicy Runs(const std::string& name, double seconds, bool reference = false, int n = 12) {
  InSituPolicy p;
  p.name = name;
  p.reference = reference;
  p.family = allocators::Family::kOurs;
  for (int round = 1; round <= n; ++round) {
    InSituRun r;
    r.round = round;
    r.cpu_s = r.wall_s = seconds * (1 + 0.002 * (round % 3));
    r.peak_rss_bytes = 8 << 20;
    p.runs.push_back(r);
  }
  std::vector<double> cpu;
  for (const InSituRun& r : p.runs) cpu.push_back(r.cpu_s);
  p.cpu_s = p.wall_s = p.ranked = MedianWithCi(cpu);
  p.peak_rss_bytes = MedianWithCi(std::vector<double>(n, 8 << 20));
  return p;
}

InSituSummary Race(std::vector<InSituPolicy> policies) {
  InSituSummary s;
  s.clock = TimingClock::kCpu;
  s.reference = policies[0].name;
  for (InSituPolicy& p : policies) {
    if (!p.reference) p.vs_reference = PairedSlowdown(p, policies[0], s.clock);
  }
  s.policies = std::move(policies);
  return s;
}

TEST(DecideClassRaceTest, WithinTheMarginTheClassHoldsAndLeansToTheFastest) {
  // slab/st/stack reads 3% faster than the held slab/mt/stack in every
  // round: shown faster, but within the 5% margin.
  const InSituSummary race = Race({Runs("slab/mt/stack", 1.00, /*reference=*/true),
                                   Runs("slab/st/stack", 0.97), Runs("heap", 0.99)});
  const ClassRaceDecision d = DecideClassRace(race, 0.10);
  EXPECT_FALSE(d.moved);
  EXPECT_EQ(d.policy, "slab/mt/stack");
  EXPECT_EQ(d.leaning, "slab/st/stack");
  EXPECT_NE(d.note.find("by more than 5%: held"), std::string::npos) << d.note;
}

TEST(DecideClassRaceTest, BeyondTheMarginTheClassMoves) {
  const InSituSummary race =
      Race({Runs("heap", 1.00, /*reference=*/true), Runs("slab/st/stack", 0.85)});
  const ClassRaceDecision d = DecideClassRace(race, 0.10);
  EXPECT_TRUE(d.moved);
  EXPECT_EQ(d.policy, "slab/st/stack");
  EXPECT_EQ(d.leaning, "slab/st/stack");
  EXPECT_GT(d.gain.lo, 1.1);
}

TEST(DecideClassRaceTest, NothingAheadOfTheHeldIsNoLeaning) {
  const InSituSummary race =
      Race({Runs("heap", 1.00, /*reference=*/true), Runs("slab/st/stack", 1.02), Runs("x", 1.2)});
  const ClassRaceDecision d = DecideClassRace(race, 0.10);
  EXPECT_FALSE(d.moved);
  EXPECT_EQ(d.leaning, "");
}

TEST(DecideClassRaceTest, TooFewPairedRoundsIsNoLeaning) {
  const InSituSummary race =
      Race({Runs("heap", 1.00, /*reference=*/true, 2), Runs("slab/st/stack", 0.9, false, 2)});
  EXPECT_EQ(DecideClassRace(race, 0.10).leaning, "");
}

TEST(DecideInSituTest, ACandidateStoppedAfterTwoRunsIsNotTiedFastest) {
  InSituSummary s = Race({Runs("std", 1.00, /*reference=*/true), Runs("slab/mt/stack", 0.90),
                          Runs("slab/mt/single", 6.0, false, 2)});
  s.reference = "std";
  DecideInSitu(s, "", 0.10);
  EXPECT_EQ(s.recommended, "slab/mt/stack");
  EXPECT_TRUE(s.policies[1].tied_fastest);
  EXPECT_FALSE(s.policies[2].tied_fastest) << "2 runs, 6x slower";
  EXPECT_EQ(s.fastest, std::vector<std::string>{"slab/mt/stack"});
}

// After one round every candidate is "tied" for want of rounds, but one
// the race eliminated in that round (40x slower: a gross loser) was shown
// slower: it is neither tied with the fastest nor a candidate.
TEST(DecideInSituTest, ACandidateTheRaceEliminatedIsNotTiedFastest) {
  InSituSummary s = Race({Runs("std", 1.00, /*reference=*/true, 1), Runs("mimalloc", 0.9, false, 1),
                          Runs("slab/st/stack", 40.0, false, 1)});
  s.policies[2].eliminated = true;
  s.policies[2].stop_reason = "eliminated after 1 run: 40.0x slower than mimalloc";
  DecideInSitu(s, "", 0.10);
  EXPECT_TRUE(s.policies[0].tied_fastest);
  EXPECT_TRUE(s.policies[1].tied_fastest);
  EXPECT_FALSE(s.policies[2].tied_fastest);
  EXPECT_EQ(s.fastest, (std::vector<std::string>{"mimalloc", "std"}));
  EXPECT_EQ(s.recommended, "std");
}

// The rows are ordered by the ratio shown beside them, paired by round:
// tcmalloc's 3 runs met a quiet machine (the lowest median) but it was
// slower than std in each of its rounds.
TEST(OrderInSituPoliciesTest, ByThePairedRatioNotTheUnpairedMedian) {
  InSituSummary s = Race({Runs("std", 1.00, /*reference=*/true), Runs("slab/mt/stack", 0.90)});
  InSituPolicy early = Runs("tcmalloc", 0.80, false, 3);
  early.vs_reference = Estimate{0.95, 0.93, 0.97, 3};
  s.policies.push_back(early);
  InSituPolicy failed;
  failed.name = "jemalloc";
  failed.status = RunStatus::kFailed;
  s.policies.insert(s.policies.begin(), failed);
  OrderInSituPolicies(s.policies);
  ASSERT_EQ(s.policies.size(), 4u);
  EXPECT_EQ(s.policies[0].name, "slab/mt/stack");
  EXPECT_EQ(s.policies[1].name, "std");
  EXPECT_EQ(s.policies[2].name, "tcmalloc");
  EXPECT_EQ(s.policies[3].name, "jemalloc");
}

}  // namespace
}  // namespace alloctrace
