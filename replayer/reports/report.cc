// The reports for people (80-column table, Markdown), written from the
// summary (replayer/verdict/summary.h) with the small formatting helpers kept
// private here. CSV and JSON are in report_data.cc, HTML in report_html.cc.
#include "alloctrace/replayer/reports/report.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/verdict/adopt.h"

namespace alloctrace {
namespace {

// A sparkline of the RSS course, `width` characters wide.
std::string Sparkline(const std::vector<int64_t>& course, int width) {
  static const char* const kBars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                      "\u2585", "\u2586", "\u2587", "\u2588"};
  if (course.empty()) return std::string(width, ' ');
  int64_t hi = 1;
  for (int64_t v : course) hi = std::max(hi, v);
  std::string out;
  for (int i = 0; i < width; ++i) {
    const size_t from = course.size() * i / width;
    const size_t to = std::max(from + 1, course.size() * (i + 1) / width);
    int64_t m = 0;
    for (size_t k = from; k < to && k < course.size(); ++k) m = std::max(m, course[k]);
    const int level = static_cast<int>(std::lround(7.0 * std::max<int64_t>(m, 0) / hi));
    out += kBars[std::clamp(level, 0, 7)];
  }
  return out;
}

// Breaks a line longer than `width` at spaces, indenting the continuation
// lines by `indent` spaces.
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

// "12.3" with precision fitting the value.
std::string Num(double v) {
  if (std::fabs(v) >= 100) return absl::StrFormat("%.0f", v);
  if (std::fabs(v) >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

std::string Ratio(const Estimate& e) {
  if (!e.has_data()) return "-";
  return absl::StrFormat("%.2fx [%.2f, %.2f]", e.median, e.lo, e.hi);
}

// "2.31 2.25-2.40" in at most 14 columns: fewer decimals as ratios grow;
// below 0.1 the median alone (the interval is in the other formats).
std::string RatioCell(const Estimate& e) {
  if (!e.has_data()) return "-";
  if (e.median < 0.1) return absl::StrFormat("%.4f", e.median);
  if (e.hi >= 100) return absl::StrFormat("%.0f %.0f-%.0f", e.median, e.lo, e.hi);
  if (e.hi >= 10) return absl::StrFormat("%.1f %.1f-%.1f", e.median, e.lo, e.hi);
  return absl::StrFormat("%.2f %.2f-%.2f", e.median, e.lo, e.hi);
}

std::string Pct(const Estimate& e) {
  const double h = e.HalfWidth();
  if (!std::isfinite(h)) return "-";
  return absl::StrFormat("%.1f%%", 100 * h);
}

std::string TraceTitle(const TraceReport& t) {
  return absl::StrFormat(
      "%s\nworkload %s: %d memory ops, %d arena events, %d thread%s\n"
      "ideal: %s peak live (%d bytes, %d objects)\n",
      t.trace_path, t.workload.empty() ? "?" : t.workload, t.ops, t.arena_events, t.threads,
      t.threads == 1 ? "" : "s", Mib(t.peak_live_bytes), t.peak_live_bytes, t.peak_live_objects);
}

std::string PassPlan(const ReportContext& ctx) {
  if (ctx.passes <= 1) return "one cold pass per run";
  return absl::StrFormat(
      "per run a cold pass, then warm passes adding up to %g ms or more (at least one, at most "
      "%d passes in all)",
      ctx.warm_ms, ctx.passes);
}

// `clock`: the trace's (TraceReport::clock).
std::string PassWords(const ReportContext& ctx, TimingClock clock) {
  const bool warm = ctx.warm();
  return absl::StrCat(warm ? "ranked by the warm passes" : "ranked by the cold pass", ", ",
                      ClockWords(clock), ", 95% CIs");
}

std::string NoiseWords(const TraceReport& t) {
  if (!t.noise_floor.has_data()) return "not measured (glibc malloc did not run twice)";
  return absl::StrFormat(
      "glibc malloc against a second malloc run set reads %.3fx [%.3f, %.3f]: differences "
      "smaller than about %.1f%% are not real here",
      t.noise_floor.median, t.noise_floor.lo, t.noise_floor.hi,
      100 * std::max(std::fabs(t.noise_floor.hi - 1), std::fabs(1 - t.noise_floor.lo)));
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
      "migration); %d re-run, "
      "%d kept as they were",
      d.disturbed, d.runs, d.disturbed - d.kept, d.kept);
  if (d.runs >= 20 && 2 * d.disturbed >= d.runs) {
    absl::StrAppend(&s, " (the machine is busy: re-runs stopped once half were disturbed)");
  } else if (d.runs >= 20 && 10 * (d.disturbed - d.kept) >= d.runs) {
    absl::StrAppend(&s, " (re-runs stopped at a tenth of the runs)");
  }
  return s;
}

// The verdict block, as lines of at most 80 columns.
std::string VerdictText(const TraceReport& t, const ReportContext& ctx) {
  const Verdict& v = t.verdict;
  std::string o = absl::StrCat("VERDICT (", PassWords(ctx, t.clock), ")\n");
  auto line = [&o](const std::string& label, const std::string& text) {
    absl::StrAppend(&o, Wrap(absl::StrFormat("  %-14s%s", label, text), 80, 16), "\n");
  };
  if (v.recommended.empty()) {
    line("", v.sentence);
  } else {
    line("fastest:",
         absl::StrCat(NameList(v.fastest), v.fastest.size() > 1 ? " (tied)" : "",
                      v.fastest_vs_malloc.has_data()
                          ? absl::StrCat("; ", Ratio(v.fastest_vs_malloc), " glibc malloc's speed")
                          : ""));
    line("smallest RSS:",
         absl::StrCat(NameList(v.smallest_rss), v.smallest_rss.size() > 1 ? " (tied)" : "", ", ",
                      Mib(v.smallest_rss_bytes.median)));
    line("recommended:", v.recommended);
    if (!v.passed_over.empty()) line("passed over:", v.passed_over);
    line("rule:", v.rule);
  }
  line("noise floor:", NoiseWords(t));
  line("disturbed:", DisturbanceWords(t));
  if (t.failed_policies > 0) {
    line("FAILED:", absl::StrCat(t.failed_policies, " polic", t.failed_policies == 1 ? "y" : "ies",
                                 " failed (below); they are not ranked"));
  }
  if (!v.recommended.empty()) line("Adopt:", AdoptWords(v.adopt));
  return o;
}

std::string NotPreciseNote(const PolicyResult& p, const ReportContext& ctx) {
  const bool ratio = p.name != "malloc" && p.vs_malloc.has_data();
  return absl::StrFormat("%s: ns/op +-%s%s after %d runs (%s)", p.name, Pct(p.ns_per_op),
                         ratio ? absl::StrCat(", x malloc +-", Pct(p.vs_malloc)) : "", p.runs,
                         p.stop_reason.empty() ? "stopped" : p.stop_reason);
}

}  // namespace

std::string FormatTable(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o;
  const bool warm = ctx.warm();
  for (const TraceReport& t : reports) {
    absl::StrAppend(&o, TraceTitle(t));
    if (!t.cut_short.empty()) absl::StrAppend(&o, "warning: ", t.cut_short, "\n");
    for (const std::string& note : TraceNotes(t)) {
      absl::StrAppend(&o, Wrap("note: " + note, 80, 6), "\n");
    }
    if (t.no_memory_ops) {
      absl::StrAppend(&o, NoOpsLine(t), "\n\n");
      continue;
    }
    absl::StrAppend(&o, "\n", VerdictText(t, ctx), "\n");
    constexpr int kNameW = 30;
    absl::StrAppendFormat(&o, "%-*s %7s %6s %6s %-14s %7s %3s\n", kNameW, "policy",
                          warm ? "warm ns" : "cold ns", "+-CI", warm ? "cold" : "warm",
                          "xmalloc 95% CI", "peakRSS", "n");
    std::vector<std::string> notes, failures, eliminated;
    for (const PolicyResult& p : t.policies) {
      const std::string name = p.name.size() > kNameW ? p.name.substr(0, kNameW - 1) + "~" : p.name;
      if (!p.ok()) {
        failures.push_back(
            Wrap(absl::StrCat(p.status == PolicyResult::Status::kFailed ? "FAILED " : "skipped ",
                              p.name, ": ", p.failure),
                 80, 4));
        continue;
      }
      const Estimate& other = warm ? p.cold_ns_per_op : p.warm_ns_per_op;
      const std::string ratio = RatioCell(p.vs_malloc);
      // (An eliminated policy may have no completed run: no figures.)
      absl::StrAppendFormat(&o, "%-*s %6s%s %5s%s %6s %-14s %6s%s %3d\n", kNameW, name,
                            p.ns_per_op.has_data() ? Num(p.ns_per_op.median) : "-",
                            p.tied_fastest ? "*" : " ", Pct(p.ns_per_op),
                            p.eliminated                    ? "x"
                            : p.precise || p.name == "bump" ? " "
                                                            : "!",
                            other.has_data() ? Num(other.median) : "-", ratio,
                            p.peak_rss.has_data() ? Mib(p.peak_rss.median) : "-",
                            p.tied_smallest_rss ? "*" : " ", p.runs);
      if (p.eliminated) {
        eliminated.push_back(Wrap(absl::StrCat("  ", p.name, ": ", p.stop_reason), 80, 4));
      } else if (!p.precise && p.name != "bump") {
        notes.push_back(NotPreciseNote(p, ctx));
      }
    }
    for (const std::string& f : failures) absl::StrAppend(&o, f, "\n");
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
    // The contenders' types (every policy's: --format=markdown, csv, json).
    absl::StrAppend(&o, "adopt (T: your container's element type):\n");
    for (const PolicyResult& p : t.policies) {
      if (!p.ok() || p.eliminated || p.screened_out || p.name == "bump") continue;
      absl::StrAppend(&o, Wrap(absl::StrCat("  ", p.name, ": ", AdoptWords(p.adopt)), 80, 4), "\n");
    }
    absl::StrAppend(&o, "\n");
  }
  absl::StrAppend(
      &o,
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
  absl::StrAppend(
      &o,
      Wrap(absl::StrFormat("%s; %s; runs until +-%.0f%% or %.0f s per policy, at least %d; "
                           "touch=%s",
                           ctx.date, PassPlan(ctx), 100 * ctx.precision, ctx.budget_seconds,
                           ctx.min_runs, WordOf(kTouchWords, ctx.touch)),
           80, 0),
      "\n");
  return o;
}

namespace {

// The type as code, the rest as words.
std::string MdAdopt(const allocators::Adoption& a) {
  if (a.cpp_type.empty()) return a.how;
  const std::string words = AdoptWords(a);
  return absl::StrCat("`", a.cpp_type, "`", words.substr(a.cpp_type.size()));
}

std::string MdEstimate(const Estimate& e, bool bold) {
  if (!e.has_data()) return "-";
  const std::string m = bold ? "**" + Num(e.median) + "**" : Num(e.median);
  return absl::StrCat(m, " [", Num(e.lo), ", ", Num(e.hi), "]");
}

}  // namespace

std::string FormatMarkdown(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o;
  if (reports.size() > 1) {
    // One line per trace: the verdicts side by side.
    absl::StrAppend(&o,
                    "| trace | fastest (tied group) | its speed vs glibc malloc [95% CI] | "
                    "smallest peak RSS (tied group) | recommended | noise floor [95% CI] |\n"
                    "|---|---|---:|---|---|---:|\n");
    for (const TraceReport& t : reports) {
      if (t.no_memory_ops) {
        absl::StrAppend(&o, "| ", t.trace_path, " | no memory operations | | | | |\n");
        continue;
      }
      const Verdict& v = t.verdict;
      absl::StrAppend(&o, "| ", t.trace_path, " | ", absl::StrJoin(v.fastest, ", "), " | ",
                      v.fastest_vs_malloc.has_data()
                          ? absl::StrFormat("%.2f [%.2f, %.2f]", v.fastest_vs_malloc.median,
                                            v.fastest_vs_malloc.lo, v.fastest_vs_malloc.hi)
                          : "-",
                      " | ", absl::StrJoin(v.smallest_rss, ", "), " | ",
                      v.recommended.empty() ? "-" : v.recommended, " | ",
                      t.noise_floor.has_data()
                          ? absl::StrFormat("%.3f [%.3f, %.3f]", t.noise_floor.median,
                                            t.noise_floor.lo, t.noise_floor.hi)
                          : "-",
                      " |\n");
    }
    absl::StrAppend(&o, "\n");
  }
  for (const TraceReport& t : reports) {
    const std::string title = TraceTitle(t);
    absl::StrAppend(&o, "### ", t.trace_path, "\n\n", title.substr(title.find('\n') + 1), "\n");
    if (!t.cut_short.empty()) absl::StrAppend(&o, "Warning: ", t.cut_short, "\n\n");
    for (const std::string& note : TraceNotes(t)) absl::StrAppend(&o, "Note: ", note, ".\n\n");
    if (t.no_memory_ops) {
      absl::StrAppend(&o, NoOpsLine(t), ".\n\n");
      continue;
    }
    absl::StrAppend(&o, "**Verdict** (", PassWords(ctx, t.clock), "): ", t.verdict.sentence,
                    "\n\n");
    if (!t.verdict.recommended.empty()) {
      absl::StrAppend(&o, "**Adopt:** ", MdAdopt(t.verdict.adopt), "\n\n");
    }
    absl::StrAppend(&o, "Noise floor: ", NoiseWords(t), ". Disturbed runs: ", DisturbanceWords(t),
                    ".\n\n");
    absl::StrAppend(&o,
                    "| policy | family | warm ns/op [95% CI] | cold ns/op [95% CI] | x malloc "
                    "[95% CI] | peak RSS [95% CI] | x ideal | minor faults | runs | re-runs | "
                    "RSS course | adopt (`T`: the element type) |\n");
    absl::StrAppend(&o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    const bool warm = ctx.warm();
    std::vector<std::string> notes, eliminated;
    for (const PolicyResult& p : t.policies) {
      if (!p.ok()) {
        absl::StrAppend(&o, "| ", p.name, " | ", WordOf(allocators::kFamilyWords, p.family), " | ",
                        p.status == PolicyResult::Status::kFailed ? "**FAILED**: " : "skipped: ",
                        p.failure, " | | | | | | | | | ", MdAdopt(p.adopt), " |\n");
        continue;
      }
      const std::string rss =
          p.peak_rss.has_data()
              ? absl::StrCat(p.tied_smallest_rss ? "**" + Mib(p.peak_rss.median) + "**"
                                                 : Mib(p.peak_rss.median),
                             " [", Mib(p.peak_rss.lo), ", ", Mib(p.peak_rss.hi), "]")
              : "-";
      absl::StrAppend(
          &o, "| ", p.name, p.precise || p.eliminated || p.name == "bump" ? "" : " !", " | ",
          WordOf(allocators::kFamilyWords, p.family), " | ",
          MdEstimate(p.warm_ns_per_op, warm && p.tied_fastest), " | ",
          MdEstimate(p.cold_ns_per_op, !warm && p.tied_fastest), " | ",
          p.vs_malloc.has_data() ? absl::StrFormat("%.2f [%.2f, %.2f]", p.vs_malloc.median,
                                                   p.vs_malloc.lo, p.vs_malloc.hi)
                                 : "-",
          " | ", rss, " | ", p.runs > 0 ? absl::StrFormat("%.2f", p.overhead) : "-", " | ",
          p.runs > 0 ? absl::StrFormat("%.0f", p.minor_faults) : "-", " | ", p.runs, " | ",
          p.reruns, " | ", Sparkline(p.rss_course, 16), " | ", MdAdopt(p.adopt), " |\n");
      if (p.eliminated) eliminated.push_back(absl::StrCat(p.name, ": ", p.stop_reason));
      if (!p.precise && !p.eliminated && p.name != "bump") notes.push_back(NotPreciseNote(p, ctx));
    }
    if (!notes.empty()) {
      absl::StrAppendFormat(&o, "\n! CI wider than +-%.0f%%: %s.\n", 100 * ctx.precision,
                            absl::StrJoin(notes, "; "));
    }
    if (!eliminated.empty()) {
      absl::StrAppend(&o, "\nEliminated by the race (not held to the precision): ",
                      absl::StrJoin(eliminated, "; "), ".\n");
    }
    absl::StrAppend(&o, "\n");
  }
  absl::StrAppendFormat(
      &o,
      "Bold: in the tied group of the best (the 95%% CI of the ratio paired by round includes 1 "
      "or lies within the noise floor). !: CI not within the target. "
      "Machine: %s. %s; %s; %s; runs until +-%.0f%% or %.0f s per policy, at least %d; "
      "touch=%s.\n",
      ctx.machine, ctx.date, PassPlan(ctx), ClockWords(ctx.clock), 100 * ctx.precision,
      ctx.budget_seconds, ctx.min_runs, WordOf(kTouchWords, ctx.touch));
  return o;
}

}  // namespace alloctrace
