// --format=table: the report for people, in 80 columns. Each trace opens
// with its verdict block, then one row per policy; with --confirm the
// in-situ section follows, and --in_situ prints that section alone.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/adopt.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {
namespace {

constexpr int kNameWidth = 30;

// "2.31 2.25-2.40" in at most 14 columns: fewer decimals as ratios grow;
// below 0.1 the median alone (the interval is in the other formats).
std::string RatioCell(const Estimate& e) {
  if (!e.has_data()) return "-";
  if (e.n < kMinPairedRounds) return absl::StrFormat("%.2f (n = %d)", e.median, e.n);
  if (e.median < 0.1) return absl::StrFormat("%.4f", e.median);
  if (e.hi >= 100) return absl::StrFormat("%.0f %.0f-%.0f", e.median, e.lo, e.hi);
  if (e.hi >= 10) return absl::StrFormat("%.1f %.1f-%.1f", e.median, e.lo, e.hi);
  return absl::StrFormat("%.2f %.2f-%.2f", e.median, e.lo, e.hi);
}

// ", over 25 rounds": how many paired rounds an interval rests on (below
// kMinPairedRounds, Times says so in its place).
std::string RoundsWords(const Estimate& e) {
  if (e.n < kMinPairedRounds) return "";
  return absl::StrFormat(", over %d rounds", e.n);
}

// The verdict block, as lines of at most 80 columns.
std::string VerdictText(const TraceReport& t, const ReportContext& ctx) {
  const Verdict& v = t.verdict;
  std::string o = absl::StrCat("VERDICT (", PassWords(ctx, t.clock), ")\n");
  auto line = [&o](const std::string& label, const std::string& text) {
    absl::StrAppend(&o, Wrap(absl::StrFormat("  %-14s%s", label, text), 80, 16), "\n");
  };
  if (v.recommended.empty()) {
    line("", ReportSentence(t, ctx));
  } else {
    line("fastest:",
         absl::StrCat(NameList(v.fastest),
                      v.fastest.size() < 2                ? ""
                      : ReplayProvisionalWords(t).empty() ? " (tied)"
                                                          : " (not told apart in so few rounds)",
                      v.fastest_vs_malloc.has_data()
                          ? absl::StrCat("; ", Times(v.fastest_vs_malloc), " glibc malloc's speed",
                                         RoundsWords(v.fastest_vs_malloc))
                          : ""));
    line("smallest RSS:",
         absl::StrCat(NameList(v.smallest_rss), v.smallest_rss.size() > 1 ? " (tied)" : "", ", ",
                      Mib(v.smallest_rss_bytes.median)));
    line("recommended:", RecommendedWords(t));
    if (const std::string d = DisagreementWords(t); !d.empty()) line("disagree:", d);
    if (const std::string p = ProvisionalWords(t); !p.empty()) line("PROVISIONAL:", p);
    if (const std::string c = CautionWords(t); !c.empty()) line("caution:", c);
    if (const std::string w = IncompleteWords(t); !w.empty()) line("INCOMPLETE:", w);
    if (const std::string m = MeasuredInProgramWords(t); !m.empty()) {
      line("program:", m);
    } else {
      line("program:", ProgramWords(t));
    }
    if (const std::string w = IfInstrumentedWords(t); !w.empty()) line("instrumented:", w);
    if (const std::string passed_over = PassedOverWords(t); !passed_over.empty()) {
      line("passed over:", passed_over);
    }
    line("rule:", ReportRule(t, ctx));
  }
  line("measured:", SamplingWords(t));
  line("noise floor:", NoiseWords(t));
  line("disturbed:", DisturbanceWords(t));
  if (t.failed_policies > 0) {
    line("FAILED:", absl::StrCat(t.failed_policies, " polic", t.failed_policies == 1 ? "y" : "ies",
                                 " failed (below); they are not ranked"));
  }
  if (t.over_limit_policies > 0) {
    line("over limit:", OverLimitWords(t));
  }
  if (!v.recommended.empty()) line("Adopt:", AdoptWords(v.adopt));
  return o;
}

// The rows of a trace's policies, then what the rows leave out: failures,
// the race's eliminations and the policies short of the precision.
std::string PolicyRows(const TraceReport& t, const ReportContext& ctx) {
  const bool warm = ctx.warm();
  std::string o = absl::StrFormat("%-*s %7s %6s %6s %-14s %7s %3s\n", kNameWidth, "policy",
                                  warm ? "warm ns" : "cold ns", "+-CI", warm ? "cold" : "warm",
                                  "xmalloc 95% CI", "peakRSS", "n");
  std::vector<std::string> notes, failures, eliminated;
  // Policies the budget left no time for share one reason: one line.
  std::vector<std::string> not_run;
  std::string not_run_reason;
  for (const PolicyResult& p : t.policies) {
    if (!p.ok()) {
      failures.push_back(Wrap(
          absl::StrCat(WordOf(kRunStatusWords, p.status), " ", p.name, ": ", p.failure), 80, 4));
      continue;
    }
    const std::string name =
        p.name.size() > kNameWidth ? p.name.substr(0, kNameWidth - 1) + "~" : p.name;
    const Estimate& other = warm ? p.cold_ns_per_op : p.warm_ns_per_op;
    // (An eliminated policy may have no completed run: no figures.)
    absl::StrAppendFormat(&o, "%-*s %6s%s %5s%s %6s %-14s %6s%s %3d\n", kNameWidth, name,
                          p.ns_per_op.has_data() ? Num(p.ns_per_op.median) : "-",
                          p.tied_fastest ? "*" : " ", Pct(p.ns_per_op),
                          p.eliminated                          ? "x"
                          : p.precise || p.role == Role::kFloor ? " "
                                                                : "!",
                          other.has_data() ? Num(other.median) : "-", RatioCell(p.vs_malloc),
                          p.peak_rss.has_data() ? Mib(p.peak_rss.median) : "-",
                          p.tied_smallest_rss ? "*" : " ", p.runs);
    if (p.eliminated && p.stop == Stop::kNotRun) {
      not_run.push_back(p.name);
      not_run_reason = p.stop_reason.substr(9);
    } else if (p.eliminated) {
      eliminated.push_back(Wrap(absl::StrCat("  ", p.name, ": ", p.stop_reason), 80, 4));
    } else if (!p.precise && p.role != Role::kFloor) {
      notes.push_back(NotPreciseNote(p));
    }
  }
  for (const std::string& f : failures) absl::StrAppend(&o, f, "\n");
  if (!not_run.empty()) {
    eliminated.push_back(Wrap(
        absl::StrCat("  not run (", not_run_reason, "): ", absl::StrJoin(not_run, ", ")), 80, 4));
  }
  if (!eliminated.empty()) {
    absl::StrAppend(&o,
                    "x eliminated by the race (paired ratio to the leader of the time, 95% "
                    "CI; not held to the precision):\n");
    for (const std::string& e : eliminated) absl::StrAppend(&o, e, "\n");
  }
  if (!notes.empty()) {
    absl::StrAppendFormat(&o, "! CI wider than +-%.0f%%:\n", 100 * ctx.precision);
    for (const std::string& n : notes) absl::StrAppend(&o, Wrap("  " + n, 80, 4), "\n");
  }
  return o;
}

// The verdict per container (--per_container): each class's policy and
// why, the whole program, and the lines that adopt the mix.
std::string PerContainerText(const PerContainerVerdict& v) {
  std::string o = "PER CONTAINER (a policy per class of containers)\n";
  auto para = [&o](const std::string& text) {
    absl::StrAppend(&o, Wrap("  " + text, 80, 4), "\n");
  };
  para(MixSentence(v));
  if (!v.why_not.empty()) return o + "\n";
  para(absl::StrCat("searched: ", MixCostWords(v)));
  absl::StrAppendFormat(&o, "  %-30s %6s  %s\n", "class", "share", "policy");
  for (const ClassVerdict& c : v.classes) {
    absl::StrAppendFormat(&o, "  %-30s %5.1f%%  %s\n", ClassLabel(c), 100 * c.facts.share,
                          ClassPolicyWords(v, c));
    absl::StrAppend(&o, Wrap("      " + ClassChoiceWords(c), 80, 6), "\n");
  }
  if (MixIsTheAnswer(v)) {
    absl::StrAppend(&o, Wrap("  " + AdoptHeading(v), 80, 4), "\n");
    for (const std::string& line : AdoptLines(v)) {
      absl::StrAppend(&o, Wrap("    " + line, 80, 8), "\n");
    }
    para(HeapWords(v));
    if (v.from_call_sites) {
      para(SiteClassesWords(v));
    } else {
      para(absl::StrCat("the same in the program, unchanged: ALLOCTRACE_POLICY='", v.assignment,
                        "'", v.heap == "malloc" ? "" : ", the heap's malloc preloaded"));
    }
  } else if (v.from_call_sites) {
    if (!v.mix_is_single) para(SiteClassesWords(v));
  } else if (!v.mix_is_single) {
    para(absl::StrCat("the mix searched (not the answer): ALLOCTRACE_POLICY='", v.assignment, "'",
                      v.heap == "malloc" ? "" : ", the heap's malloc preloaded"));
  }
  return o + "\n";
}

std::string TraceTable(const TraceReport& t, const ReportContext& ctx) {
  std::string o = TraceTitle(t);
  if (!t.trace.cut_short.empty()) absl::StrAppend(&o, "warning: ", t.trace.cut_short, "\n");
  for (const std::string& note : TraceNotes(t)) {
    absl::StrAppend(&o, Wrap("note: " + note, 80, 6), "\n");
  }
  if (t.no_memory_ops()) return absl::StrCat(o, NoOpsLine(t), "\n\n");
  absl::StrAppend(&o, "\n", VerdictText(t, ctx), "\n");
  if (t.per_container != nullptr) absl::StrAppend(&o, PerContainerText(*t.per_container));
  absl::StrAppend(&o, PolicyRows(t, ctx));
  // The contenders' types (every policy's: --format=markdown, csv, json).
  absl::StrAppend(&o, "adopt (T: your container's element type):\n");
  for (const PolicyResult& p : t.policies) {
    if (!p.ok() || p.eliminated || p.screened_out || p.role == Role::kFloor) continue;
    absl::StrAppend(&o, Wrap(absl::StrCat("  ", p.name, ": ", AdoptWords(p.adopt)), 80, 4), "\n");
  }
  return o + "\n";
}

// What the columns mean, and how the runs were made.
std::string Legend(const ReportContext& ctx) {
  std::string o = absl::StrCat(
      Wrap(absl::StrCat(
               "ns: median ns per memory op over the runs (", ClockWords(ctx.clock),
               "); +-CI: half the 95% bootstrap CI of that median; xmalloc: glibc malloc's "
               "ns/op over this one's, median of per-round ratios with its 95% CI (>1 is "
               "faster); peakRSS: peak resident above the run's own trimmed baseline, cold "
               "pass; n: runs. * in the tied group of the best (the 95% CI of its ratio to the "
               "best, paired by round, includes 1 or lies within the noise floor; "
               "bump, which never frees, is not a contender). ! CI not within the target. x "
               "eliminated by the race. "
               "Every run's figures: --format=json or --format=csv-runs."),
           80, 0),
      "\n");
  absl::StrAppend(&o, Wrap("machine: " + ctx.machine, 80, 9), "\n");
  absl::StrAppend(&o,
                  Wrap(absl::StrFormat("%s; %s; %s; touch=%s", ctx.date, PassPlan(ctx),
                                       StopWords(ctx), TouchWord(ctx)),
                       80, 0),
                  "\n");
  return o;
}

// The in-situ runs beside the replay's prediction (`replay` null: --in_situ).
std::string InSituTable(const InSituSummary& s, const TraceReport* replay) {
  std::string o = absl::StrCat("IN SITU: ", absl::StrJoin(s.argv, " "), "\n");
  absl::StrAppend(&o, WrapIndented(InSituSentence(s), 2));
  // (Under a replay, the verdict block above says it.)
  if (const std::string p = InSituProvisionalWords(s); !p.empty() && replay == nullptr) {
    absl::StrAppend(&o, WrapIndented(absl::StrCat("PROVISIONAL: ", p, "."), 2));
  }
  const bool ref_failed = std::any_of(s.policies.begin(), s.policies.end(), [](const auto& p) {
    return p.reference && p.status == RunStatus::kFailed;
  });
  const char* how = ref_failed             ? "its first run failed: instrumentation unknown"
                    : s.shipped_builds > 0 ? "its shipped build"
                    : s.instrumented       ? "instrumented: ALLOCTRACE_POLICY"
                                           : "not instrumented: mallocs only";
  absl::StrAppendFormat(&o, "  reference %s (%s); %d round%s in %.1f s; program output: %s\n",
                        s.reference, how, s.rounds, s.rounds == 1 ? "" : "s", s.wall_seconds,
                        s.log_path);
  if (const std::string built = InSituBuildWords(s); !built.empty()) {
    absl::StrAppend(&o, WrapIndented(absl::StrCat(built, "."), 2));
  }
  absl::StrAppend(
      &o,
      WrapIndented(absl::StrCat("noise floor in the program: ",
                                NoiseFloorWords(s.noise_floor, s.reference, "its second run set"),
                                s.budget_seconds > 0
                                    ? absl::StrFormat("; %d runs of the program (budget %.0f "
                                                      "s or %d runs)",
                                                      s.runs, s.budget_seconds, s.max_total_runs)
                                    : ""),
                   2));
  absl::StrAppendFormat(&o, "%-30s %5s %7s %7s %-17s %-17s %7s %3s\n", "policy", "rplay", "wall s",
                        "cpu s", "95% CI", "x ref [95% CI]", "peakRSS", "n");
  std::vector<std::string> eliminated;
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    const std::string rank = ReplayRank(replay, r != nullptr ? r->name : p.name);
    if (!p.ok()) {
      absl::StrAppendFormat(&o, "%-30s %5s %s %s\n", p.name, rank,
                            WordOf(kRunStatusWords, p.status), p.failure);
      for (const std::string& l : p.stderr_tail) absl::StrAppend(&o, "    stderr: ", l, "\n");
      continue;
    }
    absl::StrAppendFormat(
        &o, "%-30s %5s %7s %7s%s%-17s %-17s %7s %3d%s\n", p.name, rank, Sec(p.wall_s), Sec(p.cpu_s),
        p.tied_fastest ? "*" : " ", Ci(p.ranked, "[%.3f, %.3f]"),
        p.reference ? "(reference)" : Times(p.vs_reference), Mib(p.peak_rss_bytes.median),
        static_cast<int>(p.runs.size()), p.eliminated ? "x" : "");
    if (p.eliminated) {
      eliminated.push_back(Wrap(absl::StrCat("  ", p.name, ": ", p.stop_reason), 80, 4));
    }
  }
  if (!eliminated.empty()) {
    // Its few runs are why its figures may read faster than the pick's:
    // the race compares it with the leader round by round.
    absl::StrAppend(&o,
                    "x eliminated by the race in the program (paired ratio to the leader of the "
                    "time, 95% CI; not held to the precision):\n");
    for (const std::string& e : eliminated) absl::StrAppend(&o, e, "\n");
  }
  absl::StrAppend(
      &o,
      WrapIndented(
          absl::StrCat("rplay: the policy's rank in the replay above; wall s, cpu s (user + "
                       "system): medians over the program's runs; 95% CI: of the ranked one (",
                       WordOf(kTimingClockWords, s.clock),
                       "); x ref: the reference's over this one's, paired by round (>1 faster); "
                       "peakRSS: ru_maxrss",
                       s.shipped_builds > 0 ? " of the shipped build, as you would run it"
                       : s.instrumented
                           ? ", less the resident size when the program made its first "
                             "container (the tracing library and the switch, absent from the "
                             "build you ship, are loaded by then)"
                           : "",
                       "; * tied fastest."),
          2));
  return o;
}

}  // namespace

std::string TableReport(const ReportInput& in) {
  if (in.in_situ_only != nullptr) return InSituTable(*in.in_situ_only, nullptr);
  std::string o;
  for (const TraceReport& t : in.reports) absl::StrAppend(&o, TraceTable(t, in.ctx));
  absl::StrAppend(&o, Legend(in.ctx));
  if (!in.reports.empty() && in.reports[0].in_situ != nullptr) {
    absl::StrAppend(&o, "\n", InSituTable(*in.reports[0].in_situ, &in.reports[0]));
  }
  return o;
}

}  // namespace alloctrace
