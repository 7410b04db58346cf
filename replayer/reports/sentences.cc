// The verdicts in sentences (words.h): the replay's, in situ's (from its
// InSituDecision), the report's when in situ decided, and who decided.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/choice.h"

namespace alloctrace {
std::string ReplaySentence(const TraceReport& t, const ReportContext& ctx) {
  const Verdict& v = t.verdict;
  const std::string rec_name = v.replay_recommended.empty() ? v.recommended : v.replay_recommended;
  const PolicyResult* rec = FindPolicy(t, rec_name);
  if (rec_name.empty() || rec == nullptr) {
    return "No policy completed its runs: nothing can be ranked.";
  }
  const std::string speed_words =
      v.fastest.size() == 1 ? absl::StrCat(v.fastest[0], " is the fastest")
                            : absl::StrCat(NameList(v.fastest), " are tied for the fastest");
  const std::string vs =
      v.fastest_vs_malloc.has_data()
          ? absl::StrFormat(" (%.2fx glibc malloc's speed, 95%% CI %.2f to %.2f)",
                            v.fastest_vs_malloc.median, v.fastest_vs_malloc.lo,
                            v.fastest_vs_malloc.hi)
          : "";
  const std::string rec_vs =
      rec->vs_malloc.has_data() && rec->role != Role::kReference
          ? absl::StrFormat(", %.2fx glibc malloc's speed (95%% CI %.2f to %.2f)",
                            rec->vs_malloc.median, rec->vs_malloc.lo, rec->vs_malloc.hi)
          : "";
  const std::string passed_over = PassedOverWords(t);
  return absl::StrCat("On ", t.trace.path, " (", ctx.warm() ? "warm passes" : "the cold pass", ", ",
                      ClockWords(t.clock), "), ", speed_words, vs, "; the smallest peak RSS is ",
                      NameList(v.smallest_rss), "'s (", Mib(v.smallest_rss_bytes.median),
                      "). Recommended: ", rec->name, rec_vs, ", ", Mib(rec->peak_rss.median),
                      " peak RSS, ", ChoiceWords(v),
                      passed_over.empty() ? "" : absl::StrCat(" (", passed_over, ")"),
                      "; the rule: ", ReplayRuleWords(ctx), ".");
}

std::string InSituPassedOverWords(const InSituSummary& s) {
  const InSituDecision& d = s.decision;
  if (d.passed_over == InSituDecision::kNone) return "";
  return NeverFreesWords(s.policies[d.passed_over].name, s.policies[d.recommended].name,
                         d.passed_over_edge);
}

namespace {

// The pieces of in situ's sentence, from its decision.
class InSituWords {
 public:
  explicit InSituWords(const InSituSummary& s)
      : s_(s), d_(s.decision), rec_(s.policies[d_.recommended]), first_(s.policies[d_.fastest]) {}

  std::string Sentence() const {
    using Outcome = InSituDecision::Outcome;
    switch (d_.outcome) {
      case Outcome::kNothingRan:
        break;
      case Outcome::kRecommended:
        return absl::StrCat("In situ, ", rec_.name, " is recommended: ", Speed(rec_), ", ",
                            Mib(rec_.peak_rss_bytes.median), " peak RSS.", Aside());
      case Outcome::kPickNotRun:
        return absl::StrCat(
            "The replay picked ", s_.replay_pick, ", which did not run in situ (",
            d_.pick == InSituDecision::kNone ? "not a candidate" : s_.policies[d_.pick].failure,
            "); in situ ", rec_.name, " is recommended, ", Speed(rec_), ".", Aside());
      case Outcome::kPickIsBest:
        return PickIsBest();
      case Outcome::kPickTied:
        return PickTied();
      case Outcome::kPickOverSlack:
        return absl::StrCat("Replay picked ", Pick().name, "; in situ ", Pick().name, " ",
                            Standing(Pick()), ", but its ", OverSlack(Pick()), ": ", rec_.name,
                            " is recommended, ", Speed(rec_), ", ", Mib(rec_.peak_rss_bytes.median),
                            " peak RSS. ",
                            Pick().tied_fastest ? "The pick held on speed, not on memory."
                                                : "The pick did not hold.",
                            Aside());
      case Outcome::kPickSlower:
        return PickSlower();
    }
    return absl::StrCat("In situ, no policy completed its runs of ",
                        s_.argv.empty() ? "the program" : s_.argv[0],
                        ": nothing can be ranked (see the FAILED rows and ", s_.log_path, ").");
  }

 private:
  const InSituPolicy& Pick() const { return s_.policies[d_.pick]; }

  std::string Speed(const InSituPolicy& p) const {
    return p.reference
               ? std::string("the reference")
               : absl::StrCat(Times(p.vs_reference), " the reference ", s_.reference, "'s speed");
  }

  // What the speed alone says of the pick: fastest, tied with the fastest,
  // or slower.
  std::string Standing(const InSituPolicy& p) const {
    if (&p == &first_) return absl::StrCat("is fastest, ", Speed(p));
    if (p.tied_fastest) {
      return absl::StrCat("is tied with the fastest, ", first_.name, ", ", Speed(p));
    }
    return absl::StrCat("is slower than the fastest, ", first_.name, " (",
                        Times(d_.pick_vs_fastest), " its ", ProgramTimeWords(s_.clock), "), ",
                        Speed(p));
  }

  std::string OverSlack(const InSituPolicy& p) const {
    const InSituPolicy& smallest = s_.policies[d_.smallest];
    return absl::StrCat("peak RSS (", Mib(p.peak_rss_bytes.median),
                        ") is over the slack of the smallest (", smallest.name, "'s ",
                        Mib(smallest.peak_rss_bytes.median), ")");
  }

  // What else the rule left out: the fastest, for its memory, and a faster
  // policy that never frees.
  std::string Aside() const {
    std::string aside =
        d_.memory_passed_over != InSituDecision::kNone
            ? absl::StrCat(" ", s_.policies[d_.memory_passed_over].name,
                           ", as fast and earlier in the fixed order (",
                           Speed(s_.policies[d_.memory_passed_over]), "), is left out: its ",
                           OverSlack(s_.policies[d_.memory_passed_over]), ".")
            : "";
    const std::string passed_over = InSituPassedOverWords(s_);
    if (!passed_over.empty()) absl::StrAppend(&aside, " Not recommended: ", passed_over, ".");
    return aside;
  }

  // "(it takes 1.01x [0.96, 1.05] std's CPU time (user + system), within
  // the margin of 5%)": `e`, the time of `p` (`who` in words) over the
  // fastest's, paired, which the choice counts as fast as the fastest, and
  // why (choice.h, step 2): too few paired rounds to read it, or its
  // median within the margin (against a fastest that never frees,
  // kNeverFreesMargin's if larger, for one that frees).
  std::string WithinMargin(const std::string& who, const InSituPolicy& p, const Estimate& e) const {
    const double margin =
        !first_.frees_blocks && p.frees_blocks ? std::max(d_.margin, kNeverFreesMargin) : d_.margin;
    const std::string why = e.n < kMinPairedRounds
                                ? ": too few rounds to show it slower"
                                : absl::StrFormat(", within the margin of %.0f%%", 100 * margin);
    return absl::StrCat("(", who, " takes ", Times(e), " ", first_.name, "'s ",
                        ProgramTimeWords(s_.clock), why, ")");
  }

  // The pick is the recommendation: the fastest, or as fast as the fastest
  // and first in the fixed order (or, where memory left the one before it
  // out, first of what it kept: Aside says so).
  std::string PickIsBest() const {
    const InSituPolicy& pick = Pick();
    const std::string standing =
        &pick == &first_
            ? absl::StrCat("is fastest, ", Speed(pick))
            : absl::StrCat("is as fast as the fastest, ", first_.name, " ",
                           WithinMargin("it", pick, d_.pick_vs_fastest), ", ", Speed(pick),
                           d_.memory_passed_over == InSituDecision::kNone
                               ? ", and first in the fixed order"
                               : "");
    return absl::StrCat("Replay picked ", pick.name, "; in situ ", pick.name, " ", standing,
                        ": recommended ", pick.name, ".", Aside(), " The pick held.");
  }

  // The pick and the recommended policy are as fast as the fastest (one of
  // them may be it), and both within the RSS slack: the fixed order, not
  // speed or memory, puts the recommended one first. The pick is not
  // shown slower, nor is it the recommendation.
  std::string PickTied() const {
    const InSituPolicy& pick = Pick();
    std::string tie;
    if (&rec_ == &first_) {
      tie = absl::StrCat("it is tied with the fastest, ", rec_.name, " ",
                         WithinMargin("it", pick, s_.pick_vs_best), ", and ", rec_.name);
    } else if (&pick == &first_) {
      tie = absl::StrCat("it is fastest, ", Speed(pick), ", and tied with ", rec_.name, " ",
                         WithinMargin(rec_.name, rec_, PairedSlowdown(pick, rec_, s_.clock)),
                         ", and ", rec_.name);
    } else {
      tie = absl::StrCat("it is tied with the fastest, ", first_.name, " ",
                         WithinMargin("it", pick, d_.pick_vs_fastest), ", as is ", rec_.name,
                         ", and ", rec_.name);
    }
    return absl::StrCat(
        "Replay picked ", pick.name, "; in situ ", tie, " is first in the fixed order",
        rec_.reference
            ? absl::StrCat(" (the reference: nothing to change): recommended ", rec_.name)
            : absl::StrCat(": recommended ", rec_.name, ", ", Speed(rec_)),
        ". The program cannot tell the pick from ", rec_.name, ", so the fixed order decides.",
        Aside());
  }

  // Slower than the recommended policy, or than the fastest if the
  // recommended one (picked for its memory from the tied group) is not
  // faster than the pick.
  std::string PickSlower() const {
    const InSituPolicy& winner = s_.policies[d_.winner];
    const Estimate& e = d_.pick_vs_winner;
    const std::string recommended =
        &winner == &rec_ ? absl::StrCat(rec_.name, ": ", Speed(rec_))
                         : absl::StrCat("recommended: ", rec_.name, ", tied with ", winner.name,
                                        rec_.peak_rss_bytes.median < winner.peak_rss_bytes.median
                                            ? " and of smaller peak RSS, "
                                            : " and preferred by the rule, ",
                                        Speed(rec_));
    if (e.has_data() && e.median > 1) {
      return absl::StrCat("In situ ", winner.name, " beats the replay's pick ", Pick().name,
                          absl::StrFormat(" by %.0f%% [%.0f, %.0f]", 100 * (e.median - 1),
                                          100 * (e.lo - 1), 100 * (e.hi - 1)),
                          " (", ProgramTimeWords(s_.clock), " of the program); ", recommended,
                          ". The pick did not hold.", Aside());
    }
    return absl::StrCat("Replay picked ", Pick().name, "; in situ ", Pick().name,
                        " is not tied with ", winner.name, " (", Times(e), " its ",
                        ProgramTimeWords(s_.clock), "); ", recommended, ". The pick did not hold.",
                        Aside());
  }

  const InSituSummary& s_;
  const InSituDecision& d_;
  const InSituPolicy& rec_;
  const InSituPolicy& first_;
};

}  // namespace

std::string InSituSentence(const InSituSummary& s) {
  if (s.decision.outcome == InSituDecision::Outcome::kNothingRan) {
    return absl::StrCat("In situ, no policy completed its runs of ",
                        s.argv.empty() ? "the program" : s.argv[0],
                        ": nothing can be ranked (see the FAILED rows and ", s.log_path, ").");
  }
  return InSituWords(s).Sentence();
}

std::string ReportSentence(const TraceReport& t, const ReportContext& ctx) {
  if (t.in_situ == nullptr || t.in_situ->recommended.empty()) return ReplaySentence(t, ctx);
  return absl::StrCat(InSituSentence(*t.in_situ), " (The replay alone: ", ReplaySentence(t, ctx),
                      ")");
}

std::string ReportRule(const TraceReport& t, const ReportContext& ctx) {
  if (t.in_situ != nullptr && !t.in_situ->recommended.empty()) {
    return InSituRuleWords(*t.in_situ);
  }
  if (t.trace.arena_events == 0 && !t.no_memory_ops()) {
    return absl::StrCat(
        "no container arenas here (a whole program, or only the global heap), so among what the "
        "program adopts unchanged, glibc malloc and the mallocs by preload or link: ",
        ReplayRuleWords(ctx));
  }
  return ReplayRuleWords(ctx);
}

namespace {

// "1st", "2nd", "3rd", "11th".
std::string Ordinal(int n) {
  const int tens = n % 100, units = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : units == 1               ? "st"
                       : units == 2               ? "nd"
                       : units == 3               ? "rd"
                                                  : "th";
  return absl::StrCat(n, suffix);
}

// The replay's rank of in situ's `name` among its policies with figures
// (malloc and new are the reference), and how many there are; 0 if none.
std::pair<int, int> RankInReplay(const TraceReport& t, const std::string& name,
                                 const std::string& reference) {
  int rank = 0, all = 0;
  for (const PolicyResult& p : t.policies) {
    if (!p.ok() || !p.ns_per_op.has_data() || p.role == Role::kFloor) continue;
    ++all;
    if (rank == 0 && InSituNameOf(p.name, reference) == name) rank = all;
  }
  return {rank, all};
}

}  // namespace

std::string RecommendedWords(const TraceReport& t) {
  const Verdict& v = t.verdict;
  if (t.in_situ == nullptr || t.in_situ->recommended.empty()) {
    return absl::StrCat(v.recommended, ": ", ChoiceWords(v));
  }
  const InSituSummary& s = *t.in_situ;
  const InSituDecision& d = s.decision;
  const InSituPolicy& rec = s.policies[d.recommended];
  const bool fastest = d.fastest == d.recommended;
  const std::string choice = ChoiceWords(
      fastest ? "" : s.policies[d.fastest].name,
      fastest ? Estimate() : PairedSlowdown(s.policies[d.fastest], rec, s.clock),
      d.equivalent.size(), d.margin,
      d.memory_passed_over == InSituDecision::kNone ? "" : s.policies[d.memory_passed_over].name);
  const auto [rank, all] = RankInReplay(t, rec.name, s.reference);
  const std::string replay =
      rank == 0 ? "the replay did not rank it"
                : absl::StrCat("the replay ranked it ", Ordinal(rank), " of ", all);
  const std::string replay_pick = InSituNameOf(v.replay_recommended, s.reference);
  return absl::StrCat(
      v.recommended, ": decided in the program",
      s.shipped_builds > 0 ? " (its shipped builds)" : "", ", ", choice, "; ", replay,
      replay_pick == rec.name ? " and picked it too"
                              : absl::StrCat(" (its own pick: ", v.replay_recommended, ")"));
}

std::string DisagreementWords(const TraceReport& t) {
  if (t.in_situ == nullptr) return "";
  const InSituSummary& s = *t.in_situ;
  const InSituDecision& d = s.decision;
  if (d.outcome != InSituDecision::Outcome::kPickSlower || d.pick == InSituDecision::kNone) {
    return "";
  }
  const InSituPolicy& pick = s.policies[d.pick];
  const InSituPolicy& winner = s.policies[d.winner];
  const PolicyResult* replay_pick = ReplayResult(&t, pick.name, s.reference);
  const PolicyResult* replay_winner = ReplayResult(&t, winner.name, s.reference);
  auto speed = [](const PolicyResult* p) {
    if (p == nullptr) return std::string("(no figure)");
    if (p->role == Role::kReference) return std::string("1x");
    return absl::StrFormat("%.2fx", p->vs_malloc.median);
  };
  return absl::StrCat("the replay read ", pick.name, " at ", speed(replay_pick),
                      " glibc malloc's speed and ", winner.name, " at ", speed(replay_winner),
                      "; in the program ", pick.name, " takes ", Times(d.pick_vs_winner), " ",
                      winner.name, "'s ", ProgramTimeWords(s.clock),
                      ": the program decides (docs/fidelity.md says where the replay misjudges)");
}

std::string CautionWords(const TraceReport& t) {
  if (t.no_memory_ops() || (t.in_situ != nullptr && !t.in_situ->recommended.empty())) return "";
  std::vector<std::string> why;
  const double share =
      static_cast<double>(t.cross_thread_frees) / static_cast<double>(t.trace.memory_ops);
  if (share >= kHandOffShare) {  // counted however the trace was replayed
    why.push_back(absl::StrFormat(
        "%.0f%% of the memory ops free an object another thread allocated: a program that hands "
        "objects between threads ranks the mallocs differently when its threads run at once and "
        "when they take turns on a loaded machine, and the replay can miss either",
        100 * share));
  }
  const TraceFacts& f = t.trace;
  if (f.peak_live_objects > 0 && f.peak_live_bytes >= kLargeBlockBytes * f.peak_live_objects) {
    why.push_back(absl::StrCat(
        "the live blocks average ",
        Mib(static_cast<double>(f.peak_live_bytes) / static_cast<double>(f.peak_live_objects)),
        ": such a program's time goes to filling and copying large blocks (page faults, memory "
        "bandwidth), which the trace does not hold, and the replay, timing the calls, can "
        "misjudge it"));
  }
  if (!f.collector.empty()) {
    why.push_back(t.walked() ? "the program's garbage collector reads its live objects, which the "
                               "replay's walk models in part (on python3 it made a third to half "
                               "of what the collector costs), so mallocs the replay reads close "
                               "may be further apart in the program"
                             : "the program's garbage collector reads its live objects, which this "
                               "replay does not model (its note says why), and where a malloc "
                               "puts them can rank the mallocs otherwise in the program");
  }
  if (why.empty()) return "";
  return absl::StrCat(absl::StrJoin(why, "; "),
                      " (docs/fidelity.md); confirm in the program (TRACE -- PROGRAM)");
}

std::string InSituBuildWords(const InSituSummary& s) {
  if (s.shipped_builds == 0) return "";
  return absl::StrCat(
      "every candidate ran as the build a user would ship: ", s.shipped_builds, " build",
      s.shipped_builds == 1 ? "" : "s",
      " of the program with its alias lines pasted (--shipped_build) in ",
      Num(s.shipped_build_seconds),
      " s, a malloc preloaded into the std::allocator build; their output: ", s.build_log);
}

std::string MeasuredInProgramWords(const TraceReport& t) {
  if (t.in_situ == nullptr || t.in_situ->recommended.empty()) return "";
  const InSituSummary& s = *t.in_situ;
  const InSituPolicy& rec = s.policies[s.decision.recommended];
  if (rec.reference) {
    return absl::StrCat(rec.name, " is the reference: nothing to change (", s.runs,
                        " runs of the program in ", Num(s.wall_seconds), " s)");
  }
  return absl::StrCat(rec.name, " runs the program at ", Times(rec.vs_reference), " the reference ",
                      s.reference, "'s speed (", ProgramTimeWords(s.clock), ", ",
                      rec.vs_reference.n, " paired runs; ", s.runs, " runs of the program in ",
                      Num(s.wall_seconds), " s)");
}

namespace {

// The choice's rule (verdict/choice.h) after "the fastest by ...".
std::string ChoiceRuleWords(double rss_slack) {
  return absl::StrCat(
      ", measured over ", kMinPairedRounds,
      " rounds or more, and every policy not slower than it by more than the margin of "
      "practical equivalence (",
      static_cast<int>(std::lround(100 * kEquivalenceMargin)),
      "%, or the noise floor's offset if that is larger; ",
      static_cast<int>(std::lround(100 * kNeverFreesMargin)),
      "% for a policy that frees against a fastest that never frees: its time over the "
      "fastest's, paired by round, at most that at the median) are equally fast; if one of them "
      "frees its blocks, those that never free leave",
      rss_slack >= 0
          ? absl::StrCat("; of them, those whose median peak RSS is ", RssSlackWords(rss_slack),
                         " of them (memory decides only "
                         "among the equally fast)")
          : " (memory not weighed: --speed_only)",
      "; of those, the first in a fixed order, the same every time: the reference (nothing to "
      "change), our pools, the external mallocs, the baselines, the article's grid, then by name");
}

}  // namespace

std::string ReplayRuleWords(const ReportContext& ctx) {
  return absl::StrCat(
      "the fastest contender by its speed paired with glibc malloc's (not eliminated by the "
      "race, not screened out)",
      ChoiceRuleWords(ctx.rss_slack));
}

std::string InSituRuleWords(const InSituSummary& s) {
  return absl::StrCat("in the program: the fastest policy by its ", ProgramTimeWords(s.clock),
                      " of the program, paired with the reference's", ChoiceRuleWords(s.rss_slack));
}

std::string ChoiceWords(const std::string& faster, const Estimate& pick_vs_faster,
                        size_t equivalent, double margin, const std::string& memory_passed_over,
                        bool freeing_only) {
  const std::string among =
      equivalent > 1 ? absl::StrFormat(" of the %d equally fast (within %.0f%%)%s", equivalent,
                                       100 * margin, freeing_only ? " that free their blocks" : "")
                     : "";
  std::string o =
      faster.empty()
          ? absl::StrCat(
                "the fastest",
                among.empty() ? "" : absl::StrCat(", and first", among, " in the fixed order"))
          : absl::StrCat("as fast as the fastest, ", faster, ", within the margin (its time ",
                         Times(pick_vs_faster), " ", faster, "'s), and first", among,
                         " in the fixed order");
  if (!memory_passed_over.empty()) {
    absl::StrAppend(&o, "; ", memory_passed_over,
                    ", as fast and earlier in the order, is left out for its peak RSS");
  }
  return o;
}

std::string ChoiceWords(const Verdict& v) {
  return ChoiceWords(v.faster, v.pick_vs_faster, v.equivalent.size(), v.equivalence_margin,
                     v.memory_passed_over, !v.passed_over_name.empty());
}

}  // namespace alloctrace
