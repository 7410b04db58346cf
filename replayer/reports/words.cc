#include "alloctrace/replayer/reports/words.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/replayer/verdict/choice.h"

namespace alloctrace {

std::string Mib(double bytes) {
  if (std::fabs(bytes) < 1024) return absl::StrFormat("%.0fB", bytes);  // not "0K"
  if (std::fabs(bytes) < 1024 * 1024) return absl::StrFormat("%.0fK", bytes / 1024);
  return absl::StrFormat("%.1fM", bytes / (1024.0 * 1024.0));
}

std::string Num(double v) {
  if (std::fabs(v) >= 100) return absl::StrFormat("%.0f", v);
  if (std::fabs(v) >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

std::string Pct(const Estimate& e) {
  if (e.has_data() && e.n < kMinPairedRounds) return "n<3";
  const double h = e.HalfWidth();
  if (!std::isfinite(h)) return "-";
  return absl::StrFormat("%.1f%%", 100 * h);
}

std::string Times(const Estimate& e) {
  if (!e.has_data()) return "-";
  if (e.n < kMinPairedRounds) {
    return absl::StrFormat("%.2fx (n = %d: not measured enough for an interval)", e.median, e.n);
  }
  return absl::StrFormat("%.2fx [%.2f, %.2f]", e.median, e.lo, e.hi);
}

std::string NameList(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  if (names.size() == 1) return names[0];
  return absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "), " and ", names.back());
}

std::string Wrap(const std::string& line, size_t width, size_t indent) {
  std::string out, current;
  size_t start = 0;
  while (start < line.size()) {
    size_t next = line.find(' ', start);
    next = next == std::string::npos ? line.size() : next + 1;
    const std::string piece = line.substr(start, next - start);
    const size_t piece_len = piece.size() - (piece.back() == ' ' ? 1 : 0);
    if (!current.empty() && current.size() + piece_len > width &&
        current.find_first_not_of(' ') != std::string::npos) {
      out += current.substr(0, current.find_last_not_of(' ') + 1) + "\n";
      current = std::string(indent, ' ');
    }
    current += piece;
    start = next;
  }
  return out + current;
}

std::string WrapIndented(const std::string& text, size_t indent) {
  std::string out, line(indent, ' ');
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line.size() > indent && line.size() + 1 + word.size() > 80) {
      absl::StrAppend(&out, line, "\n");
      line.assign(indent, ' ');
    }
    absl::StrAppend(&line, line.size() > indent ? " " : "", word);
  }
  return absl::StrCat(out, line, "\n");
}

std::string TouchWord(const ReportContext& ctx) {
  return ctx.auto_touch ? "auto" : WordOf(kTouchWords, ctx.touch);
}

std::string TouchWord(const TraceReport& t) { return WordOf(kTouchWords, t.touch); }

std::string ClockWords(TimingClock clock) {
  switch (clock) {
    case TimingClock::kAuto:
      return "thread CPU time on one-thread replays and on per-thread replays with more threads "
             "than cores, wall-clock time of the concurrent section on the other per-thread "
             "replays";
    case TimingClock::kWall:
      return "wall-clock time";
    case TimingClock::kCpu:
      break;
  }
  return "thread CPU time";
}

std::string ProgramTimeWords(TimingClock clock) {
  return clock == TimingClock::kWall ? "wall time" : "CPU time (user + system)";
}

std::string PassPlan(const ReportContext& ctx) {
  if (ctx.passes <= 1) return "one cold pass per run";
  return absl::StrFormat(
      "per run a cold pass, then warm passes adding up to %g ms or more (at least one, at most "
      "%d passes in all)",
      ctx.warm_ms, ctx.passes);
}

std::string StopWords(const ReportContext& ctx) {
  const std::string budget = ctx.own_budget
                                 ? absl::StrFormat("%.0f s per policy", ctx.budget_seconds)
                                 : std::string("the total budget is spent");
  return absl::StrFormat("runs until +-%.0f%% or %s, at least %d", 100 * ctx.precision, budget,
                         ctx.min_runs);
}

std::string PassWords(const ReportContext& ctx, TimingClock clock) {
  return absl::StrCat(ctx.warm() ? "ranked by the warm passes" : "ranked by the cold pass", ", ",
                      ClockWords(clock), ", 95% CIs");
}

std::string NoOpsLine(const TraceReport& t) {
  if (t.trace.arena_events == 0) return "no events in this trace: nothing to time, nothing ranked";
  return absl::StrCat("no memory operations in this trace (", t.trace.arena_events,
                      " arena events only): nothing to time, nothing ranked");
}

std::string NoiseFloorWords(const Estimate& f, const std::string& reference,
                            const std::string& second) {
  if (!f.has_data()) return absl::StrCat("not measured (", reference, " did not run twice)");
  if (f.n < kMinPairedRounds) {
    return absl::StrFormat(
        "not measured enough: %s ran against itself in %d round%s (%d needed); not used", reference,
        f.n, f.n == 1 ? "" : "s", kMinPairedRounds);
  }
  if (!NoiseFloorUsable(f)) {
    return absl::StrFormat(
        "not usable: %s against %s reads %.3fx [%.3f, %.3f] over %d rounds, where the same "
        "allocator must read about 1x: the runs were disturbed (a busy machine), not a floor; not "
        "used",
        reference, second, f.median, f.lo, f.hi, f.n);
  }
  return absl::StrFormat(
      "%s against %s reads %.3fx [%.3f, %.3f]: one allocator's two run sets %.1f%% apart at the "
      "median, a margin of practical equivalence of %.1f%%",
      reference, second, f.median, f.lo, f.hi, 100 * NoiseMargin(f),
      100 * EquivalenceMargin(NoiseMargin(f)));
}

std::string NoiseWords(const TraceReport& t) {
  return NoiseFloorWords(t.noise_floor, "glibc malloc", "a second malloc run set");
}

std::string DisturbanceWords(const TraceReport& t) {
  const DisturbanceCounts& d = t.disturbance;
  if (t.replay_threads > 1) {
    return absl::StrFormat(
        "not checked: a per-thread replay's %d threads preempt and migrate one another, so a "
        "context switch in a run is its own, not the machine's",
        t.replay_threads);
  }
  std::string s = absl::StrFormat(
      "%d of %d runs were disturbed (involuntary context switch in the ranking passes or CPU "
      "migration); %d re-run, %d kept as they were",
      d.disturbed, d.runs, d.disturbed - d.kept, d.kept);
  if (d.runs >= 20 && 2 * d.disturbed >= d.runs) {
    absl::StrAppend(&s, " (the machine is busy: re-runs stopped once half were disturbed)");
  } else if (d.runs >= 20 && 10 * (d.disturbed - d.kept) >= d.runs) {
    absl::StrAppend(&s, " (re-runs stopped at a tenth of the runs)");
  }
  return s;
}

std::string IncompleteWords(const TraceReport& t) {
  if (t.trace.cut_short.empty()) return "";
  return absl::StrCat("the trace ends early (", t.trace.cut_short, "): this verdict rests on its ",
                      t.trace.memory_ops,
                      " memory ops recorded before the cut, not on the whole recording");
}

namespace {

// The provisional words of a pick whose figure `e` (its ratio to the
// reference, or the reference's own) rests on `n` rounds, `paired` with
// the reference's ("" for the reference's own); `more_time` and
// `more_rounds` say how to give it more.
std::string ProvisionalOf(int n, const Estimate& e, const std::string& paired,
                          const std::string& more_time, const std::string& more_rounds) {
  if (n >= kMinPairedRounds) {
    // Rounds enough, but an interval too wide to act on: the pick cannot
    // be told from policies that far apart.
    if (!e.has_data() || e.HalfWidth() <= kActionableHalfWidth) return "";
    return absl::StrFormat(
        "the recommended policy's figure is known only within -%.0f%%/+%.0f%% (95%% CI, %d "
        "rounds), wider than the +-%.0f%% a choice can rest on: the pick may change on the next "
        "invocation (a quieter machine, or more time: %s)",
        100 * (1 - e.lo / e.median), 100 * (e.hi / e.median - 1), e.n, 100 * kActionableHalfWidth,
        more_time);
  }
  return absl::StrFormat(
      "the figures rest on %d round%s%s (%d make an interval): no "
      "difference among these policies is a result yet, and the pick may change on the next "
      "invocation; %s",
      n, n == 1 ? "" : "s", paired.empty() ? "" : absl::StrCat(" paired with ", paired),
      kMinPairedRounds, more_rounds);
}

}  // namespace

std::string ReplayProvisionalWords(const TraceReport& t) {
  const Verdict& v = t.verdict;
  if (v.recommended.empty()) return "";
  // The replay's own pick, where the program took the verdict over.
  const std::string& pick = v.replay_recommended.empty() ? v.recommended : v.replay_recommended;
  const PolicyResult* p = FindPolicy(t, pick);
  // The reference's rounds are not paired with itself: its own figure.
  const bool pick_is_reference = p != nullptr && p->role == Role::kReference;
  const int n = p == nullptr ? 0 : pick_is_reference ? p->runs : p->vs_malloc.n;
  return ProvisionalOf(
      n,
      p == nullptr        ? Estimate()
      : pick_is_reference ? p->ns_per_op
                          : p->vs_malloc,
      pick_is_reference ? "" : "glibc malloc's", t.own_budget ? "--budget" : "--total_budget",
      t.own_budget
          ? "give each policy more time (--budget=SECONDS) or more runs (--min_runs=N)"
          : "give the trace more time (--total_budget=SECONDS) or fewer policies (--policies=...)");
}

std::string InSituProvisionalWords(const InSituSummary& s) {
  if (s.recommended.empty()) return "";
  const InSituPolicy& rec = s.policies[s.decision.recommended];
  // The reference's rounds are not paired with itself: its own runs.
  const int n = rec.reference ? static_cast<int>(rec.runs.size()) : rec.vs_reference.n;
  return ProvisionalOf(
      n, rec.reference ? rec.ranked : rec.vs_reference,
      rec.reference ? "" : absl::StrCat("the reference ", s.reference, "'s"),
      "--in_situ_budget, --in_situ_runs",
      "give the program more time (--in_situ_budget=SECONDS, --in_situ_runs=N) or fewer "
      "policies (--policies=...)");
}

std::string ProvisionalWords(const TraceReport& t) {
  // Where the program decided, the verdict rests on the program's rounds.
  if (t.in_situ != nullptr && !t.in_situ->recommended.empty()) {
    return InSituProvisionalWords(*t.in_situ);
  }
  return ReplayProvisionalWords(t);
}

std::string ProgramWords(const TraceReport& t, bool name_policy) {
  const ProgramEstimate& e = t.program;
  if (e.recorded_seconds <= 0) return absl::StrCat("not estimated: ", e.why_not);
  // One unit for every figure: ms for a recording under a second.
  const bool ms = e.recorded_seconds < 1;
  auto d = [&](double sec) { return absl::StrFormat("%.3g", ms ? 1e3 * sec : sec); };
  const char* unit = ms ? "ms" : "s";
  if (e.policy == "malloc") {
    return absl::StrFormat(
        "the recorded program ran %s %s%s, of which glibc malloc's calls take about %s %s at the "
        "replay's rate; the replay keeps malloc",
        d(e.recorded_seconds), unit, e.recorded_cpu ? " of CPU time" : "", d(e.malloc_seconds),
        unit);
  }
  const Estimate& s = e.saved_seconds;
  const std::string interval = s.n >= kMinPairedRounds
                                   ? absl::StrFormat(" [%s, %s]", d(s.lo), d(s.hi))
                                   : absl::StrFormat(" (n = %d: no interval)", s.n);
  return absl::StrFormat(
      "%s about %s %s%s of the recorded program's %s %s%s (about %.2fx its speed): at the "
      "replay's rates glibc malloc's calls take %s %s, %s's %s %s. An estimate of the calls "
      "alone (the recorded run includes the recorder's own cost; the program's own work over "
      "its containers is not replayed, and where the blocks lie speeds or slows it too), "
      "on most programs of the fidelity study smaller than what the program itself saved "
      "(docs/fidelity.md): "
      "TRACE -- PROGRAM measures it in the program",
      s.median >= 0 ? "saves" : "costs", d(std::abs(s.median)), unit, interval,
      d(e.recorded_seconds), unit, e.recorded_cpu ? " of CPU time" : "", e.speedup,
      d(e.malloc_seconds), unit,
      !name_policy                        ? std::string("the pick")
      : e.policy == t.verdict.recommended ? e.policy
                                          : absl::StrCat("the replay's pick ", e.policy),
      d(e.recommended_seconds), unit);
}

std::string IfInstrumentedWords(const TraceReport& t, bool name_policy) {
  const Verdict& v = t.verdict;
  if (v.if_instrumented.empty()) return "";
  return absl::StrCat(
      "not a recommendation: this trace has no container arenas, so only what the program adopts "
      "unchanged (a malloc) is recommended; with its containers on alloctrace::TraceAllocator "
      "and then on a pool (a code change; docs/adopt.md), ",
      name_policy ? v.if_instrumented : "the fastest above", " replayed at ",
      Times(v.if_instrumented_vs_malloc), " glibc malloc's speed here");
}

std::string OverLimitWords(const TraceReport& t) {
  const int n = t.over_limit_policies;
  return absl::StrCat(n, " polic", n == 1 ? "y" : "ies", " passed the time or memory limit of a ",
                      "run (below): a measured outcome, not a failure; not ranked");
}

std::string SamplingWords(const TraceReport& t) {
  const SamplingFacts& f = t.sampling;
  if (!f.windowed) return "whole runs: every run replays the whole trace";
  int whole = 0, contenders = 0;
  for (const PolicyResult& p : t.policies) {
    whole += p.whole_runs > 0;
    contenders += p.whole_runs > 0 || !p.whole_run_note.empty();
  }
  const std::string whole_runs = absl::StrFormat(
      "Peak RSS and page faults: from one whole run of each of %d of the %d policies left at the "
      "end%s",
      whole, contenders,
      whole < contenders && whole > 0
          ? " (the others' from their windows, which are not compared with a whole run's: "
            "they are neither the smallest RSS nor recommended)"
      : whole < contenders ? " (the others' from their windows)"
                           : "");
  if (f.served) {
    const std::string threads =
        t.replay_threads > 1
            ? absl::StrFormat(
                  " Each window is cut at points of the trace's global order and replayed on %d "
                  "threads, which live through the trace as a whole run's do: each replays its own "
                  "ops up to the window, then the window's, with the waits of the whole replay.",
                  t.replay_threads)
            : "";
    return absl::StrFormat(
        "served windows: each contender's own process replays the trace once, from its first op, "
        "through one allocator, a window a round, every contender of a round the same window: the "
        "trace's %d strata in order, each a window of %d ops after %d ops untimed, and before "
        "those its process's memory read back into the caches (the other contenders' turns evicted "
        "it); so a window starts on the heap the trace made up to it. A run's time for the whole "
        "trace is its window's time per memory op times the trace's memory ops.%s %s",
        f.strata, f.window_ops, f.lead_ops, threads, whole_runs);
  }
  return absl::StrFormat(
      "sampled windows: every run replays %d windows of up to %d ops, one per stratum of the "
      "trace, "
      "each "
      "from the trace's heap at its start (live objects allocated untimed, then %d ops untimed); "
      "%.1f%% of the trace's ops timed per run; a run's time for the whole trace is each window's "
      "time per memory op times its stratum's memory ops, summed. %s",
      f.strata, f.window_ops, f.lead_ops, 100 * f.timed_share, whole_runs);
}

namespace {

int MarginPercent() { return static_cast<int>(std::lround(100 * kNeverFreesMargin)); }

}  // namespace

std::string RssSlackWords(double rss_slack) {
  return absl::StrFormat("within %d%% or %.0f MiB (whichever is more) of the smallest",
                         static_cast<int>(std::lround(100 * rss_slack)),
                         kRssSlackFloorBytes / (1024 * 1024));
}

std::string NeverFreesWords(const std::string& passed_over, const std::string& kept,
                            const Estimate& edge) {
  const std::string speed = edge.has_data() ? absl::StrFormat(", %.2fx [%.2f, %.2f] %s's speed,",
                                                              edge.median, edge.lo, edge.hi, kept)
                                            : "";
  return absl::StrFormat(
      "%s%s never frees its blocks: a policy that never frees is recommended only when shown "
      "more than %d%% faster than the fastest that frees (the paired ratio's 95%% CI above 1, "
      "its median above %.2f)",
      passed_over, speed, MarginPercent(), 1 + kNeverFreesMargin);
}

std::string PassedOverWords(const TraceReport& t) {
  const Verdict& v = t.verdict;
  if (v.passed_over_name.empty()) return "";
  return NeverFreesWords(v.passed_over_name, v.passed_over_kept, v.passed_over_edge);
}

std::string TraceTitle(const TraceReport& t) {
  const TraceFacts& f = t.trace;
  return absl::StrFormat(
      "%s\nworkload %s: %d memory ops, %d arena events, %d thread%s\n"
      "ideal: %s peak live (%d bytes, %d objects)\n",
      f.path, f.workload.empty() ? "?" : f.workload, f.memory_ops, f.arena_events, f.threads,
      f.threads == 1 ? "" : "s", Mib(f.peak_live_bytes), f.peak_live_bytes, f.peak_live_objects);
}

std::string NotPreciseNote(const PolicyResult& p) {
  const bool ratio = p.role != Role::kReference && p.vs_malloc.has_data();
  return absl::StrFormat("%s: ns/op +-%s%s after %d runs (%s)", p.name, Pct(p.ns_per_op),
                         ratio ? absl::StrCat(", x malloc +-", Pct(p.vs_malloc)) : "", p.runs,
                         p.stop_reason.empty() ? "stopped" : p.stop_reason);
}

// "eliminated" for a policy the race stopped before any run completed: ok
// (not failed), but without figures (its reason is in `error`).
std::string StatusWord(const PolicyResult& p) {
  switch (p.status) {
    case PolicyResult::Status::kOk:
      return p.eliminated && p.runs == 0 ? "eliminated" : "ok";
    case PolicyResult::Status::kFailed:
      return "FAILED";
    case PolicyResult::Status::kOverLimit:
      return "over limit";
    case PolicyResult::Status::kSkipped:
      return "skipped";
  }
  return "?";
}

// The `error` column and field: the failure, or why a policy without
// figures was eliminated.
std::string ErrorWords(const PolicyResult& p) {
  return p.ok() && p.eliminated && p.runs == 0 ? p.stop_reason : p.failure;
}

std::string Sec(const Estimate& e) {
  if (!e.has_data()) return "-";
  return e.median >= 10 ? absl::StrFormat("%.1f", e.median) : absl::StrFormat("%.3f", e.median);
}

std::string Ci(const Estimate& e, const char* fmt) {
  if (!e.has_data()) return "-";
  return absl::StrFormat(fmt, e.lo, e.hi);
}

const PolicyResult* ReplayResult(const TraceReport* replay, const std::string& in_situ_name,
                                 const std::string& reference) {
  if (replay == nullptr) return nullptr;
  for (const PolicyResult& p : replay->policies) {
    if (InSituNameOf(p.name, reference) == in_situ_name && p.name != "new") return &p;
  }
  return nullptr;
}

std::string ReplayRank(const TraceReport* replay, const std::string& name) {
  if (replay == nullptr) return "";
  int rank = 0;
  for (const PolicyResult& p : replay->policies) {
    if (!p.ok() || !p.ns_per_op.has_data()) continue;
    ++rank;
    if (p.name == name) return absl::StrCat(rank);
  }
  return "-";
}

std::string InSituStatusWords(const InSituPolicy& p) {
  if (!p.ok()) return absl::StrCat(WordOf(kRunStatusWords, p.status), ": ", p.failure);
  if (p.eliminated) return p.stop_reason;  // "eliminated after 4 runs: ..."
  return "ok";
}

}  // namespace alloctrace
