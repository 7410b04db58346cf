// The in-situ verdict (verdict/in_situ_verdict.h: DecideInSitu) on synthetic
// runs, as the reports say it (words.h): the replay's rule, ties paired by
// round, the RSS slack with its floor, and the sentence that says whether
// the replay's pick held. No child processes.
#include "alloctrace/replayer/reports/words.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A machine whose speed drifts by a factor of two between rounds: the
// unpaired CIs of medians are wide, ratios paired by round are not.
const std::vector<double> kDrift = {1.0, 2.0, 1.1, 1.9, 1.2, 1.8, 1.0, 2.0, 1.3, 1.7, 1.1, 1.9};

// A policy's runs, one per round: CPU (and wall) seconds kDrift[i] x
// factor[i % factor.size()], a peak RSS of `rss` bytes.
InSituPolicy Policy(const std::string& name, const std::vector<double>& factor, int64_t rss,
                    bool reference = false) {
  InSituPolicy p;
  p.name = name;
  p.reference = reference;
  for (size_t i = 0; i < kDrift.size(); ++i) {
    InSituRun r;
    r.round = static_cast<int>(i) + 1;
    r.cpu_s = r.wall_s = kDrift[i] * factor[i % factor.size()];
    r.peak_rss_bytes = rss;
    p.runs.push_back(r);
  }
  p.attempts = static_cast<int>(p.runs.size());
  return p;
}

// The figures in_situ.cc's summary sets from the runs (the reference
// first; ratios from the rounds it ran in).
InSituSummary Summary(std::vector<InSituPolicy> policies) {
  InSituSummary s;
  s.argv = {"prog"};
  s.clock = TimingClock::kCpu;
  s.reference = policies[0].name;
  std::map<int, double> ref;
  for (const InSituRun& r : policies[0].runs) ref[r.round] = r.cpu_s;
  for (InSituPolicy& p : policies) {
    std::vector<double> cpu, rss, ratios;
    for (const InSituRun& r : p.runs) {
      cpu.push_back(r.cpu_s);
      rss.push_back(static_cast<double>(r.peak_rss_bytes));
      if (!p.reference && ref.count(r.round)) ratios.push_back(ref.at(r.round) / r.cpu_s);
    }
    p.wall_s = p.cpu_s = p.ranked = MedianWithCi(cpu);
    p.peak_rss_bytes = MedianWithCi(rss);
    if (!p.reference) p.vs_reference = MedianWithCi(ratios);
  }
  s.policies = std::move(policies);
  return s;
}

const InSituPolicy& Find(const InSituSummary& s, const std::string& name) {
  for (const InSituPolicy& p : s.policies) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no policy " << name;
  static const InSituPolicy kNone;
  return kNone;
}

// A mix whose classes are a capture's call sites: each function with the
// type its containers would take, no alias template and no switch.
TEST(WordsTest, CallSiteClassesAreAdoptedByFunctionNotByAlias) {
  PerContainerVerdict v;
  v.heap = "malloc";
  ClassVerdict site;
  site.facts.def = ClassDef{1, "site: PyList_New", 0, /*tagged=*/true};
  site.policy = "slab/st/single";
  site.adopt.cpp_type = "alloctrace::pool::SlabAllocator<T, ...>";
  site.alias = AliasLine(site.facts.def, site.adopt);
  ClassVerdict rest;
  rest.facts.def = ClassDef{0, "", 0, false};
  rest.policy = kHeapPolicy;
  v.classes = {site, rest};
  v.assignment = "site: PyList_New=slab/st/single;*=std";
  EXPECT_THAT(AdoptLines(v), testing::ElementsAre(testing::StartsWith("template <class T> using")));
  EXPECT_EQ(SiteClassesWords(v), "");
  MarkCallSiteClasses(v);
  EXPECT_TRUE(v.from_call_sites);
  EXPECT_TRUE(v.assignment.empty());
  EXPECT_THAT(AdoptLines(v),
              testing::ElementsAre("site: PyList_New: alloctrace::pool::SlabAllocator<T, ...>"));
  EXPECT_THAT(AdoptHeading(v), testing::HasSubstr("per call site"));
  EXPECT_THAT(SiteClassesWords(v), testing::HasSubstr("TraceAllocator"));
}

// std was counted tied with slab in situ (CIs of the medians overlapping)
// though slab was 1.40x [1.17, 1.97] faster, paired by round.
TEST(WordsTest, SizesUnderAKibAreBytesNotZeroKib) {
  EXPECT_EQ(Mib(256), "256B");
  EXPECT_EQ(Mib(0), "0B");
  EXPECT_EQ(Mib(48 * 1024), "48K");
  EXPECT_EQ(Mib(1.5 * 1024 * 1024), "1.5M");
}

TEST(DecideInSituTest, TiesArePairedByRoundAsInTheReplay) {
  InSituSummary s = Summary({Policy("std", {1}, 4 << 20, true),
                             Policy("slab/st/single", {1 / 1.4, 1 / 1.2, 1 / 1.9}, 4 << 20)});
  const InSituPolicy& slab = Find(s, "slab/st/single");
  ASSERT_GT(slab.vs_reference.lo, 1.1);
  ASSERT_TRUE(Overlaps(slab.ranked, Find(s, "std").ranked));  // the old rule's tie
  DecideInSitu(s, "", 0.10);
  EXPECT_THAT(s.fastest, ElementsAre("slab/st/single"));
  EXPECT_FALSE(Find(s, "std").tied_fastest);
  EXPECT_EQ(s.recommended, "slab/st/single");
  EXPECT_THAT(InSituRuleWords(s),
              HasSubstr("paired by round, at most that at the median) are equally fast"));
  EXPECT_THAT(InSituRuleWords(s), Not(HasSubstr("overlapping")));
}

TEST(DecideInSituTest, APairedTieIsATie) {
  // jemalloc a hair faster than slab in half the rounds, slower in the
  // others: tied, their peaks within the slack; of the two, the first in
  // the order (both baselines here: by name).
  InSituSummary s = Summary({Policy("std", {1}, 8 << 20, true),
                             Policy("slab/st/single", {0.5}, (4 << 20) * 21 / 20),
                             Policy("jemalloc", {0.49, 0.51}, 4 << 20)});
  DecideInSitu(s, "slab/st/single", 0.10);
  EXPECT_EQ(s.fastest.size(), 2u);
  EXPECT_EQ(s.recommended, "jemalloc");
  EXPECT_TRUE(s.replay_pick_held);
  EXPECT_THAT(InSituSentence(s), HasSubstr("and jemalloc is first in the fixed order: recommended "
                                           "jemalloc"));
}

// The replay's pick as fast as another in the program, which the fixed
// order puts first: the sentence says so, not that the pick held (it read
// "in situ it is tied with std (...). The pick held; recommended: std").
// Whichever of the two is fastest, or a third.
TEST(DecideInSituTest, APickTiedWithOneTheFixedOrderPrefersIsNotSaidToHold) {
  auto sentence = [](std::vector<InSituPolicy> others) {
    std::vector<InSituPolicy> policies = {Policy("std", {1}, 4 << 20, true)};
    for (InSituPolicy& p : others) {
      p.family = p.name == "jemalloc" ? allocators::Family::kExternal : allocators::Family::kOurs;
      policies.push_back(std::move(p));
    }
    InSituSummary s = Summary(std::move(policies));
    DecideInSitu(s, "slab/st/single", 0.10);
    EXPECT_EQ(s.decision.outcome, InSituDecision::Outcome::kPickTied);
    EXPECT_EQ(s.recommended, "std");
    return InSituSentence(s);
  };
  const std::string reference_fastest = sentence({Policy("slab/st/single", {1.02}, 4 << 20)});
  EXPECT_EQ(reference_fastest,
            "Replay picked slab/st/single; in situ it is tied with the fastest, std (it takes "
            "1.02x [1.02, 1.02] std's CPU time (user + system), within the margin of 5%), and std "
            "is first in the fixed order (the reference: nothing to change): recommended std. The "
            "program cannot tell the pick from std, so the fixed order decides.");
  const std::string pick_fastest = sentence({Policy("slab/st/single", {1 / 1.02}, 4 << 20)});
  EXPECT_THAT(pick_fastest,
              HasSubstr("; in situ it is fastest, 1.02x [1.02, 1.02] the reference std's speed, "
                        "and tied with std (std takes 1.02x [1.02, 1.02] slab/st/single's CPU "
                        "time (user + system), within the margin of 5%), and std is first in the "
                        "fixed order (the reference: nothing to change): recommended std."));
  const std::string third_fastest = sentence(
      {Policy("slab/st/single", {1 / 1.02}, 4 << 20), Policy("jemalloc", {1 / 1.04}, 4 << 20)});
  EXPECT_THAT(third_fastest,
              HasSubstr("; in situ it is tied with the fastest, jemalloc (it takes 1.02x [1.02, "
                        "1.02] jemalloc's CPU time (user + system), within the margin of 5%), as "
                        "is std, and std is first in the fixed order"));
  for (const std::string& s : {reference_fastest, pick_fastest, third_fastest}) {
    EXPECT_THAT(s, Not(HasSubstr("held"))) << s;
  }
}

// 10% slower than std at the median: not tied, however wide its interval
// (it reaches 1 here); the fastest, std, is recommended.
TEST(DecideInSituTest, APickBeyondTheMarginAtTheMedianIsNotTied) {
  InSituPolicy slab = Policy("slab/st/single", {0.9, 1.3, 0.95, 1.25}, 4 << 20);
  slab.family = allocators::Family::kOurs;
  InSituSummary s = Summary({Policy("std", {1}, 4 << 20, true), std::move(slab)});
  DecideInSitu(s, "slab/st/single", 0.10);
  EXPECT_GT(Find(s, "slab/st/single").vs_reference.hi, 1.0);  // the interval reaches 1
  EXPECT_NE(s.decision.outcome, InSituDecision::Outcome::kPickTied);
  EXPECT_EQ(s.recommended, "std");
}

// The RSS slack has the replay's 1 MiB floor: 44 KiB less is not worth a
// 2.9x slowdown.
TEST(DecideInSituTest, AFewKibOfPeakRssAreNotWorthSpeed) {
  InSituSummary s = Summary({Policy("std", {1}, 252 << 10, true),
                             Policy("pool/simple/exp/st/stack/free", {2.9}, 208 << 10)});
  DecideInSitu(s, "", 0.10);
  EXPECT_EQ(s.recommended, "std");
  EXPECT_THAT(InSituRuleWords(s), HasSubstr(RssSlackWords(0.10)));
  EXPECT_THAT(InSituSentence(s), Not(HasSubstr("over the slack")));
}

// tcmalloc 1.35x faster than malloc in situ with 70% more peak RSS: a
// slower policy is never chosen for its memory.
TEST(DecideInSituTest, AFasterPolicyIsNotLeftOutForItsMemory) {
  const int64_t kMib = 1 << 20;
  InSituSummary s = Summary({Policy("malloc", {1}, 45 * kMib / 10, true),
                             Policy("tcmalloc", {1 / 1.35}, 77 * kMib / 10)});
  DecideInSitu(s, "tcmalloc", 0.10);
  EXPECT_THAT(s.fastest, ElementsAre("tcmalloc"));
  EXPECT_EQ(s.recommended, "tcmalloc");
  EXPECT_TRUE(s.replay_pick_held);
  EXPECT_THAT(InSituSentence(s),
              HasSubstr("Replay picked tcmalloc; in situ tcmalloc is fastest, 1.35x ["));
  EXPECT_THAT(InSituSentence(s), HasSubstr("The pick held."));
  EXPECT_THAT(InSituSentence(s), Not(HasSubstr("over the slack")));
  // The replay picked malloc: it did not hold.
  InSituSummary m = Summary({Policy("malloc", {1}, 45 * kMib / 10, true),
                             Policy("tcmalloc", {1 / 1.35}, 77 * kMib / 10)});
  DecideInSitu(m, "malloc", 0.10);
  EXPECT_FALSE(m.replay_pick_held);
  EXPECT_THAT(InSituSentence(m),
              HasSubstr("In situ tcmalloc beats the replay's pick malloc by 35%"));
}

// Equally fast, and the one first in the order holds 2.5x the other's
// peak: memory decides, and the sentence says what it left out.
TEST(DecideInSituTest, AmongTheEquallyFastMemoryDecides) {
  const int64_t kMib = 1 << 20;
  InSituPolicy slab = Policy("slab/st/single", {0.5}, 20 * kMib);
  slab.family = allocators::Family::kOurs;
  InSituPolicy jemalloc = Policy("jemalloc", {0.49, 0.51}, 8 * kMib);
  jemalloc.family = allocators::Family::kExternal;
  InSituSummary s = Summary({Policy("std", {1}, 8 * kMib, true), slab, jemalloc});
  DecideInSitu(s, "slab/st/single", 0.10);
  EXPECT_EQ(s.recommended, "jemalloc");
  EXPECT_FALSE(s.replay_pick_held);
  EXPECT_EQ(s.policies[s.decision.memory_passed_over].name, "slab/st/single");
  EXPECT_THAT(InSituSentence(s),
              HasSubstr("but its peak RSS (20.0M) is over the slack of the smallest"));
  EXPECT_THAT(InSituSentence(s), HasSubstr("The pick held on speed, not on memory."));
  EXPECT_THAT(InSituSentence(s), Not(HasSubstr("-")));  // no negative percentage
  // Without a replay pick, the sentence names what memory left out.
  InSituSummary t = Summary({Policy("std", {1}, 8 * kMib, true), slab, jemalloc});
  DecideInSitu(t, "", 0.10);
  EXPECT_THAT(InSituSentence(t),
              HasSubstr("slab/st/single, as fast and earlier in the fixed order ("));
  EXPECT_THAT(InSituSentence(t), HasSubstr("is left out: its peak RSS (20.0M)"));
}

TEST(DecideInSituTest, ASlowerPickWithinTheSlackIsBeatenByAPositiveMargin) {
  InSituSummary s =
      Summary({Policy("std", {1}, 8 << 20, true), Policy("slab/st/single", {0.5}, 8 << 20),
               Policy("jemalloc", {0.6}, 8 << 20)});
  DecideInSitu(s, "jemalloc", 0.10);
  EXPECT_EQ(s.recommended, "slab/st/single");
  EXPECT_FALSE(s.replay_pick_held);
  EXPECT_THAT(InSituSentence(s),
              HasSubstr("In situ slab/st/single beats the replay's pick jemalloc by "
                        "20% [20, 20]"));
  EXPECT_THAT(InSituSentence(s), HasSubstr("The pick did not hold."));
}

// The replay's never-freeing margin holds in situ too: a keep pool 5%
// faster than slab, round by round, is the fastest but not recommended;
// 30% faster, it is.
TEST(DecideInSituTest, ANeverFreeingPolicyNeedsTheMarginInSituToo) {
  auto decide = [](double keep_factor) {
    InSituPolicy keep = Policy("pool/simple/exp/st/single/keep", {0.5 * keep_factor}, 4 << 20);
    keep.frees_blocks = false;
    InSituSummary s = Summary(
        {Policy("std", {1}, 4 << 20, true), Policy("slab/st/single", {0.5}, 4 << 20), keep});
    DecideInSitu(s, "slab/st/single", 0.10);
    return s;
  };
  const InSituSummary a = decide(0.95);
  EXPECT_THAT(a.fastest, ElementsAre("pool/simple/exp/st/single/keep"));
  EXPECT_EQ(a.recommended, "slab/st/single");
  EXPECT_TRUE(a.replay_pick_held);
  EXPECT_THAT(InSituPassedOverWords(a), HasSubstr("never frees its blocks"));
  EXPECT_THAT(InSituSentence(a),
              HasSubstr("Not recommended: pool/simple/exp/st/single/keep, 1.05x"));
  EXPECT_THAT(InSituSentence(a), HasSubstr("The pick held."));
  EXPECT_THAT(InSituRuleWords(a),
              HasSubstr("10% for a policy that frees against a fastest that never frees"));
  const InSituSummary b = decide(0.7);
  EXPECT_EQ(b.recommended, "pool/simple/exp/st/single/keep");
  EXPECT_TRUE(InSituPassedOverWords(b).empty());
  EXPECT_FALSE(b.replay_pick_held);
}

// Tied in situ and within the RSS slack: the program cannot tell the
// replay's pick from the best, and the fixed order names ours before a
// malloc (it used to go to whichever read a few KiB smaller in this run).
TEST(DecideInSituTest, APickTheProgramCannotTellFromTheBestStands) {
  InSituPolicy jemalloc = Policy("jemalloc", {0.49, 0.51}, (4 << 20) - 8192);
  jemalloc.family = allocators::Family::kExternal;
  InSituPolicy slab = Policy("slab/st/single", {0.5}, 4 << 20);
  slab.family = allocators::Family::kOurs;
  InSituSummary s = Summary({Policy("std", {1}, 8 << 20, true), slab, jemalloc});
  DecideInSitu(s, "slab/st/single", 0.10);
  EXPECT_EQ(s.recommended, "slab/st/single");
  EXPECT_TRUE(s.replay_pick_held);
  EXPECT_THAT(InSituSentence(s), HasSubstr("The pick held."));
  // Without a replay pick: of the two, ours before a malloc.
  InSituSummary t = Summary({Policy("std", {1}, 8 << 20, true), slab, jemalloc});
  DecideInSitu(t, "", 0.10);
  EXPECT_EQ(t.recommended, "slab/st/single");
  // The pick 5% larger, within the slack's 1 MiB: memory changes nothing.
  InSituPolicy big = Policy("slab/st/single", {0.5}, (4 << 20) * 21 / 20);
  big.family = allocators::Family::kOurs;
  InSituSummary u = Summary({Policy("std", {1}, 8 << 20, true), big, jemalloc});
  DecideInSitu(u, "slab/st/single", 0.10);
  EXPECT_EQ(u.recommended, "slab/st/single");
}

// --shipped_build: the section says every run was of a shipped build, how
// many builds and where their output is; nothing without the flag.
TEST(InSituBuildWordsTest, SaysTheBuildsAndWhereTheirOutputIs) {
  InSituSummary s;
  EXPECT_EQ(InSituBuildWords(s), "");
  s.shipped_builds = 3;
  s.shipped_build_seconds = 9.2;
  s.build_log = "/tmp/alloctrace-builds.42.log";
  const std::string words = InSituBuildWords(s);
  EXPECT_THAT(words, HasSubstr("the build a user would ship: 3 builds"));
  EXPECT_THAT(words, HasSubstr("in 9.20 s"));
  EXPECT_THAT(words, HasSubstr("their output: /tmp/alloctrace-builds.42.log"));
  s.shipped_builds = 1;
  EXPECT_THAT(InSituBuildWords(s), HasSubstr("1 build of the program"));
}

// A per-thread replay whose objects cross threads says to confirm in the
// program; not below the share, not on one thread, not once the program
// has decided.
// A trace whose live blocks are large on average (xz's: 55K) says the
// program's time is in the blocks, not the calls; not below the size.
TEST(CautionWordsTest, LargeBlocksAskForTheProgram) {
  TraceReport t;
  t.trace.memory_ops = 292;
  t.trace.peak_live_objects = 159;
  t.trace.peak_live_bytes = 9006227;
  EXPECT_THAT(CautionWords(t), HasSubstr("the live blocks average 55K"));
  EXPECT_THAT(CautionWords(t), HasSubstr("confirm in the program (TRACE -- PROGRAM)"));
  t.trace.peak_live_bytes = 159 * 1024;  // 1K each
  EXPECT_EQ(CautionWords(t), "");
}

// How a multi-threaded trace was replayed, and on one thread why; nothing
// for a trace of one thread.
TEST(PerThreadNoteTest, SaysHowAMultiThreadedTraceWasReplayed) {
  TraceReport t;
  t.trace.threads = 1;
  EXPECT_EQ(PerThreadNote(t), "");
  t.trace.threads = 3;
  t.trace.arena_events = 0;
  EXPECT_THAT(PerThreadNote(t),
              HasSubstr("recorded on 3 threads, replayed on one thread in the recorded order: no "
                        "two threads contend; the trace has no container arenas"));
  t.trace.arena_events = 12;  // --threads=one on a trace with arenas
  EXPECT_THAT(PerThreadNote(t), HasSubstr("; --threads=auto replays it per thread"));
  t.touch = Touch::kWalk;  // one thread whatever --threads says
  t.auto_touch = false;
  EXPECT_THAT(PerThreadNote(t), HasSubstr("; a walk (--touch=walk) replays on one thread"));
  EXPECT_THAT(PerThreadNote(t), Not(HasSubstr("--threads")));
  t.auto_touch = true;  // auto walked it: --threads=each replays it without
  EXPECT_THAT(PerThreadNote(t), HasSubstr("the walk (--touch=auto on this trace) replays on "
                                          "one thread, and --threads=each replays it per "
                                          "thread without it"));
  t.touch = Touch::kProgram;
  t.replay_threads = 3;
  t.sync_points = 7;
  EXPECT_THAT(PerThreadNote(t), HasSubstr("replayed per thread: 3 threads run concurrently, "
                                          "ordered only at 7 sync points"));
}

// A capture of a program that ran a collector over its malloc blocks: the
// note says whether the replay walked them, the caution that the walk is
// only part of the collector.
TEST(CollectorNoteTest, SaysWhetherTheReplayWalkedAndCautions) {
  TraceReport t;
  t.trace.memory_ops = 1000;
  EXPECT_EQ(CollectorNote(t), "");
  EXPECT_EQ(CautionWords(t), "");
  t.trace.collector = "cpython";
  t.touch = Touch::kWalk;
  EXPECT_THAT(CollectorNote(t), HasSubstr("ran CPython's cyclic garbage collector over its "
                                          "malloc blocks"));
  EXPECT_THAT(CollectorNote(t), HasSubstr("the replay makes them (--touch=walk)"));
  EXPECT_THAT(TraceNotes(t), Contains(CollectorNote(t)));
  EXPECT_THAT(CautionWords(t), HasSubstr("the replay's walk models in part"));
  EXPECT_THAT(CautionWords(t), HasSubstr("confirm in the program (TRACE -- PROGRAM)"));
  t.touch = Touch::kProgram;  // each reason named
  t.replay_threads = 3;
  EXPECT_THAT(CollectorNote(t), HasSubstr("a replay per thread (--threads=each) does not"));
  EXPECT_THAT(CautionWords(t), HasSubstr("which this replay does not model"));
  t.replay_threads = 1;
  t.sampling.windowed = true;
  EXPECT_THAT(CollectorNote(t), HasSubstr("sampled windows (--windows=always) does not"));
  t.sampling.windowed = false;
  t.auto_touch = false;
  t.touch = Touch::kFirst;
  EXPECT_THAT(CollectorNote(t), HasSubstr("--touch=first does not (--touch=auto or walk"));
  t.auto_touch = true;
  t.trace.collector = "lua";
  EXPECT_THAT(CollectorNote(t), HasSubstr("ran a garbage collector (lua)"));
  t.trace.memory_ops = 0;
  EXPECT_EQ(CollectorNote(t), "");
}

TEST(CautionWordsTest, HandOffsBetweenThreadsAskForTheProgram) {
  TraceReport t;
  t.replay_threads = 3;
  t.trace.memory_ops = 1000;
  t.cross_thread_frees = 400;
  EXPECT_THAT(CautionWords(t), HasSubstr("40% of the memory ops free an object another thread"));
  EXPECT_THAT(CautionWords(t), HasSubstr("confirm in the program (TRACE -- PROGRAM)"));
  t.cross_thread_frees = 40;  // 4%
  EXPECT_EQ(CautionWords(t), "");
  // Replayed on one thread (a trace without container arenas), the
  // hand-offs are the program's all the same.
  t.cross_thread_frees = 400;
  t.replay_threads = 1;
  EXPECT_THAT(CautionWords(t), HasSubstr("40% of the memory ops free an object another thread"));
  t.replay_threads = 3;
  auto decided = std::make_shared<InSituSummary>();
  decided->recommended = "jemalloc";
  t.in_situ = decided;
  EXPECT_EQ(CautionWords(t), "");
}

}  // namespace
}  // namespace alloctrace

namespace alloctrace {
namespace {

// Each malloc's process cost is named in the trace's notes, in ms and in
// ns over each memory op, with the flag that leaves it out; none for a
// trace whose policies start no library.
TEST(ProcessCostNoteTest, NamesEachMallocsCostOverTheTracesOps) {
  TraceReport t;
  t.trace.memory_ops = 200000;
  PolicyResult pool;
  pool.name = "slab/st/single";
  t.policies.push_back(pool);
  auto has_note = [&] {
    for (const std::string& n : TraceNotes(t)) {
      if (absl::StrContains(n, "starting and ending a process")) return n;
    }
    return std::string();
  };
  EXPECT_EQ(has_note(), "");
  PolicyResult tcmalloc;
  tcmalloc.name = "tcmalloc";
  tcmalloc.process_seconds = 0.016;
  t.policies.push_back(tcmalloc);
  const std::string note = has_note();
  EXPECT_TRUE(absl::StrContains(note, "tcmalloc 16.0 ms (+80.0 ns/op)")) << note;
  EXPECT_TRUE(absl::StrContains(note, "--process_cost=false")) << note;
  EXPECT_FALSE(absl::StrContains(note, "slab")) << note;
}

// Too few rounds: a pick's rounds are counted as pairs with the
// reference's, the reference's own as its runs, whatever its name.
// A report whose reference, glibc malloc, ran `runs` times.
TraceReport WithReference(int runs) {
  TraceReport t;
  PolicyResult reference;
  reference.name = "malloc";
  reference.role = Role::kReference;
  reference.runs = runs;
  t.policies = {reference};
  return t;
}

TEST(ProvisionalWordsTest, CountsThePicksRoundsAndPairsOnlyAgainstTheReference) {
  TraceReport t = WithReference(2);
  PolicyResult pool;
  pool.name = "slab/st/single";
  pool.vs_malloc.n = 1;
  t.policies.push_back(pool);
  t.verdict.recommended = "slab/st/single";
  EXPECT_THAT(ProvisionalWords(t),
              HasSubstr("rest on 1 round paired with glibc malloc's (3 make an interval)"));
  t.verdict.recommended = "malloc";
  EXPECT_THAT(ProvisionalWords(t), HasSubstr("rest on 2 rounds (3 make an interval)"));
  t.verdict.recommended.clear();
  EXPECT_EQ(ProvisionalWords(t), "");
}

// The advice names the flag that gives rounds: the race's --total_budget,
// or each policy's --budget where that decides (--race=false,
// --total_budget=0); --total_budget would then change nothing.
TEST(ProvisionalWordsTest, NamesTheBudgetThatDecides) {
  TraceReport t = WithReference(2);
  t.verdict.recommended = "malloc";
  EXPECT_THAT(ProvisionalWords(t), HasSubstr("--total_budget=SECONDS"));
  t.own_budget = true;
  EXPECT_THAT(ProvisionalWords(t), HasSubstr("--budget=SECONDS"));
  EXPECT_THAT(ProvisionalWords(t), Not(HasSubstr("--total_budget")));
}

// In situ's verdict is provisional by the replay's rule, on the program's
// rounds: --in_situ_budget=5 recommended slab/mt/stack at 1.12x from 2
// rounds paired with std's (the budget spent in round 3 before std's
// turn), and nothing said so.
TEST(ProvisionalWordsTest, InSitusVerdictFollowsTheSameRuleOnTheProgramsRounds) {
  auto decide = [](size_t ref_rounds, size_t rounds, const std::vector<double>& slab_factor) {
    std::vector<InSituPolicy> policies = {Policy("std", {1}, 4 << 20, true),
                                          Policy("slab/mt/stack", slab_factor, 4 << 20)};
    policies[0].runs.resize(ref_rounds);
    policies[1].runs.resize(rounds);
    InSituSummary s = Summary(std::move(policies));
    DecideInSitu(s, "", 0.10);
    return s;
  };
  const InSituSummary two = decide(2, 3, {1 / 1.12});
  ASSERT_EQ(two.recommended, "slab/mt/stack");
  EXPECT_EQ(InSituProvisionalWords(two),
            "the figures rest on 2 rounds paired with the reference std's (3 make an interval): "
            "no difference among these policies is a result yet, and the pick may change on the "
            "next invocation; give the program more time (--in_situ_budget=SECONDS, "
            "--in_situ_runs=N) or fewer policies (--policies=...)");
  // The reference recommended: its own runs.
  const InSituSummary ref = decide(2, 2, {1 / 1.12});
  ASSERT_EQ(ref.recommended, "std");
  EXPECT_THAT(InSituProvisionalWords(ref), HasSubstr("rest on 2 rounds (3 make an interval)"));
  // Twelve steady rounds make an interval narrow enough: not provisional.
  EXPECT_EQ(InSituProvisionalWords(decide(12, 12, {1 / 1.12})), "");
  // Twelve rounds, but a ratio spread wider than +-10%.
  const InSituSummary wide = decide(12, 12, {1 / 1.5, 1 / 1.1, 1 / 1.3, 1 / 1.05});
  ASSERT_EQ(wide.recommended, "slab/mt/stack");
  EXPECT_THAT(InSituProvisionalWords(wide), HasSubstr("is known only within"));
  EXPECT_THAT(InSituProvisionalWords(wide),
              HasSubstr("more time: --in_situ_budget, --in_situ_runs"));

  // After a replay, the report's verdict is the program's, and so are the
  // rounds it rests on: the replay's pick measured over 12 rounds does not
  // make 2 rounds in the program enough, nor its 2 rounds 12 too few.
  TraceReport t;
  PolicyResult pick;
  pick.name = "slab/mt/stack";
  pick.vs_malloc = Estimate{1.2, 1.18, 1.22, 12};
  t.policies = {pick};
  t.verdict.recommended = "slab/mt/stack";
  ApplyInSitu(t, std::make_shared<const InSituSummary>(two));
  EXPECT_EQ(ProvisionalWords(t), InSituProvisionalWords(two));
  EXPECT_EQ(ReplayProvisionalWords(t), "");
  t.policies[0].vs_malloc.n = 2;
  ApplyInSitu(t, std::make_shared<const InSituSummary>(decide(12, 12, {1 / 1.12})));
  EXPECT_EQ(ProvisionalWords(t), "");
  EXPECT_THAT(ReplayProvisionalWords(t),
              HasSubstr("rest on 2 rounds paired with glibc malloc's (3 make an interval)"));
}

}  // namespace
}  // namespace alloctrace
