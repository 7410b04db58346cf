// The verdict engine on synthetic runs: per-policy figures, ties paired by
// round, and the recommendation, with the words the reports give them
// (reports/words.h). No timing, no child processes.
#include "alloctrace/replayer/verdict/summary.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/choice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using ::testing::HasSubstr;

// One successful run of 1000 ops: a cold pass of `ns` per op of CPU time.
RunRecord Run(int round, double ns, int64_t peak_rss) {
  RunRecord r;
  r.round = round;
  r.result.ops = 1000;
  PassFigures f;
  f.cpu_seconds = ns * 1000 * 1e-9;
  f.wall_seconds = f.cpu_seconds;
  r.result.passes.push_back(f);
  r.result.peak_rss = peak_rss;
  return r;
}

// A policy's runs, one per round, at ns[i] per op in round i.
PolicyRuns Runs(const std::string& name, const std::vector<double>& ns,
                int64_t peak_rss = 1 << 20) {
  PolicyRuns p;
  p.name = name;
  // The roles MeasureTrace gives glibc malloc and bump.
  if (name == "malloc") p.role = Role::kReference;
  if (name == "bump") p.role = Role::kFloor;
  p.family = allocators::Family::kArticle;
  for (size_t i = 0; i < ns.size(); ++i) {
    p.runs.push_back(Run(static_cast<int>(i), ns[i], peak_rss));
  }
  p.attempts = static_cast<int>(ns.size());
  return p;
}

// `base` scaled by `factor`, round by round (a paired ratio of exactly it).
std::vector<double> Scaled(const std::vector<double>& base, double factor) {
  std::vector<double> v;
  for (double x : base) v.push_back(x * factor);
  return v;
}

// Twelve rounds of a machine whose speed drifts by +-20% between rounds:
// unpaired CIs of medians are wide, ratios paired by round are not.
const std::vector<double> kDrift = {10, 12, 8, 11, 9, 12, 8, 10, 11, 9, 12, 8};

ReportContext Cold() {
  ReportContext ctx;
  ctx.rank_by = RankBy::kCold;
  ctx.passes = 1;
  ctx.clock = TimingClock::kCpu;
  return ctx;
}

MeasuredTrace Measured(const std::vector<PolicyRuns>& runs, const PolicyRuns& noise) {
  MeasuredTrace m;
  m.trace.path = "synthetic.trace";
  m.trace.memory_ops = 1000;
  m.trace.arena_events = 2;  // an instrumented container (see AdoptableUnchanged)
  m.trace.peak_live_bytes = 1 << 20;
  m.policies = runs;
  m.noise = noise;
  m.rounds = 12;
  return m;
}

TraceReport Summarized(const std::vector<PolicyRuns>& runs, const PolicyRuns& noise = {}) {
  return Summarize(Measured(runs, noise), Cold());
}

const PolicyResult& Find(const TraceReport& t, const std::string& name) {
  for (const PolicyResult& p : t.policies) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no policy " << name;
  static const PolicyResult kNone;
  return kNone;
}

TEST(SummarizePolicyTest, FiguresStatusAndRatioToMalloc) {
  const PolicyRuns malloc = Runs("malloc", kDrift);
  const PolicyRuns slab = Runs("slab", Scaled(kDrift, 0.5));
  const std::map<int, double> mc = FiguresByRound(malloc.runs, false, TimingClock::kCpu);
  const PolicyResult p =
      SummarizePolicy(slab, mc, {}, 1 << 20, Cold(), Cold().RankingFor(TimingClock::kCpu));
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.runs, 12);
  EXPECT_NEAR(p.vs_malloc.median, 2.0, 1e-9);
  EXPECT_NEAR(p.vs_malloc.lo, 2.0, 1e-9);
  EXPECT_NEAR(p.vs_malloc.hi, 2.0, 1e-9);
  EXPECT_FALSE(p.precise);  // the ratio is exact, but the ns/op drift +-20%
  EXPECT_NEAR(p.overhead, 1.0, 1e-9);
  EXPECT_FALSE(p.warm_ns_per_op.has_data());  // one pass: no warm figure
}

TEST(SummarizeTest, APairedTieDespiteDrift) {
  // b is a hair slower than a in half the rounds, faster in the others.
  std::vector<double> b = kDrift;
  for (size_t i = 0; i < b.size(); ++i) b[i] *= i % 2 ? 1.01 : 0.99;
  const TraceReport t =
      Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift), Runs("b", b)});
  EXPECT_EQ(t.verdict.fastest.size(), 2u);
  EXPECT_TRUE(Find(t, "a").tied_fastest);
  EXPECT_TRUE(Find(t, "b").tied_fastest);
  EXPECT_FALSE(Find(t, "malloc").tied_fastest);
}

// A policy with too few rounds to be told apart from the fastest is in its
// tied group, but is not recommended over those measured enough; where no
// member is measured enough, the group stays whole.
SpeedFigures Figures(const std::map<int, double>& by_round) {
  SpeedFigures f;
  f.by_round = by_round;
  std::vector<double> v;
  for (const auto& [round, x] : by_round) v.push_back(x);
  f.median = MedianWithCi(v);
  return f;
}

ChoiceCandidate Named(const std::string& name, int order, const SpeedFigures& f) {
  ChoiceCandidate c;
  c.name = name;
  c.order = order;
  c.speed = f;
  return c;
}

TEST(ChooseOnFiguresTest, APolicyTiedForWantOfRoundsIsNotRecommended) {
  // tcmalloc over 3 rounds; small_node, first in the order, 1.7x slower,
  // in 2 of them only.
  const std::vector<SpeedFigures> measured = {Figures({{0, 28.4}, {1, 28.0}, {2, 29.1}}),
                                              Figures({{0, 49.1}, {1, 48.7}})};
  EXPECT_EQ(FastestTiedGroup(measured, 0), (std::vector<size_t>{0, 1}));
  const Choice c =
      Choose({Named("tcmalloc", 2, measured[0]), Named("small_node", 1, measured[1])}, 0, 0.1);
  EXPECT_EQ(c.pick, 0u);
  EXPECT_EQ(c.equivalent, (std::vector<size_t>{0}));
  // Every policy on 2 rounds: none is measured enough, none can be told
  // apart: both are equally fast (a provisional verdict says so).
  const std::vector<SpeedFigures> provisional = {Figures({{0, 28.4}, {1, 28.0}}),
                                                 Figures({{0, 49.1}, {1, 48.7}})};
  EXPECT_EQ(
      Choose({Named("tcmalloc", 2, provisional[0]), Named("small_node", 1, provisional[1])}, 0, 0.1)
          .equivalent,
      (std::vector<size_t>{0, 1}));
}

// A never-freeing policy leads; f1, which frees, is 0% or 6% slower, round
// by round; f2, which frees too, is 6% slower in every round. Neither is
// shown slower than the leader by more than the never-freeing margin, so
// both are equally fast, and the leader, which never frees, leaves.
TEST(ChooseOnFiguresTest, AmongFreeingPoliciesTheNeverFreeingLeaderDoesNotChoose) {
  std::map<int, double> keep, f1, f2;
  for (int round = 0; round < 12; ++round) {
    const double base = 10 + round;  // the rounds drift
    keep[round] = base;
    f1[round] = base * (round % 2 ? 1.06 : 1.0);
    f2[round] = base * 1.06;
  }
  std::vector<SpeedFigures> figures = {Figures(keep), Figures(f1), Figures(f2)};
  figures[0].frees_blocks = false;
  EXPECT_EQ(FastestTiedGroup(figures, 0), (std::vector<size_t>{0, 1}));
  const Choice c =
      Choose({Named("keep", 4, figures[0]), Named("f1", 1, figures[1]), Named("f2", 1, figures[2])},
             0, 0.1);
  EXPECT_EQ(c.equivalent, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(c.pick, 1u);
  EXPECT_EQ(c.never_frees_passed_over, 0u);
}

TEST(SummarizeTest, AClearWinnerThatUnpairedIntervalsWouldHaveTied) {
  // c is 5% slower in every round; the drift makes both CIs of the median
  // overlap, but the ratio paired by round excludes 1.
  const TraceReport t = Summarized(
      {Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift), Runs("c", Scaled(kDrift, 1.05))});
  EXPECT_TRUE(Overlaps(Find(t, "a").ns_per_op, Find(t, "c").ns_per_op));
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"a"});
  EXPECT_FALSE(Find(t, "c").tied_fastest);
  EXPECT_EQ(t.verdict.recommended, "a");
  EXPECT_NEAR(t.verdict.fastest_vs_malloc.median, 2.0, 1e-9);
}

TEST(SummarizeTest, WithinTheNoiseFloorIsATie) {
  // The same 5% apart, but two malloc run sets read 6% apart here.
  PolicyRuns noise = Runs("malloc (again)", Scaled(kDrift, 2 * 1.06));
  const TraceReport t = Summarized(
      {Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift), Runs("c", Scaled(kDrift, 1.05))},
      noise);
  EXPECT_NEAR(NoiseMargin(t.noise_floor), 0.06, 1e-9);
  EXPECT_EQ(t.verdict.fastest, (std::vector<std::string>{"a", "c"}));
}

TEST(SummarizeTest, AFloorWideButCentredIsNoTie) {
  // Two malloc run sets 6% apart either way by round, 1x at the median:
  // the rounds' noise is in every comparison's own interval, and c, 5%
  // slower in every round, is shown slower.
  std::vector<double> again = kDrift;
  for (size_t i = 0; i < again.size(); ++i) again[i] *= i % 2 ? 1.06 : 0.94;
  PolicyRuns noise = Runs("malloc (again)", Scaled(again, 2));
  const TraceReport t = Summarized(
      {Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift), Runs("c", Scaled(kDrift, 1.05))},
      noise);
  EXPECT_GE(t.noise_floor.hi, 1.05);
  EXPECT_LT(NoiseMargin(t.noise_floor), 0.01);
  EXPECT_EQ(t.verdict.fastest, (std::vector<std::string>{"a"}));
}

TEST(SummarizeTest, AFailedPolicyIsNeverRankedTiedOrRecommended) {
  PolicyRuns crashed = Runs("fast_but_crashed", Scaled(kDrift, 0.1));
  crashed.failed = 1;
  crashed.attempts = 13;
  crashed.first_error = "run 13: crashed with signal 11";
  const TraceReport t =
      Summarized({Runs("malloc", Scaled(kDrift, 2)), crashed, Runs("slab", kDrift)});
  EXPECT_EQ(t.failed_policies, 1);
  const PolicyResult& f = Find(t, "fast_but_crashed");
  EXPECT_EQ(f.status, PolicyResult::Status::kFailed);
  EXPECT_NE(f.failure.find("1 of 13 runs failed; first: run 13"), std::string::npos);
  EXPECT_FALSE(f.tied_fastest);
  EXPECT_EQ(t.policies.back().name, "fast_but_crashed");  // after every ok one
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"slab"});
  EXPECT_EQ(t.verdict.recommended, "slab");
}

TEST(SummarizeTest, BumpIsNotAContender) {
  const TraceReport t =
      Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("bump", Scaled(kDrift, 0.2), 64 << 20),
                  Runs("slab", kDrift)});
  EXPECT_EQ(t.policies.front().name, "bump");  // ranked by its figures
  EXPECT_FALSE(Find(t, "bump").tied_fastest);
  EXPECT_FALSE(Find(t, "bump").tied_smallest_rss);
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"slab"});
  EXPECT_EQ(t.verdict.recommended, "slab");
}

TEST(SummarizeTest, TheRssSlackRule) {
  // fast is 20% faster than lean but holds twice its memory: memory decides
  // only among the equally fast, so fast is recommended.
  const TraceReport t =
      Summarized({Runs("malloc", Scaled(kDrift, 2), 12 << 20),
                  Runs("fast", Scaled(kDrift, 0.8), 8 << 20), Runs("lean", kDrift, 4 << 20)});
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"fast"});
  EXPECT_EQ(t.verdict.smallest_rss, std::vector<std::string>{"lean"});
  EXPECT_EQ(t.verdict.recommended, "fast");
  EXPECT_EQ(t.verdict.memory_passed_over, "");
  EXPECT_TRUE(absl::StrContains(ReplayRuleWords(Cold()),
                                "within 10% or 1 MiB (whichever is more) of "
                                "the smallest"))
      << ReplayRuleWords(Cold());
  // Within the slack (5% more memory), the fastest is recommended.
  const TraceReport u = Summarized({Runs("malloc", Scaled(kDrift, 2), 12 << 20),
                                    Runs("fast", Scaled(kDrift, 0.8), (4 << 20) * 21 / 20),
                                    Runs("lean", kDrift, 4 << 20)});
  EXPECT_EQ(u.verdict.recommended, "fast");
  // Equally fast: the smaller of the two when it is smaller beyond the
  // slack, whatever the medians and the order say.
  std::vector<double> b = kDrift;
  for (size_t i = 0; i < b.size(); ++i) b[i] *= i % 2 ? 1.01 : 0.985;
  const TraceReport w = Summarized({Runs("malloc", Scaled(kDrift, 2), 3 << 20),
                                    Runs("big", kDrift, 4 << 20), Runs("small", b, 1 << 20)});
  EXPECT_EQ(w.verdict.fastest.size(), 2u);
  EXPECT_EQ(w.verdict.recommended, "small");
  EXPECT_EQ(w.verdict.memory_passed_over, "big");
  EXPECT_THAT(ChoiceWords(w.verdict), HasSubstr("big, as fast and earlier in the order, is left "
                                                "out for its peak RSS"));
  // Within the slack (1.05 MiB against 1 MiB), memory changes nothing: the
  // order (here the name) decides.
  const TraceReport x =
      Summarized({Runs("malloc", Scaled(kDrift, 2), 3 << 20),
                  Runs("big", kDrift, (1 << 20) * 21 / 20), Runs("small", b, 1 << 20)});
  EXPECT_EQ(x.verdict.recommended, "big");
  EXPECT_EQ(x.verdict.memory_passed_over, "");
}

// A captured `sort` trace: an article pool 2.9x slower than tcmalloc
// peaked at 208 KiB, malloc at 252 KiB. By 10% alone the pool was
// recommended for 44 KiB; under the 1 MiB floor the fastest wins.
TEST(SummarizeTest, AFewKibOfPeakRssAreNotWorthSpeed) {
  const PolicyRuns tcmalloc = Runs("tcmalloc", kDrift, 900 << 10);
  const PolicyRuns malloc = Runs("malloc", Scaled(kDrift, 1.4), 252 << 10);
  const PolicyRuns pool = Runs("pool/simple/exp/st/stack/free", Scaled(kDrift, 2.9), 208 << 10);
  const TraceReport t = Summarized({malloc, tcmalloc, pool});
  EXPECT_EQ(t.verdict.smallest_rss, std::vector<std::string>{"pool/simple/exp/st/stack/free"});
  EXPECT_EQ(t.verdict.recommended, "tcmalloc");
  // 44 KiB apart, the faster of the two.
  EXPECT_EQ(Summarized({malloc, pool}).verdict.recommended, "malloc");
  // The pool raced out (not a contender): the same pick as without the race.
  PolicyRuns raced = pool;
  raced.eliminated = true;
  EXPECT_EQ(Summarized({malloc, tcmalloc, raced}).verdict.recommended, "tcmalloc");
}

TEST(SummarizeTest, WithinRssSlackIsTheLargerOfTheSlackAndOneMib) {
  constexpr double kMib = 1024 * 1024;
  EXPECT_TRUE(WithinRssSlack(208 << 10, 208 << 10, 0.10));
  EXPECT_TRUE(WithinRssSlack(252 << 10, 208 << 10, 0.10));  // 21% more, 44 KiB
  EXPECT_TRUE(WithinRssSlack(kMib + (208 << 10), 208 << 10, 0.10));
  EXPECT_FALSE(WithinRssSlack(kMib + (208 << 10) + 4096, 208 << 10, 0.10));
  EXPECT_TRUE(WithinRssSlack(110 * kMib, 100 * kMib, 0.10));  // 10% is more than 1 MiB
  EXPECT_FALSE(WithinRssSlack(111 * kMib, 100 * kMib, 0.10));
  EXPECT_TRUE(WithinRssSlack(5 * kMib, 4 * kMib, 0));  // the floor alone
  EXPECT_EQ(RssSlackWords(0.10), "within 10% or 1 MiB (whichever is more) of the smallest");
}

// Tied in speed and within a page or 2% in peak RSS, the pick does not
// follow the noise: a policy that frees beats one that never does, and then
// our pool beats an article policy, whichever reads a few pages smaller.
TEST(SummarizeTest, TiedPoliciesOfAlmostEqualRssArePickedByAStableRule) {
  std::vector<double> b = kDrift;
  for (size_t i = 0; i < b.size(); ++i) b[i] *= i % 2 ? 1.01 : 0.99;
  PolicyRuns keep = Runs("pool/simple/exp/st/single/keep", b, (1 << 20) - 8192);
  keep.frees_blocks = false;
  PolicyRuns article = Runs("pool/boundary/exp/st/single/free", b, (1 << 20) - 4096);
  PolicyRuns slab = Runs("slab/st/single", kDrift, 1 << 20);
  slab.family = allocators::Family::kOurs;
  const TraceReport t =
      Summarized({Runs("malloc", Scaled(kDrift, 2), 3 << 20), keep, article, slab});
  EXPECT_EQ(t.verdict.fastest.size(), 3u);
  EXPECT_EQ(t.verdict.recommended, "slab/st/single");
  // A smaller RSS beyond the slack still wins.
  article = Runs("pool/boundary/exp/st/single/free", b, 900 << 10);
  slab = Runs("slab/st/single", kDrift, 8 << 20);
  slab.family = allocators::Family::kOurs;
  const TraceReport u =
      Summarized({Runs("malloc", Scaled(kDrift, 2), 3 << 20), keep, article, slab});
  EXPECT_EQ(u.verdict.recommended, "pool/boundary/exp/st/single/free");
}

// A new user's verdict read "fastest: slab, ..., malloc and new
// (tied); 1.28x [1.27, 1.33] glibc malloc's speed": malloc tied with a
// policy 27-33% faster than it, round by round.
TEST(SummarizeTest, MallocIsNeverTiedWithAPolicyWhoseRatioToItExcludesOne) {
  // Rounds drift by a factor of two. slab is 1.28x malloc's speed in every
  // round, give or take 2%: unpaired, their CIs of the median overlap. The
  // fastest, noisy, is twice malloc's speed in 7 rounds and 0.98x in 5: its
  // paired ratios to malloc and to slab both include 1, so both are tied
  // with it by the rule, but not with each other.
  const std::vector<double> drift = {10, 20, 11, 19, 12, 18, 10, 20, 13, 17, 11, 19};
  std::vector<double> slab, noisy;
  for (size_t i = 0; i < drift.size(); ++i) {
    slab.push_back(drift[i] / 1.28 * (i % 3 == 0 ? 1.02 : i % 3 == 1 ? 0.98 : 1.0));
    noisy.push_back(drift[i] * (i < 7 ? 0.5 : 1.02));
  }
  const TraceReport t =
      Summarized({Runs("malloc", drift), Runs("slab", slab), Runs("noisy", noisy)});
  const PolicyResult& s = Find(t, "slab");
  ASSERT_GT(s.vs_malloc.lo, 1.2);
  ASSERT_LT(s.vs_malloc.hi, 1.35);
  EXPECT_TRUE(Overlaps(s.ns_per_op, Find(t, "malloc").ns_per_op));  // the old rule's tie
  EXPECT_EQ(t.verdict.fastest, (std::vector<std::string>{"noisy", "slab"}));
  EXPECT_FALSE(Find(t, "malloc").tied_fastest);
  // Wherever malloc is in the fastest group, every ratio beside it includes 1.
  for (const PolicyResult& p : t.policies) {
    if (p.tied_fastest && Find(t, "malloc").tied_fastest) {
      EXPECT_LE(p.vs_malloc.lo, 1);
      EXPECT_GE(p.vs_malloc.hi, 1);
    }
  }
}

TEST(SummarizeTest, MallocFastestKeepsItsPlaceAndDropsWhatItBeats) {
  // malloc is the fastest; x is 3% slower in every round, within a wide
  // noise floor (tied by the rule), but its ratio to malloc excludes 1.
  std::vector<double> again = kDrift;
  for (size_t i = 0; i < again.size(); ++i) again[i] *= i % 2 ? 1.06 : 0.94;
  const TraceReport t = Summarized({Runs("malloc", kDrift), Runs("x", Scaled(kDrift, 1.03))},
                                   Runs("malloc (again)", again));
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"malloc"});
  EXPECT_EQ(t.verdict.recommended, "malloc");
  // Its ratio to itself, [1, 1], is no interval: none is given.
  EXPECT_FALSE(t.verdict.fastest_vs_malloc.has_data());
}

TEST(SummarizeTest, EliminatedPoliciesKeepTheirRowAndReason) {
  PolicyRuns slow = Runs("boost_pool", Scaled(kDrift, 300));
  slow.eliminated = true;
  slow.stop_reason = "eliminated after 5 runs: 300x [300, 300] slower than slab";
  const TraceReport t = Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("slab", kDrift), slow});
  const PolicyResult& p = Find(t, "boost_pool");
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(p.eliminated);
  EXPECT_EQ(p.stop_reason, slow.stop_reason);
  EXPECT_EQ(p.runs, 12);
  EXPECT_FALSE(p.tied_fastest);
  EXPECT_EQ(t.verdict.recommended, "slab");
}

TEST(SummarizeTest, ANoteSaysWhenTheTotalBudgetCutTheRaceShort) {
  PolicyRuns slab = Runs("slab", kDrift);
  slab.stop = Stop::kTotalBudget;
  slab.stop_reason = "total budget of 16 s spent (--total_budget)";
  PolicyRuns slow = Runs("boost_pool", Scaled(kDrift, 300));
  slow.eliminated = true;
  slow.stop = Stop::kTotalBudget;
  slow.stop_reason = "total budget of 16 s spent (--total_budget)";  // not in the race
  auto budget_notes = [](const TraceReport& t) {
    std::vector<std::string> out;
    for (const std::string& n : TraceNotes(t)) {
      if (absl::StrContains(n, "total budget")) out.push_back(n);
    }
    return out;
  };
  const std::vector<std::string> notes =
      budget_notes(Summarized({Runs("malloc", Scaled(kDrift, 2)), slab, slow}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(notes[0], "before 1 policy still in the race (slab)")) << notes[0];
  EXPECT_TRUE(
      budget_notes(Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("slab", kDrift)})).empty());
  // Many: four named, the rest counted.
  std::vector<PolicyRuns> many = {Runs("malloc", Scaled(kDrift, 2))};
  for (int i = 0; i < 6; ++i) {
    many.push_back(Runs(absl::StrCat("p", i), kDrift));
    many.back().stop = Stop::kTotalBudget;
    many.back().stop_reason = "total budget of 16 s spent (--total_budget)";
  }
  const std::vector<std::string> six = budget_notes(Summarized(many));
  ASSERT_EQ(six.size(), 1u);
  EXPECT_TRUE(
      absl::StrContains(six[0], "before 6 policies still in the race (p0, p1, p2, p3 and 2 more)"))
      << six[0];
}

// How much budget the precision would take: the rounds' budget times
// (widest half-width / precision)^2, over the policies the total budget
// stopped in the race only.
TEST(BudgetForPrecisionTest, ScalesTheBudgetByTheSquareOfHowFarTheWidestIsFromThePrecision) {
  auto result = [](const std::string& name, double half_width, const std::string& stop) {
    PolicyResult p;
    p.name = name;
    p.stop_reason = stop;
    if (absl::StartsWith(stop, "total budget")) p.stop = Stop::kTotalBudget;
    p.ns_per_op = Estimate{100, 100 * (1 - half_width), 100 * (1 + half_width), 50};
    p.vs_malloc = Estimate{1, 1 - half_width / 2, 1 + half_width / 2, 50};
    return p;
  };
  const std::string spent = "total budget of 40 s spent (--total_budget)";
  // +-6% against +-3%: four times the 40 s.
  EXPECT_DOUBLE_EQ(
      BudgetForPrecision({result("slab", 0.06, spent), result("malloc", 0.03, spent)}, 0.03, 40),
      160);
  // The ratio's interval counts too (malloc's own is no interval).
  PolicyResult ratio_wide = result("slab", 0.03, spent);
  ratio_wide.vs_malloc = Estimate{1, 0.91, 1.09, 50};
  EXPECT_NEAR(BudgetForPrecision({ratio_wide}, 0.03, 40), 360, 1e-9);
  // Eliminated, stopped otherwise, or already precise: nothing to say.
  PolicyResult out = result("jemalloc", 0.2, spent);
  out.eliminated = true;
  EXPECT_EQ(BudgetForPrecision({out, result("tcmalloc", 0.2, "precise")}, 0.03, 40), 0);
  EXPECT_EQ(BudgetForPrecision({result("slab", 0.02, spent)}, 0.03, 40), 0);
  EXPECT_EQ(BudgetForPrecision({result("slab", 0.06, spent)}, 0.03, 0), 0);
}

TEST(SummarizeTest, TheTotalBudgetNoteSaysWhatBudgetTheIntervalsWouldNeed) {
  PolicyRuns slab = Runs("slab", kDrift);
  slab.stop = Stop::kTotalBudget;
  slab.stop_reason = "total budget of 16 s spent (--total_budget)";
  MeasuredTrace m = Measured({Runs("malloc", Scaled(kDrift, 2)), slab}, {});
  m.total_budget = 16;
  const TraceReport t = Summarize(m, Cold());
  ASSERT_GT(t.budget_for_precision, 16);
  std::string note;
  for (const std::string& n : TraceNotes(t)) {
    if (absl::StrContains(n, "total budget")) note = n;
  }
  const double v = t.budget_for_precision;
  const double step = v < 100 ? 1 : v < 1000 ? 10 : 100;  // two significant figures
  EXPECT_TRUE(absl::StrContains(note, absl::StrFormat("about --total_budget=%.0f would bring "
                                                      "them to it",
                                                      std::ceil(v / step) * step)))
      << note;
  // Without a total budget to scale, the note says only how to give more.
  m.total_budget = 0;
  const TraceReport unscaled = Summarize(m, Cold());
  EXPECT_EQ(unscaled.budget_for_precision, 0);
  for (const std::string& n : TraceNotes(unscaled)) {
    EXPECT_FALSE(absl::StrContains(n, "about --total_budget")) << n;
  }
}

TEST(SummarizeTest, ASlowerPolicySetsNoRssBar) {
  // lean holds 15% less than slab but was raced out: slab stays recommended,
  // as when a screen left lean out; and not eliminated, lean is slower, so
  // its memory decides nothing: list_churn's case, in MiB.
  PolicyRuns lean = Runs("pool/simple/exp/st/stack/free", Scaled(kDrift, 1.8), 44 << 20);
  lean.eliminated = true;
  lean.stop_reason = "eliminated after 5 runs: 1.80x [1.80, 1.80] slower than slab";
  std::vector<PolicyRuns> runs = {Runs("malloc", Scaled(kDrift, 1.4), 48 << 20),
                                  Runs("slab", kDrift, 52 << 20), lean};
  const TraceReport t = Summarized(runs);
  EXPECT_EQ(t.verdict.smallest_rss, std::vector<std::string>{"malloc"});
  EXPECT_EQ(t.verdict.recommended, "slab");
  runs[2].eliminated = false;
  EXPECT_EQ(Summarized(runs).verdict.recommended, "slab");
}

TEST(SummarizeTest, TheScreenKeepsTheFastestArticlePolicyOfEachKind) {
  // Two simple-storage article policies raced, neither eliminated (a race
  // cut short by its budget): the slower, leaner one is screened out, so it
  // sets no RSS bar; a policy named alone (no screen_kind) is never.
  PolicyRuns fast = Runs("pool/simple/exp/st/single/free", Scaled(kDrift, 1.6), 512 << 20);
  PolicyRuns lean = Runs("pool/simple/exp/st/stack/free", Scaled(kDrift, 1.8), 44 << 20);
  fast.screen_kind = lean.screen_kind = "simple";
  std::vector<PolicyRuns> runs = {Runs("malloc", Scaled(kDrift, 1.4), 48 << 20),
                                  Runs("slab", kDrift, 52 << 20), fast, lean};
  const TraceReport t = Summarized(runs);
  EXPECT_FALSE(Find(t, "pool/simple/exp/st/single/free").screened_out);
  EXPECT_TRUE(Find(t, "pool/simple/exp/st/stack/free").screened_out);
  EXPECT_NE(Find(t, "pool/simple/exp/st/stack/free").note.find("screened out"), std::string::npos);
  EXPECT_EQ(t.verdict.recommended, "slab");
  runs[3].screen_kind.clear();  // named by the user: a contender, but slower
  EXPECT_EQ(Summarized(runs).verdict.recommended, "slab");
}

TEST(SummarizeTest, TheScreenWeighsThoseThatFreeApartFromThoseThatNever) {
  // A keep pool 5% faster than the free pool of its kind: the free one stays
  // a contender (the recommendation weighs it against the keep pool by the
  // never-freeing margin), and is recommended.
  PolicyRuns keep = Runs("pool/simple/exp/st/single/keep", Scaled(kDrift, 0.95));
  PolicyRuns free = Runs("pool/simple/exp/st/single/free", kDrift);
  PolicyRuns slower = Runs("pool/simple/lin/st/single/free", Scaled(kDrift, 1.2));
  keep.frees_blocks = false;
  keep.screen_kind = free.screen_kind = slower.screen_kind = "simple";
  const TraceReport t = Summarized({Runs("malloc", Scaled(kDrift, 2)), keep, free, slower});
  EXPECT_FALSE(Find(t, "pool/simple/exp/st/single/keep").screened_out);
  EXPECT_FALSE(Find(t, "pool/simple/exp/st/single/free").screened_out);
  EXPECT_TRUE(Find(t, "pool/simple/lin/st/single/free").screened_out);
  EXPECT_NE(Find(t, "pool/simple/lin/st/single/free").note.find("that frees its blocks"),
            std::string::npos);
  EXPECT_EQ(t.verdict.recommended, "pool/simple/exp/st/single/free");
}

// On simple_map the single-holding keep pools read 3-8% faster than
// slab/st/single, tied in one run and not the next: the pick flipped between
// them. A policy that never frees must now be shown more than
// kNeverFreesMargin faster than the fastest that frees to be recommended.
TEST(SummarizeTest, ANeverFreeingPolicyDisplacesOneThatFreesOnlyByTheMargin) {
  PolicyRuns slab = Runs("slab/st/single", kDrift);
  slab.family = allocators::Family::kOurs;
  PolicyRuns boost = Runs("boost_fast_pool_nolock", Scaled(kDrift, 1.01));
  boost.family = allocators::Family::kBaseline;
  auto with_keep = [&](double factor) {
    PolicyRuns keep = Runs("pool/simple/exp/st/single/keep", Scaled(kDrift, factor));
    keep.frees_blocks = false;
    return Summarized({Runs("malloc", Scaled(kDrift, 2)), slab, boost, keep});
  };
  // 5% faster (1.05x, every round): the fastest, not recommended.
  const TraceReport a = with_keep(0.95);
  EXPECT_EQ(a.verdict.fastest, std::vector<std::string>{"pool/simple/exp/st/single/keep"});
  EXPECT_EQ(a.verdict.recommended, "slab/st/single");  // tied with boost: ours first
  EXPECT_TRUE(absl::StartsWith(PassedOverWords(a),
                               "pool/simple/exp/st/single/keep, 1.05x [1.05, 1.05] "
                               "slab/st/single's speed, never frees its blocks"))
      << PassedOverWords(a);
  EXPECT_TRUE(absl::StrContains(ReplaySentence(a, Cold()), PassedOverWords(a)));
  EXPECT_TRUE(absl::StrContains(ReplayRuleWords(Cold()),
                                "10% for a policy that frees against a fastest that never frees"))
      << ReplayRuleWords(Cold());
  // 9% faster: still inside the margin.
  EXPECT_EQ(with_keep(1 / 1.09).verdict.recommended, "slab/st/single");
  // 25% faster, shown: recommended, nothing passed over.
  const TraceReport b = with_keep(0.8);
  EXPECT_EQ(b.verdict.recommended, "pool/simple/exp/st/single/keep");
  EXPECT_TRUE(PassedOverWords(b).empty());
  // Tied with slab: slab, as before (a tie goes to the policy that frees).
  const TraceReport c = with_keep(1.0);
  EXPECT_EQ(c.verdict.recommended, "slab/st/single");
  EXPECT_TRUE(PassedOverWords(c).empty());
}

TEST(SummarizeTest, TheMarginNeedsPairedRoundsAndAFreeingContender) {
  // Twice as fast but in rounds slab never ran: no pairing, no margin shown.
  PolicyRuns keep = Runs("pool/simple/exp/st/single/keep", Scaled(kDrift, 0.5));
  keep.frees_blocks = false;
  PolicyRuns slab = Runs("slab/st/single", kDrift);
  for (RunRecord& r : slab.runs) r.round += 100;
  PolicyRuns malloc = Runs("malloc", Scaled(kDrift, 2));
  for (size_t i = 0; i < kDrift.size(); ++i) {
    malloc.runs.push_back(alloctrace::Run(static_cast<int>(100 + i), 2 * kDrift[i], 1 << 20));
  }
  const TraceReport t = Summarized({malloc, slab, keep});
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"pool/simple/exp/st/single/keep"});
  EXPECT_EQ(t.verdict.recommended, "slab/st/single");
  EXPECT_TRUE(
      absl::StartsWith(PassedOverWords(t), "pool/simple/exp/st/single/keep never frees its blocks"))
      << PassedOverWords(t);
  // Only never-freeing policies beside malloc, which they beat by far: the
  // fastest of them.
  PolicyRuns mono = Runs("pmr_monotonic", Scaled(kDrift, 0.9));
  mono.frees_blocks = false;
  keep = Runs("pool/simple/exp/st/single/keep", kDrift);
  keep.frees_blocks = false;
  EXPECT_EQ(
      Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("bump", Scaled(kDrift, 0.5)), mono, keep})
          .verdict.recommended,
      "pmr_monotonic");
}

TEST(SummarizeTest, OnOneArenaAPoolPerContainerAndOnePerProcessArePickedByRule) {
  // slab/st/stack reads 20% faster than slab/st/single, but with every block
  // in one arena they are the same replay: the rule picks single, whatever
  // the noise said. With two arenas they differ, and the figures decide.
  const std::vector<PolicyRuns> runs = {Runs("malloc", Scaled(kDrift, 2)),
                                        Runs("slab/st/stack", kDrift),
                                        Runs("slab/st/single", Scaled(kDrift, 1.2))};
  MeasuredTrace m = Measured(runs, PolicyRuns{});
  m.trace.arenas_used = 1;
  EXPECT_EQ(Summarize(m, Cold()).verdict.recommended, "slab/st/single");
  m.trace.arenas_used = 2;
  EXPECT_EQ(Summarize(m, Cold()).verdict.recommended, "slab/st/stack");
}

TEST(SummarizeTest, AVerdictFromFewerThanThreeRoundsIsProvisional) {
  const std::vector<double> two = {10, 12};
  const TraceReport t = Summarized({Runs("malloc", Scaled(two, 2)), Runs("a", two)});
  // Two rounds never make a difference: a is not told apart from malloc,
  // which keeps its place, and the verdict says it is provisional.
  EXPECT_EQ(t.verdict.recommended, "malloc");
  EXPECT_THAT(ProvisionalWords(t), HasSubstr("rest on 2 rounds"));
  // After in situ chose its reference (std), the replay's pick is what the
  // replay's rounds carry.
  TraceReport confirmed = t;
  confirmed.verdict.replay_recommended = confirmed.verdict.recommended;
  confirmed.verdict.recommended = "std";
  EXPECT_THAT(ProvisionalWords(confirmed), HasSubstr("rest on 2 rounds"));
  EXPECT_THAT(Times(Find(t, "a").vs_malloc), HasSubstr("n = 2: not measured enough"));
  EXPECT_EQ(Pct(Find(t, "a").vs_malloc), "n<3");
  // Twelve rounds make an interval, and the verdict is not provisional.
  const TraceReport full = Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift)});
  EXPECT_EQ(ProvisionalWords(full), "");
  EXPECT_EQ(Times(Find(full, "a").vs_malloc), "2.00x [2.00, 2.00]");
}

TEST(SummarizeTest, ANoiseFloorFromFewRoundsOrImplausibleIsSaidAndNotUsed) {
  const std::vector<double> two = {10, 12};
  TraceReport t = Summarized({Runs("malloc", Scaled(two, 2)), Runs("a", two)},
                             Runs("malloc (again)", Scaled(two, 2)));
  EXPECT_THAT(NoiseWords(t), HasSubstr("not measured enough"));
  // Malloc against itself reading 0.18x: a disturbed measurement.
  t = Summarized({Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift)},
                 Runs("malloc (again)", Scaled(kDrift, 2 / 0.18)));
  EXPECT_THAT(NoiseWords(t), HasSubstr("not usable"));
  EXPECT_EQ(NoiseMargin(t.noise_floor), 0);
}

TEST(SummarizeTest, APolicyPastItsLimitIsAnOutcomeNotAFailure) {
  PolicyRuns keep = Runs("pool/simple/exp/st/single/keep", {});
  keep.failed = keep.attempts = keep.over_limit = 1;
  keep.first_error = "run 1: killed when its resident memory passed the memory limit";
  PolicyRuns crashed = Runs("slab/st/single", {});
  crashed.failed = crashed.attempts = 1;
  crashed.over_limit = 0;
  crashed.first_error = "run 1: crashed with signal 11";
  const TraceReport t = Summarized({Runs("malloc", kDrift), keep, crashed});
  EXPECT_EQ(Find(t, "pool/simple/exp/st/single/keep").status, RunStatus::kOverLimit);
  EXPECT_THAT(Find(t, "pool/simple/exp/st/single/keep").failure,
              HasSubstr("1 of 1 runs stopped at a limit"));
  EXPECT_EQ(Find(t, "slab/st/single").status, RunStatus::kFailed);
  EXPECT_EQ(t.over_limit_policies, 1);
  EXPECT_EQ(t.failed_policies, 1);
  EXPECT_EQ(t.verdict.recommended, "malloc");
}

TEST(SummarizeTest, TheVerdictInTheProgramsTermsIsAnEstimateFromTheRecordingsSpan) {
  // malloc at 20 ns/op (median of 2 x kDrift), the pick twice as fast, over
  // 1000 ops: malloc's calls take 20 us, the pick's 10 us; of a recording
  // of 100 us, 10 us saved: 100 / 90 = 1.11x.
  MeasuredTrace m = Measured({Runs("malloc", Scaled(kDrift, 2)), Runs("a", kDrift)}, PolicyRuns{});
  m.trace.recorded_seconds = 100e-6;
  TraceReport t = Summarize(m, Cold());
  ASSERT_EQ(t.verdict.recommended, "a");
  EXPECT_NEAR(t.program.malloc_seconds, 2 * Median(kDrift) * 1e-6, 1e-12);
  EXPECT_NEAR(t.program.saved_seconds.median, t.program.malloc_seconds / 2, 1e-12);
  EXPECT_NEAR(t.program.speedup, 100 / (100 - 1e6 * t.program.malloc_seconds / 2), 1e-9);
  EXPECT_THAT(ProgramWords(t), HasSubstr("saves about 0.01 ms [0.01, 0.01] of the recorded "
                                         "program's 0.1 ms (about 1.11x its speed)"));
  // The fidelity study finds the program's own saving larger on most
  // programs: the words say the estimate is of the calls alone and so.
  EXPECT_THAT(ProgramWords(t), HasSubstr("An estimate of the calls alone"));
  EXPECT_THAT(ProgramWords(t), HasSubstr("on most programs of the fidelity study smaller than "
                                         "what the program itself saved (docs/fidelity.md)"));
  // No span, several threads, or a span the replay's malloc time exceeds:
  // no estimate, and why.
  m.trace.recorded_seconds = 0;
  EXPECT_THAT(ProgramWords(Summarize(m, Cold())), HasSubstr("does not say how long"));
  m.trace.recorded_seconds = 100e-6;
  m.trace.threads = 3;
  EXPECT_THAT(ProgramWords(Summarize(m, Cold())), HasSubstr("3 threads"));
  m.trace.threads = 1;
  m.trace.recorded_seconds = 10e-6;
  EXPECT_THAT(ProgramWords(Summarize(m, Cold())), HasSubstr("does not model this program"));
}

TEST(SummarizeTest, WithoutContainerArenasOnlyWhatAdoptsUnchangedIsRecommended) {
  // A whole program captured: slab is fastest, but adopting it means
  // rewriting the containers; tcmalloc, by preload, is recommended, and
  // slab's figure is a line of its own.
  PolicyRuns tcmalloc = Runs("tcmalloc", Scaled(kDrift, 1.5));
  tcmalloc.family = allocators::Family::kExternal;
  MeasuredTrace m = Measured(
      {Runs("malloc", Scaled(kDrift, 2)), tcmalloc, Runs("slab/st/single", kDrift)}, PolicyRuns{});
  m.trace.arena_events = 0;
  TraceReport t = Summarize(m, Cold());
  EXPECT_EQ(t.verdict.recommended, "tcmalloc");
  EXPECT_EQ(t.verdict.if_instrumented, "slab/st/single");
  EXPECT_THAT(IfInstrumentedWords(t), HasSubstr("not a recommendation"));
  EXPECT_THAT(IfInstrumentedWords(t), HasSubstr("slab/st/single replayed at 2.00x"));
  EXPECT_THAT(ReportRule(t, Cold()), HasSubstr("among what the program adopts unchanged"));
  // With container arenas, the pool is recommended and no line is added.
  m.trace.arena_events = 2;
  t = Summarize(m, Cold());
  EXPECT_EQ(t.verdict.recommended, "slab/st/single");
  EXPECT_EQ(IfInstrumentedWords(t), "");
}

// A windowed measurement whose whole runs ran out before the slowest
// policy left had one: its windows' peak (small here, as a rebuilt heap's
// can be) is not weighed against the others' whole runs.
TEST(SummarizeTest, PeaksFromWindowsAreNotComparedWithWholeRuns) {
  auto whole = [](PolicyRuns p, int64_t peak) {
    p.whole_runs.push_back(::alloctrace::Run(0, 50, peak));
    return p;
  };
  const PolicyRuns malloc = whole(Runs("malloc", Scaled(kDrift, 2), 9 << 20), 12 << 20);
  const PolicyRuns fast = whole(Runs("fast", Scaled(kDrift, 0.8), 5 << 20), 4 << 20);
  PolicyRuns windowed = Runs("windowed", kDrift, 512 << 10);
  windowed.whole_run_note = "no whole run: the time for them ran out";
  MeasuredTrace m = Measured({malloc, fast, windowed}, PolicyRuns{});
  m.sampling.windowed = true;
  m.sampling.strata = 8;
  m.sampling.per_run = 8;
  TraceReport t = Summarize(m, Cold());
  EXPECT_EQ(t.verdict.fastest, std::vector<std::string>{"fast"});
  EXPECT_EQ(t.verdict.smallest_rss, std::vector<std::string>{"fast"});
  EXPECT_EQ(t.verdict.smallest_rss_bytes.median, 4 << 20);
  EXPECT_EQ(t.verdict.recommended, "fast");
  EXPECT_THAT(SamplingWords(t), HasSubstr("from one whole run of each of 2 of the 3 policies"));
  EXPECT_THAT(SamplingWords(t), HasSubstr("neither the smallest RSS nor recommended"));
  // Every policy left with only its windows' peaks: those are compared
  // (and, speed first, the fastest stays recommended).
  m.policies = {Runs("malloc", Scaled(kDrift, 2), 9 << 20),
                Runs("fast", Scaled(kDrift, 0.8), 5 << 20), Runs("windowed", kDrift, 512 << 10)};
  t = Summarize(m, Cold());
  EXPECT_EQ(t.verdict.smallest_rss, std::vector<std::string>{"windowed"});
  EXPECT_EQ(t.verdict.recommended, "fast");
}

TEST(SummarizeTest, NoMemoryOpsRanksNothing) {
  MeasuredTrace m = Measured({}, PolicyRuns{});
  m.trace.memory_ops = 0;
  const TraceReport t = Summarize(m, Cold());
  EXPECT_TRUE(t.no_memory_ops());
  EXPECT_TRUE(t.verdict.recommended.empty());
}

}  // namespace
}  // namespace alloctrace
