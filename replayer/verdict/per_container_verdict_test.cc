#include "alloctrace/replayer/verdict/per_container_verdict.h"

#include <string>
#include <vector>

#include "alloctrace/replayer/verdict/summary.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// A race's contender: one run per round of 1000 ops, a cold pass of
// ns[i] per op of CPU time in round i (glibc malloc, the reference, by
// its name).
PolicyRuns Runs(const std::string& name, const std::vector<double>& ns) {
  PolicyRuns p;
  p.name = name;
  if (name == "malloc") p.role = Role::kReference;
  for (size_t i = 0; i < ns.size(); ++i) {
    RunRecord r;
    r.round = static_cast<int>(i);
    r.result.ops = 1000;
    PassFigures f;
    f.cpu_seconds = f.wall_seconds = ns[i] * 1000 * 1e-9;
    r.result.passes.push_back(f);
    r.result.peak_rss = 1 << 20;
    p.runs.push_back(r);
  }
  p.attempts = static_cast<int>(ns.size());
  return p;
}

// Twelve rounds of a machine whose speed drifts between rounds, scaled
// by `factor` and, where `wobble`, by +-3% of its own in turn (a ratio to
// the unwobbled whose CI holds 1).
std::vector<double> Rounds(double factor, bool wobble = false) {
  const std::vector<double> drift = {10, 12, 8, 11, 9, 12, 8, 10, 11, 9, 12, 8};
  std::vector<double> v;
  for (size_t i = 0; i < drift.size(); ++i) {
    v.push_back(drift[i] * factor * (wobble ? (i % 2 == 0 ? 0.97 : 1.03) : 1.0));
  }
  return v;
}

ReportContext Cold() {
  ReportContext ctx;
  ctx.rank_by = RankBy::kCold;
  ctx.passes = 1;
  ctx.clock = TimingClock::kCpu;
  return ctx;
}

// A race of `runs` summarized as the per-container search does.
TraceReport Race(const std::vector<PolicyRuns>& runs) {
  MeasuredTrace m;
  m.trace.path = "race.trace";
  m.trace.memory_ops = 1000;
  m.trace.arena_events = 2;
  m.policies = runs;
  m.rounds = 12;
  return Summarize(m, Cold());
}

const Ranking kCold = Cold().RankingFor(TimingClock::kCpu);

TEST(DecideReplayClassRaceTest, TiedWithTheFastestTheClassHolds) {
  // The heap reads 3% faster in half the rounds and 3% slower in the
  // others: inside the noise, so the held pool stays.
  const TraceReport r = Race({Runs("malloc", Rounds(1.2)), Runs("slab/st/single", Rounds(1.0)),
                              Runs("heap", Rounds(1.0, /*wobble=*/true))});
  const ReplayClassMove m =
      DecideReplayClassRace(r, {"slab/st/single", "heap"}, "slab/st/single", kCold);
  EXPECT_FALSE(m.moved);
  EXPECT_EQ(m.policy, "slab/st/single");
  EXPECT_FALSE(m.gain.has_data());
  EXPECT_EQ(m.tied_fastest.size(), 2u);
  EXPECT_EQ(m.note,
            "its race did not show a policy faster than slab/st/single (tied with the fastest): "
            "held");
}

TEST(DecideReplayClassRaceTest, ShownFasterTheClassMovesAndSaysByHowMuch) {
  const TraceReport r =
      Race({Runs("malloc", Rounds(1.2)), Runs("heap", Rounds(1.0)),
            Runs("slab/st/single", Rounds(0.8)), Runs("small_node", Rounds(0.9))});
  const ReplayClassMove m =
      DecideReplayClassRace(r, {"heap", "slab/st/single", "small_node"}, "heap", kCold);
  EXPECT_TRUE(m.moved);
  EXPECT_EQ(m.policy, "slab/st/single");
  EXPECT_EQ(m.tied_fastest, std::vector<std::string>{"slab/st/single"});
  EXPECT_NEAR(m.gain.median, 1.25, 1e-9);  // the heap's time over the pool's
  EXPECT_EQ(m.note, "");
}

TEST(DecideReplayClassRaceTest, OnlyTheRaceLabelsCountAndNoFigureHolds) {
  // glibc malloc, the reference, is fastest but not a candidate of the
  // class; the one candidate that ran failed.
  TraceReport r = Race({Runs("malloc", Rounds(0.5)), Runs("heap", Rounds(1.0))});
  const ReplayClassMove other = DecideReplayClassRace(r, {"heap"}, "heap", kCold);
  EXPECT_FALSE(other.moved);
  EXPECT_EQ(other.tied_fastest, std::vector<std::string>{"heap"});
  PolicyRuns failed = Runs("heap", {});
  failed.failed = 1;
  failed.first_error = "run 1: exit status 3";
  r = Race({Runs("malloc", Rounds(1.0)), failed});
  const ReplayClassMove none = DecideReplayClassRace(r, {"heap", "slab"}, "heap", kCold);
  EXPECT_FALSE(none.moved);
  EXPECT_EQ(none.policy, "heap");
  EXPECT_EQ(none.note, "no candidate of its race has a figure: held");
}

TEST(MixShownFasterTest, TheIntervalAboveOneFromEnoughRounds) {
  Estimate e;
  e.median = 1.2;
  e.lo = 1.1;
  e.hi = 1.3;
  e.n = kMinPairedRounds;
  EXPECT_TRUE(MixShownFaster(false, e));
  EXPECT_FALSE(MixShownFaster(true, e));  // no mix apart from the single choice
  e.n = kMinPairedRounds - 1;
  EXPECT_FALSE(MixShownFaster(false, e));
  e.n = 12;
  e.lo = 1.0;  // touches 1: not shown
  EXPECT_FALSE(MixShownFaster(false, e));
  EXPECT_FALSE(MixShownFaster(false, Estimate()));
}

TEST(ReadFinalRaceTest, TheMixAgainstTheSingleChoiceAndStdPaired) {
  const TraceReport r = Race({Runs("malloc", Rounds(1.0)), Runs(kMixLabel, Rounds(0.5)),
                              Runs(kBestSingleLabel, Rounds(0.625)), Runs(kStdLabel, Rounds(1.0))});
  PerContainerVerdict v;
  ReadFinalRace(r, kCold, /*single_is_std=*/false, v);
  EXPECT_EQ(v.final_rounds, 12);
  EXPECT_NEAR(v.mix_vs_single.median, 1.25, 1e-9);
  EXPECT_NEAR(v.mix_vs_std.median, 2.0, 1e-9);
  EXPECT_NEAR(v.mix_vs_malloc.median, 2.0, 1e-9);
  EXPECT_NEAR(v.single_vs_malloc.median, 1.6, 1e-9);
  EXPECT_NEAR(v.std_vs_malloc.median, 1.0, 1e-9);
  EXPECT_TRUE(v.mix_faster);

  // Within the noise of the single choice: the mix is not the answer.
  const TraceReport tie = Race({Runs("malloc", Rounds(1.0)), Runs(kMixLabel, Rounds(0.6, true)),
                                Runs(kBestSingleLabel, Rounds(0.6))});
  PerContainerVerdict t;
  ReadFinalRace(tie, kCold, /*single_is_std=*/true, t);
  EXPECT_LE(t.mix_vs_single.lo, 1);
  EXPECT_FALSE(t.mix_faster);
  // The single choice is std: std's figures are the single's.
  EXPECT_NEAR(t.std_vs_malloc.median, t.single_vs_malloc.median, 1e-9);
  EXPECT_NEAR(t.mix_vs_std.median, t.mix_vs_single.median, 1e-9);
}

TEST(ReadFinalRaceTest, NoClassMovedIsTheSingleChoiceAlone) {
  const TraceReport r = Race({Runs("malloc", Rounds(1.0)), Runs(kBestSingleLabel, Rounds(0.5)),
                              Runs(kStdLabel, Rounds(1.0))});
  PerContainerVerdict v;
  v.mix_is_single = true;
  ReadFinalRace(r, kCold, false, v);
  EXPECT_FALSE(v.mix_vs_single.has_data());
  EXPECT_NEAR(v.mix_vs_malloc.median, 2.0, 1e-9);
  EXPECT_NEAR(v.mix_vs_std.median, 2.0, 1e-9);
  EXPECT_FALSE(v.mix_faster);
}

TEST(AliasTest, ATagIsNamedByItsLastName) {
  const ClassDef tag{1, "app::book::OrderIndex", 48, true};
  EXPECT_EQ(AliasName(tag), "OrderIndexAlloc");
  allocators::Adoption adopt;
  adopt.cpp_type = "alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded>";
  EXPECT_EQ(AliasLine(tag, adopt),
            "template <class T> using OrderIndexAlloc = "
            "alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded>;");
  EXPECT_EQ(AliasLine(tag, allocators::Adoption()),
            "template <class T> using OrderIndexAlloc = std::allocator<T>;");
}

TEST(AliasTest, AValueTypeIsNamedByItsWords) {
  EXPECT_EQ(AliasName(ClassDef{2, "std::pair<const long, Msg>", 16, false}),
            "pair_const_long_MsgAlloc");
  EXPECT_EQ(AliasName(ClassDef{3, "int", 4, false}), "intAlloc");
  EXPECT_EQ(AliasName(ClassDef{4, "", 4, false}), "Class4Alloc");
  EXPECT_EQ(AliasName(ClassDef{5, "(anonymous namespace)::Key", 4, false}),
            "anonymous_namespace_KeyAlloc");
  EXPECT_EQ(AliasName(ClassDef{6,
                               "std::__cxx11::basic_string<char, std::char_traits<char>, "
                               "alloctrace::TraceAllocator<char, void, char> >",
                               32, false}),
            "basic_string_char_char_traits_char_alloctrace_TraceAllocator_char_void_charAlloc");
  EXPECT_EQ(AliasName(ClassDef{7, "_Node<__int128>", 16, false}), "Node_int128Alloc");
}

}  // namespace
}  // namespace alloctrace
