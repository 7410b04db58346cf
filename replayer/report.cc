// Why one file of ~780 lines: every text report (table, Markdown, CSV, CSV
// per run, JSON) is written from the same summary with the same small
// formatting helpers, kept private here; the summary (medians, intervals,
// ties, verdict) is computed at the top of this file and is the next piece to
// move into a file of its own. The HTML report is apart, in report_html.cc.
#include "replayer/report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/json.h"

namespace alloctrace {
namespace {

std::string Mib(double bytes) {
  if (std::fabs(bytes) < 1024 * 1024) return absl::StrFormat("%.0fK", bytes / 1024);
  return absl::StrFormat("%.1fM", bytes / (1024.0 * 1024.0));
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

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

bool IsContender(const PolicyResult& p) { return p.ok() && p.name != "bump"; }

std::string NameList(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  if (names.size() == 1) return names[0];
  return absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "), " and ",
                      names.back());
}

std::string ClockWords(const std::string& clock) {
  return clock == "wall" ? "wall-clock time" : "thread CPU time";
}

}  // namespace

double RunNsPerOp(const RunResult& r, bool warm, const std::string& clock) {
  if (r.ops == 0 || r.passes.empty()) return -1;
  const bool cpu = clock != "wall";
  if (!warm) return 1e9 * (cpu ? r.passes[0].cpu_seconds : r.passes[0].wall_seconds) / r.ops;
  if (r.passes.size() < 2) return -1;
  double s = 0;
  for (size_t i = 1; i < r.passes.size(); ++i) {
    s += cpu ? r.passes[i].cpu_seconds : r.passes[i].wall_seconds;
  }
  return 1e9 * s / (static_cast<double>(r.ops) * static_cast<double>(r.passes.size() - 1));
}

namespace {

// Per-round figures of a policy's runs.
std::map<int, double> ByRound(const std::vector<RunRecord>& runs, bool warm,
                              const std::string& clock) {
  std::map<int, double> out;
  for (const RunRecord& rr : runs) {
    const double v = RunNsPerOp(rr.result, warm, clock);
    if (v > 0) out[rr.round] = v;
  }
  return out;
}

std::vector<double> Values(const std::map<int, double>& m) {
  std::vector<double> v;
  for (const auto& [round, x] : m) v.push_back(x);
  return v;
}

// reference / subject, for rounds in both.
Estimate PairedRatio(const std::map<int, double>& reference, const std::map<int, double>& subject) {
  std::vector<double> ratios;
  for (const auto& [round, x] : subject) {
    auto it = reference.find(round);
    if (it != reference.end() && x > 0) ratios.push_back(it->second / x);
  }
  return MedianWithCi(ratios);
}

}  // namespace

TraceReport Summarize(const ReplayProgram& program, const std::vector<PolicyRuns>& all,
                      const PolicyRuns& noise, const ReportContext& ctx, int rounds) {
  TraceReport t;
  t.trace_path = program.path;
  t.workload = program.header.workload();
  t.ops = program.memory_ops();
  t.arena_events = program.arena_events;
  t.threads = program.threads;
  t.peak_live_bytes = program.peak_live_bytes;
  t.peak_live_objects = program.peak_live_objects;
  t.cut_short = program.cut_short;
  t.no_memory_ops = program.memory_ops() == 0;
  t.rounds = rounds;
  const bool rank_warm = ctx.rank_by == "warm" && ctx.passes > 1;

  std::map<int, double> malloc_cold, malloc_warm;
  for (const PolicyRuns& pr : all) {
    if (pr.name == "malloc" && pr.failed == 0) {
      malloc_cold = ByRound(pr.runs, false, ctx.clock);
      malloc_warm = ByRound(pr.runs, true, ctx.clock);
    }
  }
  if (!noise.runs.empty() && noise.failed == 0) {
    const std::map<int, double> second = ByRound(noise.runs, rank_warm, ctx.clock);
    t.noise_floor = PairedRatio(rank_warm ? malloc_warm : malloc_cold, second);
  }

  for (const PolicyRuns& pr : all) {
    PolicyResult s;
    s.name = pr.name;
    s.family = pr.family;
    s.note = pr.note;
    s.runs = static_cast<int>(pr.runs.size());
    s.attempts = pr.attempts;
    s.failed = pr.failed;
    s.stop_reason = pr.stop_reason;
    s.raw = pr.runs;
    for (const RunRecord& rr : pr.runs) {
      s.reruns += rr.reruns;
      s.disturbed_kept += rr.disturbed;
    }
    if (!pr.skipped.empty()) {
      s.status = PolicyResult::Status::kSkipped;
      s.failure = pr.skipped;
    } else if (pr.failed > 0 || pr.runs.empty()) {
      s.status = PolicyResult::Status::kFailed;
      s.failure = pr.failed > 0 ? absl::StrCat(pr.failed, " of ", pr.attempts,
                                               " runs failed; first: ", pr.first_error)
                                : "no run was made";
    }
    if (!pr.runs.empty()) {
      const std::map<int, double> cold = ByRound(pr.runs, false, ctx.clock);
      const std::map<int, double> warm = ByRound(pr.runs, true, ctx.clock);
      s.cold_ns_per_op = MedianWithCi(Values(cold));
      s.warm_ns_per_op = MedianWithCi(Values(warm));
      if (!malloc_cold.empty()) s.cold_vs_malloc = PairedRatio(malloc_cold, cold);
      if (!malloc_warm.empty()) s.warm_vs_malloc = PairedRatio(malloc_warm, warm);
      s.ns_per_op = rank_warm ? s.warm_ns_per_op : s.cold_ns_per_op;
      s.vs_malloc = rank_warm ? s.warm_vs_malloc : s.cold_vs_malloc;
      std::vector<double> peak, final_rss, minflt, majflt, teardown;
      for (const RunRecord& rr : pr.runs) {
        peak.push_back(static_cast<double>(rr.result.peak_rss));
        final_rss.push_back(static_cast<double>(rr.result.final_rss));
        minflt.push_back(static_cast<double>(rr.result.minor_faults));
        majflt.push_back(static_cast<double>(rr.result.major_faults));
        teardown.push_back(rr.result.teardown_seconds * 1e3);
      }
      s.peak_rss = MedianWithCi(peak);
      s.final_rss = Median(final_rss);
      s.minor_faults = Median(minflt);
      s.major_faults = Median(majflt);
      s.teardown_ms = Median(teardown);
      s.overhead = program.peak_live_bytes > 0 ? s.peak_rss.median / program.peak_live_bytes : 0;
      // The course of the run whose cold time is nearest the median.
      double best_d = std::numeric_limits<double>::max();
      for (const RunRecord& rr : pr.runs) {
        const double d = std::fabs(RunNsPerOp(rr.result, false, ctx.clock) - s.cold_ns_per_op.median);
        if (d < best_d) {
          best_d = d;
          s.rss_course = rr.result.rss_course;
        }
      }
      const bool ratio_needed = s.name != "malloc" && s.vs_malloc.has_data();
      s.precise = s.runs >= 2 && s.ns_per_op.HalfWidth() <= ctx.precision &&
                  (!ratio_needed || s.vs_malloc.HalfWidth() <= ctx.precision);
    }
    t.failed_policies += s.status == PolicyResult::Status::kFailed;
    t.policies.push_back(std::move(s));
  }
  auto rank = [](const PolicyResult& p) {
    return p.status == PolicyResult::Status::kOk ? 0 : p.status == PolicyResult::Status::kFailed ? 1 : 2;
  };
  std::stable_sort(t.policies.begin(), t.policies.end(),
                   [&](const PolicyResult& a, const PolicyResult& b) {
                     if (rank(a) != rank(b)) return rank(a) < rank(b);
                     return a.ns_per_op.median < b.ns_per_op.median;
                   });
  if (t.no_memory_ops) return t;

  // Ties: contenders whose interval overlaps the best's. bump never frees
  // (it is the harness floor), so it is not a contender.
  std::vector<size_t> idx;
  std::vector<Estimate> speed, rss;
  for (size_t i = 0; i < t.policies.size(); ++i) {
    if (!IsContender(t.policies[i])) continue;
    idx.push_back(i);
    speed.push_back(t.policies[i].ns_per_op);
    rss.push_back(t.policies[i].peak_rss);
  }
  Verdict& v = t.verdict;
  for (size_t k : TiedWithLowest(speed)) t.policies[idx[k]].tied_fastest = true;
  for (size_t k : TiedWithLowest(rss)) t.policies[idx[k]].tied_smallest_rss = true;
  double smallest = std::numeric_limits<double>::max();
  for (const PolicyResult& p : t.policies) {
    if (p.tied_fastest) v.fastest.push_back(p.name);
    if (IsContender(p)) smallest = std::min(smallest, p.peak_rss.median);
  }
  for (const PolicyResult& p : t.policies) {
    if (p.tied_fastest && v.fastest_vs_malloc.n == 0) v.fastest_vs_malloc = p.vs_malloc;
    if (p.tied_smallest_rss) v.smallest_rss.push_back(p.name);
    if (IsContender(p) && p.peak_rss.median == smallest) v.smallest_rss_bytes = p.peak_rss;
  }

  // The recommendation: among contenders whose peak RSS is within the slack
  // of the smallest, the group tied with the fastest; of that group, the
  // smallest peak RSS (then the name), so that noise between tied policies
  // cannot change the pick.
  const double limit = smallest * (1 + ctx.rss_slack);
  std::vector<size_t> cand;
  std::vector<Estimate> cand_speed;
  for (size_t i = 0; i < t.policies.size(); ++i) {
    const PolicyResult& p = t.policies[i];
    if (IsContender(p) && p.peak_rss.median <= limit) {
      cand.push_back(i);
      cand_speed.push_back(p.ns_per_op);
    }
  }
  std::vector<size_t> pick;
  for (size_t k : TiedWithLowest(cand_speed)) pick.push_back(cand[k]);
  std::sort(pick.begin(), pick.end(), [&](size_t a, size_t b) {
    const PolicyResult& x = t.policies[a];
    const PolicyResult& y = t.policies[b];
    if (x.peak_rss.median != y.peak_rss.median) return x.peak_rss.median < y.peak_rss.median;
    return x.name < y.name;
  });
  const int slack_pct = static_cast<int>(std::lround(100 * ctx.rss_slack));
  v.rule = absl::StrCat("the fastest policy among those whose median peak RSS is within ",
                        slack_pct,
                        "% of the smallest; of the policies tied with it (95% CIs of median "
                        "ns/op overlapping), the one with the smallest peak RSS");
  const std::string pass = rank_warm ? "warm passes" : "the cold pass";
  if (pick.empty()) {
    v.sentence = "No policy completed its runs: nothing can be ranked.";
    return t;
  }
  const PolicyResult& rec = t.policies[pick[0]];
  v.recommended = rec.name;
  std::string speed_words =
      v.fastest.size() == 1 ? absl::StrCat(v.fastest[0], " is the fastest")
                            : absl::StrCat(NameList(v.fastest), " are tied for the fastest");
  std::string vs = v.fastest_vs_malloc.has_data()
                       ? absl::StrFormat(" (%.2fx glibc malloc's speed, 95%% CI %.2f to %.2f)",
                                         v.fastest_vs_malloc.median, v.fastest_vs_malloc.lo,
                                         v.fastest_vs_malloc.hi)
                       : "";
  std::string rec_vs =
      rec.vs_malloc.has_data() && rec.name != "malloc"
          ? absl::StrFormat(", %.2fx glibc malloc's speed (95%% CI %.2f to %.2f)",
                            rec.vs_malloc.median, rec.vs_malloc.lo, rec.vs_malloc.hi)
          : "";
  v.sentence = absl::StrCat(
      "On ", t.trace_path, " (", pass, ", ", ClockWords(ctx.clock), "), ", speed_words, vs,
      "; the smallest peak RSS is ", NameList(v.smallest_rss), "'s (",
      Mib(v.smallest_rss_bytes.median), "). Recommended: ", rec.name, rec_vs, ", ",
      Mib(rec.peak_rss.median), " peak RSS; the rule: ", v.rule, ".");
  return t;
}

namespace {

std::string TraceTitle(const TraceReport& t) {
  return absl::StrFormat(
      "%s\nworkload %s: %d memory ops, %d arena events, %d thread%s\n"
      "ideal: %s peak live (%d bytes, %d objects)\n",
      t.trace_path, t.workload.empty() ? "?" : t.workload, t.ops, t.arena_events, t.threads,
      t.threads == 1 ? "" : "s", Mib(t.peak_live_bytes), t.peak_live_bytes,
      t.peak_live_objects);
}

std::string PassPlan(const ReportContext& ctx) {
  if (ctx.passes <= 1) return "one cold pass per run";
  return absl::StrFormat(
      "per run a cold pass, then warm passes adding up to %g ms or more (at least one, at most "
      "%d passes in all)",
      ctx.warm_ms, ctx.passes);
}

std::string PassWords(const ReportContext& ctx) {
  const bool warm = ctx.rank_by == "warm" && ctx.passes > 1;
  return absl::StrCat(warm ? "ranked by the warm passes" : "ranked by the cold pass",
                      ", ", ClockWords(ctx.clock), ", 95% CIs");
}

std::string NoOpsLine(const TraceReport& t) {
  return absl::StrCat("no memory operations in this trace (", t.arena_events,
                      " arena events only): nothing to time, nothing ranked");
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
  std::string s = absl::StrFormat(
      "%d of %d runs were disturbed (involuntary context switch or CPU migration); %d re-run, "
      "%d kept as they were",
      d.disturbed, d.runs, d.disturbed - d.kept, d.kept);
  if (d.runs >= 20 && 2 * d.disturbed >= d.runs) {
    absl::StrAppend(&s, " (the machine is busy: re-runs stopped once half were disturbed)");
  }
  return s;
}

// The verdict block, as lines of at most 80 columns.
std::string VerdictText(const TraceReport& t, const ReportContext& ctx) {
  const Verdict& v = t.verdict;
  std::string o = absl::StrCat("VERDICT (", PassWords(ctx), ")\n");
  auto line = [&o](const std::string& label, const std::string& text) {
    absl::StrAppend(&o, Wrap(absl::StrFormat("  %-14s%s", label, text), 80, 16), "\n");
  };
  if (v.recommended.empty()) {
    line("", v.sentence);
  } else {
    line("fastest:", absl::StrCat(NameList(v.fastest), v.fastest.size() > 1 ? " (tied)" : "",
                                  v.fastest_vs_malloc.has_data()
                                      ? absl::StrCat("; ", Ratio(v.fastest_vs_malloc),
                                                     " glibc malloc's speed")
                                      : ""));
    line("smallest RSS:", absl::StrCat(NameList(v.smallest_rss),
                                       v.smallest_rss.size() > 1 ? " (tied)" : "", ", ",
                                       Mib(v.smallest_rss_bytes.median)));
    line("recommended:", v.recommended);
    line("rule:", v.rule);
  }
  line("noise floor:", NoiseWords(t));
  line("disturbed:", DisturbanceWords(t));
  if (t.failed_policies > 0) {
    line("FAILED:", absl::StrCat(t.failed_policies, " polic", t.failed_policies == 1 ? "y" : "ies",
                                 " failed (below); they are not ranked"));
  }
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
  const bool warm = ctx.rank_by == "warm" && ctx.passes > 1;
  for (const TraceReport& t : reports) {
    absl::StrAppend(&o, TraceTitle(t));
    if (!t.cut_short.empty()) absl::StrAppend(&o, "warning: ", t.cut_short, "\n");
    if (t.no_memory_ops) {
      absl::StrAppend(&o, NoOpsLine(t), "\n\n");
      continue;
    }
    absl::StrAppend(&o, "\n", VerdictText(t, ctx), "\n");
    constexpr int kNameW = 30;
    absl::StrAppendFormat(&o, "%-*s %7s %6s %6s %-14s %7s %3s\n", kNameW, "policy",
                          warm ? "warm ns" : "cold ns", "+-CI", warm ? "cold" : "warm",
                          "xmalloc 95% CI", "peakRSS", "n");
    std::vector<std::string> notes, failures;
    for (const PolicyResult& p : t.policies) {
      const std::string name =
          p.name.size() > kNameW ? p.name.substr(0, kNameW - 1) + "~" : p.name;
      if (!p.ok()) {
        failures.push_back(Wrap(absl::StrCat(p.status == PolicyResult::Status::kFailed
                                                 ? "FAILED "
                                                 : "skipped ",
                                             p.name, ": ", p.failure),
                                80, 4));
        continue;
      }
      const Estimate& other = warm ? p.cold_ns_per_op : p.warm_ns_per_op;
      const std::string ratio = RatioCell(p.vs_malloc);
      absl::StrAppendFormat(&o, "%-*s %6s%s %5s%s %6s %-14s %6s%s %3d\n", kNameW, name,
                            Num(p.ns_per_op.median), p.tied_fastest ? "*" : " ",
                            Pct(p.ns_per_op), p.precise || p.name == "bump" ? " " : "!",
                            other.has_data() ? Num(other.median) : "-", ratio,
                            Mib(p.peak_rss.median), p.tied_smallest_rss ? "*" : " ", p.runs);
      if (!p.precise && p.name != "bump") notes.push_back(NotPreciseNote(p, ctx));
    }
    for (const std::string& f : failures) absl::StrAppend(&o, f, "\n");
    if (!notes.empty()) {
      absl::StrAppendFormat(&o, "! CI wider than +-%.0f%%:\n", 100 * ctx.precision);
      for (const std::string& n : notes) absl::StrAppend(&o, Wrap("  " + n, 80, 4), "\n");
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
               "pass; n: runs. * in the tied group of the best (95% CI overlapping the best's; "
               "bump, which never frees, is not a contender). ! CI not within the target. "
               "Every run's figures: --format=json or --format=csv-runs."),
           80, 0),
      "\n");
  absl::StrAppend(&o, Wrap("machine: " + ctx.machine, 80, 9), "\n");
  absl::StrAppend(
      &o,
      Wrap(absl::StrFormat("%s; %s; runs until +-%.0f%% or %.0f s per policy, at least %d; "
                           "touch=%s",
                           ctx.date, PassPlan(ctx), 100 * ctx.precision, ctx.budget_seconds,
                           ctx.min_runs, ctx.touch),
           80, 0),
      "\n");
  return o;
}

namespace {

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
      absl::StrAppend(
          &o, "| ", t.trace_path, " | ", absl::StrJoin(v.fastest, ", "), " | ",
          v.fastest_vs_malloc.has_data()
              ? absl::StrFormat("%.2f [%.2f, %.2f]", v.fastest_vs_malloc.median,
                                v.fastest_vs_malloc.lo, v.fastest_vs_malloc.hi)
              : "-",
          " | ", absl::StrJoin(v.smallest_rss, ", "), " | ",
          v.recommended.empty() ? "-" : v.recommended, " | ",
          t.noise_floor.has_data() ? absl::StrFormat("%.3f [%.3f, %.3f]", t.noise_floor.median,
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
    if (t.no_memory_ops) {
      absl::StrAppend(&o, NoOpsLine(t), ".\n\n");
      continue;
    }
    absl::StrAppend(&o, "**Verdict** (", PassWords(ctx), "): ", t.verdict.sentence, "\n\n");
    absl::StrAppend(&o, "Noise floor: ", NoiseWords(t), ". Disturbed runs: ",
                    DisturbanceWords(t), ".\n\n");
    absl::StrAppend(&o,
                    "| policy | family | warm ns/op [95% CI] | cold ns/op [95% CI] | x malloc "
                    "[95% CI] | peak RSS [95% CI] | x ideal | minor faults | runs | re-runs | "
                    "RSS course |\n");
    absl::StrAppend(&o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    const bool warm = ctx.rank_by == "warm" && ctx.passes > 1;
    std::vector<std::string> notes;
    for (const PolicyResult& p : t.policies) {
      if (!p.ok()) {
        absl::StrAppend(&o, "| ", p.name, " | ", p.family, " | ",
                        p.status == PolicyResult::Status::kFailed ? "**FAILED**: " : "skipped: ",
                        p.failure, " | | | | | | | | |\n");
        continue;
      }
      const std::string rss =
          p.peak_rss.has_data()
              ? absl::StrCat(p.tied_smallest_rss ? "**" + Mib(p.peak_rss.median) + "**"
                                                 : Mib(p.peak_rss.median),
                             " [", Mib(p.peak_rss.lo), ", ", Mib(p.peak_rss.hi), "]")
              : "-";
      absl::StrAppend(
          &o, "| ", p.name, p.precise || p.name == "bump" ? "" : " !", " | ", p.family, " | ",
          MdEstimate(p.warm_ns_per_op, warm && p.tied_fastest), " | ",
          MdEstimate(p.cold_ns_per_op, !warm && p.tied_fastest), " | ",
          p.vs_malloc.has_data() ? absl::StrFormat("%.2f [%.2f, %.2f]", p.vs_malloc.median,
                                                   p.vs_malloc.lo, p.vs_malloc.hi)
                                 : "-",
          " | ", rss, " | ", absl::StrFormat("%.2f", p.overhead), " | ",
          absl::StrFormat("%.0f", p.minor_faults), " | ", p.runs, " | ", p.reruns, " | ",
          Sparkline(p.rss_course, 16), " |\n");
      if (!p.precise && p.name != "bump") notes.push_back(NotPreciseNote(p, ctx));
    }
    if (!notes.empty()) {
      absl::StrAppendFormat(&o, "\n! CI wider than +-%.0f%%: %s.\n", 100 * ctx.precision,
                            absl::StrJoin(notes, "; "));
    }
    absl::StrAppend(&o, "\n");
  }
  absl::StrAppendFormat(
      &o,
      "Bold: in the tied group of the best (95%% CIs overlapping). !: CI not within the target. "
      "Machine: %s. %s; %s; %s; runs until +-%.0f%% or %.0f s per policy, at least %d; "
      "touch=%s.\n",
      ctx.machine, ctx.date, PassPlan(ctx), ClockWords(ctx.clock), 100 * ctx.precision,
      ctx.budget_seconds, ctx.min_runs, ctx.touch);
  return o;
}

namespace {

std::string StatusWord(const PolicyResult& p) {
  switch (p.status) {
    case PolicyResult::Status::kOk:
      return "ok";
    case PolicyResult::Status::kFailed:
      return "FAILED";
    case PolicyResult::Status::kSkipped:
      return "skipped";
  }
  return "?";
}

std::string CsvEstimate(const Estimate& e) {
  if (!e.has_data()) return ",,";
  return absl::StrFormat("%.4f,%.4f,%.4f", e.median, e.lo, e.hi);
}

}  // namespace

std::string FormatCsv(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o =
      "trace,workload,policy,family,status,error,runs,attempts,failed,reruns,precise,"
      "ns_per_op,ns_per_op_lo,ns_per_op_hi,vs_malloc,vs_malloc_lo,vs_malloc_hi,"
      "cold_ns_per_op,cold_ns_per_op_lo,cold_ns_per_op_hi,warm_ns_per_op,warm_ns_per_op_lo,"
      "warm_ns_per_op_hi,peak_rss_bytes,peak_rss_lo,peak_rss_hi,tied_fastest,tied_smallest_rss,"
      "recommended,ideal_bytes,overhead,final_rss_bytes,minor_faults,major_faults,teardown_ms,"
      "ops,noise_floor,noise_floor_lo,noise_floor_hi,clock,rank_by,passes,machine,date,touch\n";
  for (const TraceReport& t : reports) {
    for (const PolicyResult& p : t.policies) {
      absl::StrAppend(
          &o, CsvField(t.trace_path), ",", CsvField(t.workload), ",", CsvField(p.name), ",",
          p.family, ",", StatusWord(p), ",", CsvField(p.failure), ",", p.runs, ",", p.attempts,
          ",", p.failed, ",", p.reruns, ",", p.precise ? 1 : 0, ",", CsvEstimate(p.ns_per_op),
          ",", CsvEstimate(p.vs_malloc), ",", CsvEstimate(p.cold_ns_per_op), ",",
          CsvEstimate(p.warm_ns_per_op), ",", CsvEstimate(p.peak_rss), ",",
          p.tied_fastest ? 1 : 0, ",", p.tied_smallest_rss ? 1 : 0, ",",
          t.verdict.recommended == p.name ? 1 : 0, ",", t.peak_live_bytes, ",",
          absl::StrFormat("%.4f,%.0f,%.0f,%.0f,%.4f", p.overhead, p.final_rss, p.minor_faults,
                          p.major_faults, p.teardown_ms),
          ",", t.ops, ",", CsvEstimate(t.noise_floor), ",", ctx.clock, ",", ctx.rank_by, ",",
          ctx.passes, ",", CsvField(ctx.machine), ",", ctx.date, ",", ctx.touch, "\n");
    }
  }
  return o;
}

std::string FormatCsvRuns(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o =
      "trace,policy,round,pass,kind,wall_s,cpu_s,wall_ns_per_op,cpu_ns_per_op,minor_faults,"
      "major_faults,involuntary_switches,voluntary_switches,peak_rss_bytes,final_rss_bytes,"
      "baseline_rss_bytes,migrations,reruns,disturbed,teardown_s,ops\n";
  for (const TraceReport& t : reports) {
    for (const PolicyResult& p : t.policies) {
      for (const RunRecord& rr : p.raw) {
        const RunResult& r = rr.result;
        for (size_t i = 0; i < r.passes.size(); ++i) {
          const PassFigures& f = r.passes[i];
          const double ops = r.ops > 0 ? static_cast<double>(r.ops) : 1;
          absl::StrAppend(
              &o, CsvField(t.trace_path), ",", CsvField(p.name), ",", rr.round, ",", i, ",",
              i == 0 ? "cold" : "warm", ",",
              absl::StrFormat("%.9f,%.9f,%.4f,%.4f", f.wall_seconds, f.cpu_seconds,
                              1e9 * f.wall_seconds / ops, 1e9 * f.cpu_seconds / ops),
              ",", f.minor_faults, ",", f.major_faults, ",", f.involuntary_switches, ",",
              f.voluntary_switches, ",", r.peak_rss, ",", r.final_rss, ",", r.baseline_rss, ",",
              r.migrations, ",", rr.reruns, ",", rr.disturbed ? 1 : 0, ",",
              absl::StrFormat("%.9f", r.teardown_seconds), ",", r.ops, "\n");
        }
      }
    }
  }
  (void)ctx;
  return o;
}

namespace {

std::string JsonEstimate(const Estimate& e) {
  if (!e.has_data()) return "null";
  return absl::StrFormat("{\"median\": %.6g, \"ci95\": [%.6g, %.6g], \"n\": %d}", e.median, e.lo,
                         e.hi, e.n);
}

std::string JsonNames(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const std::string& n : names) q.push_back(JsonString(n));
  return absl::StrCat("[", absl::StrJoin(q, ", "), "]");
}

std::string JsonVerdict(const TraceReport& t) {
  const Verdict& v = t.verdict;
  return absl::StrCat("{\"fastest\": ", JsonNames(v.fastest),
                      ", \"fastest_vs_malloc\": ", JsonEstimate(v.fastest_vs_malloc),
                      ", \"smallest_rss\": ", JsonNames(v.smallest_rss),
                      ", \"recommended\": ",
                      v.recommended.empty() ? "null" : JsonString(v.recommended),
                      ", \"rule\": ", JsonString(v.rule), ", \"sentence\": ",
                      JsonString(t.no_memory_ops ? NoOpsLine(t) : v.sentence), "}");
}

std::string JsonRun(const RunRecord& rr) {
  const RunResult& r = rr.result;
  std::vector<std::string> passes;
  for (size_t i = 0; i < r.passes.size(); ++i) {
    const PassFigures& f = r.passes[i];
    passes.push_back(absl::StrFormat(
        "{\"pass\": %d, \"kind\": \"%s\", \"wall_s\": %.9f, \"cpu_s\": %.9f, \"minor_faults\": "
        "%d, \"major_faults\": %d, \"involuntary_switches\": %d, \"voluntary_switches\": %d}",
        i, i == 0 ? "cold" : "warm", f.wall_seconds, f.cpu_seconds, f.minor_faults,
        f.major_faults, f.involuntary_switches, f.voluntary_switches));
  }
  return absl::StrFormat(
      "{\"round\": %d, \"reruns\": %d, \"disturbed\": %s, \"peak_rss_bytes\": %d, "
      "\"final_rss_bytes\": %d, \"baseline_rss_bytes\": %d, \"migrations\": %d, "
      "\"teardown_s\": %.9f, \"passes\": [%s]}",
      rr.round, rr.reruns, rr.disturbed ? "true" : "false", r.peak_rss, r.final_rss,
      r.baseline_rss, r.migrations, r.teardown_seconds, absl::StrJoin(passes, ", "));
}

}  // namespace

std::string FormatJson(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o = "{\n";
  absl::StrAppend(&o, "  \"machine\": ", JsonString(ctx.machine), ",\n  \"date\": ",
                  JsonString(ctx.date), ",\n  \"touch\": ", JsonString(ctx.touch),
                  ",\n  \"clock\": ", JsonString(ctx.clock), ",\n  \"rank_by\": ",
                  JsonString(ctx.rank_by), ",\n  \"passes\": ", ctx.passes,
                  absl::StrFormat(",\n  \"precision\": %.4f,\n  \"budget_s\": %.3f", ctx.precision,
                                  ctx.budget_seconds),
                  ",\n  \"min_runs\": ", ctx.min_runs, ",\n");
  if (reports.size() == 1) absl::StrAppend(&o, "  \"verdict\": ", JsonVerdict(reports[0]), ",\n");
  absl::StrAppend(&o, "  \"traces\": [\n");
  std::vector<std::string> traces;
  for (const TraceReport& t : reports) {
    std::string s = "    {\n";
    absl::StrAppend(&s, "      \"trace\": ", JsonString(t.trace_path), ",\n      \"workload\": ",
                    JsonString(t.workload), ",\n      \"ops\": ", t.ops,
                    ",\n      \"arena_events\": ", t.arena_events, ",\n      \"threads\": ",
                    t.threads, ",\n      \"ideal_peak_live_bytes\": ", t.peak_live_bytes,
                    ",\n      \"peak_live_objects\": ", t.peak_live_objects,
                    ",\n      \"cut_short\": ", JsonString(t.cut_short),
                    ",\n      \"no_memory_ops\": ", t.no_memory_ops ? "true" : "false",
                    ",\n      \"rounds\": ", t.rounds, ",\n      \"failed_policies\": ",
                    t.failed_policies, ",\n      \"noise_floor\": ", JsonEstimate(t.noise_floor),
                    absl::StrFormat(",\n      \"disturbed\": {\"runs\": %d, \"disturbed\": %d, "
                                    "\"kept\": %d}",
                                    t.disturbance.runs, t.disturbance.disturbed,
                                    t.disturbance.kept),
                    ",\n      \"verdict\": ", JsonVerdict(t), ",\n      \"policies\": [\n");
    std::vector<std::string> ps;
    for (const PolicyResult& p : t.policies) {
      std::vector<std::string> runs;
      for (const RunRecord& rr : p.raw) runs.push_back(JsonRun(rr));
      ps.push_back(absl::StrCat(
          "        {\"policy\": ", JsonString(p.name), ", \"family\": ", JsonString(p.family),
          ", \"note\": ", JsonString(p.note), ", \"status\": ", JsonString(StatusWord(p)),
          ", \"error\": ", JsonString(p.failure), ", \"runs_ok\": ", p.runs,
          ", \"attempts\": ", p.attempts, ", \"runs_failed\": ", p.failed,
          ", \"reruns\": ", p.reruns, ", \"disturbed_kept\": ", p.disturbed_kept,
          ", \"stop\": ", JsonString(p.stop_reason), ", \"precise\": ",
          p.precise ? "true" : "false", ",\n         \"ns_per_op\": ", JsonEstimate(p.ns_per_op),
          ", \"vs_malloc\": ", JsonEstimate(p.vs_malloc),
          ",\n         \"cold_ns_per_op\": ", JsonEstimate(p.cold_ns_per_op),
          ", \"cold_vs_malloc\": ", JsonEstimate(p.cold_vs_malloc),
          ",\n         \"warm_ns_per_op\": ", JsonEstimate(p.warm_ns_per_op),
          ", \"warm_vs_malloc\": ", JsonEstimate(p.warm_vs_malloc),
          ",\n         \"peak_rss_bytes\": ", JsonEstimate(p.peak_rss),
          ", \"tied_fastest\": ", p.tied_fastest ? "true" : "false",
          ", \"tied_smallest_rss\": ", p.tied_smallest_rss ? "true" : "false",
          absl::StrFormat(", \"overhead\": %.4f, \"final_rss_bytes\": %.0f, \"minor_faults\": "
                          "%.0f, \"major_faults\": %.0f, \"teardown_ms\": %.4f",
                          p.overhead, p.final_rss, p.minor_faults, p.major_faults,
                          p.teardown_ms),
          ",\n         \"rss_course_bytes\": [", absl::StrJoin(p.rss_course, ","), "]",
          ",\n         \"runs\": [", absl::StrJoin(runs, ",\n                  "), "]}"));
    }
    absl::StrAppend(&s, absl::StrJoin(ps, ",\n"), "\n      ]\n    }");
    traces.push_back(s);
  }
  absl::StrAppend(&o, absl::StrJoin(traces, ",\n"), "\n  ]\n}\n");
  return o;
}

}  // namespace alloctrace
