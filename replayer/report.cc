#include "replayer/report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/json.h"

namespace alloctrace {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

bool HasFigures(const PolicySummary& p) { return p.error.empty() && p.skipped.empty(); }

// Breaks a line longer than `width` after ", " boundaries, indenting the
// continuation lines by `indent` spaces.
std::string Wrap(const std::string& line, size_t width, size_t indent) {
  std::string out, current;
  size_t start = 0;
  while (start < line.size()) {
    size_t next = line.find(", ", start);
    next = next == std::string::npos ? line.size() : next + 2;
    const std::string piece = line.substr(start, next - start);
    if (!current.empty() && current.size() + piece.size() > width) {
      out += current.substr(0, current.find_last_not_of(' ') + 1) + "\n";
      current = std::string(indent, ' ');
    }
    current += piece;
    start = next;
  }
  return out + current;
}

}  // namespace

TraceReport Summarize(const ReplayProgram& program, const std::vector<PolicyRuns>& all) {
  TraceReport t;
  t.trace_path = program.path;
  t.workload = program.header.workload();
  t.ops = program.memory_ops();
  t.arena_events = program.arena_events;
  t.threads = program.threads;
  t.peak_live_bytes = program.peak_live_bytes;
  t.peak_live_objects = program.peak_live_objects;
  t.cut_short = program.cut_short;
  double malloc_ns = 0;
  for (const PolicyRuns& pr : all) {
    PolicySummary s;
    s.name = pr.name;
    s.family = pr.family;
    s.error = pr.error;
    s.skipped = pr.skipped;
    std::vector<double> ns, total, teardown, peak, final_rss, minflt, majflt;
    for (const RunResult& r : pr.runs) {
      if (!r.error.empty()) {
        s.error = r.error;
        continue;
      }
      ns.push_back(r.ops ? r.seconds * 1e9 / r.ops : 0);
      total.push_back(r.seconds * 1e3);
      teardown.push_back(r.teardown_seconds * 1e3);
      peak.push_back(static_cast<double>(r.peak_rss));
      final_rss.push_back(static_cast<double>(r.final_rss));
      minflt.push_back(static_cast<double>(r.minor_faults));
      majflt.push_back(static_cast<double>(r.major_faults));
    }
    s.runs = static_cast<int>(ns.size());
    if (!ns.empty()) {
      s.ns_per_op = Median(ns);
      s.total_ms = Median(total);
      s.ns_per_op_min = *std::min_element(ns.begin(), ns.end());
      const double hi = *std::max_element(ns.begin(), ns.end());
      s.spread_pct = s.ns_per_op > 0 ? 100.0 * (hi - s.ns_per_op_min) / s.ns_per_op : 0;
      s.teardown_ms = Median(teardown);
      s.peak_rss = Median(peak);
      s.final_rss = Median(final_rss);
      s.minor_faults = Median(minflt);
      s.major_faults = Median(majflt);
      s.overhead = program.peak_live_bytes > 0 ? s.peak_rss / program.peak_live_bytes : 0;
      // The course of the run whose time is the median.
      size_t best = 0;
      double best_d = std::numeric_limits<double>::max();
      size_t k = 0;
      for (const RunResult& r : pr.runs) {
        if (!r.error.empty()) continue;
        const double d = std::fabs(ns[k++] - s.ns_per_op);
        if (d < best_d) {
          best_d = d;
          best = &r - pr.runs.data();
        }
      }
      s.rss_course = pr.runs[best].rss_course;
      s.error.clear();
    } else if (s.error.empty() && s.skipped.empty()) {
      s.error = "no successful run";
    }
    if (s.name == "malloc" && HasFigures(s)) malloc_ns = s.ns_per_op;
    if (s.name == "bump" && HasFigures(s)) t.floor_ns_per_op = s.ns_per_op;
    t.policies.push_back(std::move(s));
  }
  for (PolicySummary& s : t.policies) {
    if (HasFigures(s) && malloc_ns > 0 && s.ns_per_op > 0) s.vs_malloc = malloc_ns / s.ns_per_op;
  }
  std::stable_sort(t.policies.begin(), t.policies.end(),
                   [](const PolicySummary& a, const PolicySummary& b) {
                     if (HasFigures(a) != HasFigures(b)) return HasFigures(a);
                     return a.ns_per_op < b.ns_per_op;
                   });
  return t;
}

namespace {

// The best value of each column among policies with figures. The bump
// allocator is the harness floor, not a contender, so it is left out.
struct Best {
  double ns = std::numeric_limits<double>::max();
  double rss = std::numeric_limits<double>::max();
  double faults = std::numeric_limits<double>::max();
};

Best FindBest(const TraceReport& t) {
  Best b;
  for (const PolicySummary& p : t.policies) {
    if (!HasFigures(p) || p.name == "bump") continue;
    b.ns = std::min(b.ns, p.ns_per_op);
    b.rss = std::min(b.rss, p.peak_rss);
    b.faults = std::min(b.faults, p.minor_faults);
  }
  return b;
}

std::string TraceTitle(const TraceReport& t) {
  return absl::StrFormat(
      "%s\nworkload %s: %d memory ops, %d arena events, %d thread%s\n"
      "ideal: %s peak live (%d bytes, %d objects)\n",
      t.trace_path, t.workload.empty() ? "?" : t.workload, t.ops, t.arena_events, t.threads,
      t.threads == 1 ? "" : "s", Mib(t.peak_live_bytes), t.peak_live_bytes,
      t.peak_live_objects);
}

}  // namespace

std::string FormatTable(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o;
  for (const TraceReport& t : reports) {
    absl::StrAppend(&o, TraceTitle(t));
    if (!t.cut_short.empty()) absl::StrAppend(&o, "warning: ", t.cut_short, "\n");
    size_t name_w = 6;
    for (const PolicySummary& p : t.policies) name_w = std::max(name_w, p.name.size());
    name_w = std::min<size_t>(name_w, 34);
    const Best best = FindBest(t);
    absl::StrAppendFormat(&o, "%-*s %7s %4s %6s %7s %6s %7s\n", name_w, "policy", "ns/op ",
                          "+-%", "xmallc", "peakRSS", "xideal", "minflt");
    for (const PolicySummary& p : t.policies) {
      std::string name = p.name.size() > name_w ? p.name.substr(0, name_w - 1) + "~" : p.name;
      if (!HasFigures(p)) {
        absl::StrAppendFormat(&o, "%-*s %s\n", name_w, name,
                              p.skipped.empty() ? "FAILED: " + p.error : "skipped: " + p.skipped);
        continue;
      }
      auto mark = [](bool is_best) { return is_best ? "*" : " "; };
      absl::StrAppendFormat(
          &o, "%-*s %6.1f%s %3.0f%% %6.2f %6s%s %6.2f %6.0f%s\n", name_w, name, p.ns_per_op,
          mark(p.ns_per_op == best.ns && p.name != "bump"), std::min(p.spread_pct, 999.0),
          p.vs_malloc, Mib(p.peak_rss), mark(p.peak_rss == best.rss && p.name != "bump"),
          p.overhead, p.minor_faults, mark(p.minor_faults == best.faults && p.name != "bump"));
    }
    absl::StrAppend(&o, "\n");
    if (t.floor_ns_per_op >= 0) {
      absl::StrAppendFormat(&o, "harness floor (bump allocator): %.2f ns/op\n",
                            t.floor_ns_per_op);
    }
    absl::StrAppend(&o, "\n");
  }
  absl::StrAppend(
      &o,
      "ns/op: median over runs of the timed loop / memory ops; +-%: (max-min)/median;\n"
      "xmallc: speed vs glibc malloc (>1 is faster); peakRSS: peak resident above\n"
      "the run's own baseline; xideal: peakRSS / ideal; minflt: minor page faults;\n"
      "* best in column (bump excluded). RSS course, major faults, teardown and\n"
      "every run: --format=markdown or --format=json.\n");
  absl::StrAppend(&o, Wrap("machine: " + ctx.machine, 80, 9), "\n");
  absl::StrAppendFormat(&o, "%s, %d runs per policy interleaved, touch=%s\n", ctx.date,
                        ctx.repeat, ctx.touch);
  return o;
}

std::string FormatMarkdown(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o;
  for (const TraceReport& t : reports) {
    // The heading names the trace; the title's first line would repeat it.
    const std::string title = TraceTitle(t);
    absl::StrAppend(&o, "### ", t.trace_path, "\n\n", title.substr(title.find('\n') + 1), "\n");
    absl::StrAppend(&o,
                    "| policy | family | total ms | ns/op | min ns/op | spread % | x malloc | "
                    "peak RSS | x ideal | final RSS | minor faults | major faults | teardown ms | "
                    "RSS course |\n");
    absl::StrAppend(&o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    const Best best = FindBest(t);
    for (const PolicySummary& p : t.policies) {
      if (!HasFigures(p)) {
        absl::StrAppend(&o, "| ", p.name, " | ", p.family, " | ",
                        p.skipped.empty() ? "failed: " + p.error : "skipped: " + p.skipped,
                        " | | | | | | | | | | | |\n");
        continue;
      }
      auto b = [](bool is_best, const std::string& s) { return is_best ? "**" + s + "**" : s; };
      absl::StrAppend(
          &o, "| ", p.name, " | ", p.family, " | ", absl::StrFormat("%.3f", p.total_ms), " | ",
          b(p.ns_per_op == best.ns && p.name != "bump", absl::StrFormat("%.2f", p.ns_per_op)),
          " | ", absl::StrFormat("%.2f", p.ns_per_op_min), " | ",
          absl::StrFormat("%.0f", p.spread_pct), " | ", absl::StrFormat("%.2f", p.vs_malloc),
          " | ", b(p.peak_rss == best.rss && p.name != "bump", Mib(p.peak_rss)), " | ",
          absl::StrFormat("%.2f", p.overhead), " | ", Mib(p.final_rss), " | ",
          absl::StrFormat("%.0f", p.minor_faults), " | ", absl::StrFormat("%.0f", p.major_faults),
          " | ", absl::StrFormat("%.2f", p.teardown_ms), " | ", Sparkline(p.rss_course, 16),
          " |\n");
    }
    if (t.floor_ns_per_op >= 0) {
      absl::StrAppendFormat(&o, "\nHarness floor (bump allocator): %.2f ns/op.\n",
                            t.floor_ns_per_op);
    }
    absl::StrAppend(&o, "\n");
  }
  absl::StrAppendFormat(&o, "Machine: %s. %s, %d runs per policy, touch=%s.\n", ctx.machine,
                        ctx.date, ctx.repeat, ctx.touch);
  return o;
}

std::string FormatCsv(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o =
      "trace,workload,policy,family,status,runs,total_ms_median,ns_per_op_median,ns_per_op_min,spread_pct,"
      "vs_malloc,peak_rss_bytes,ideal_bytes,overhead,final_rss_bytes,minor_faults,major_faults,"
      "teardown_ms,ops,machine,date,touch\n";
  for (const TraceReport& t : reports) {
    for (const PolicySummary& p : t.policies) {
      const std::string status =
          HasFigures(p) ? "ok" : (p.skipped.empty() ? "failed: " + p.error : "skipped: " + p.skipped);
      absl::StrAppend(&o, CsvField(t.trace_path), ",", CsvField(t.workload), ",",
                      CsvField(p.name), ",", p.family, ",", CsvField(status), ",", p.runs, ",",
                      absl::StrFormat("%.4f,", p.total_ms),
                      absl::StrFormat("%.3f,%.3f,%.1f,%.3f,%.0f,%d,%.3f,%.0f,%.0f,%.0f,%.3f",
                                      p.ns_per_op, p.ns_per_op_min, p.spread_pct, p.vs_malloc,
                                      p.peak_rss, t.peak_live_bytes, p.overhead, p.final_rss,
                                      p.minor_faults, p.major_faults, p.teardown_ms),
                      ",", t.ops, ",", CsvField(ctx.machine), ",", ctx.date, ",", ctx.touch,
                      "\n");
    }
  }
  return o;
}

std::string FormatJson(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o = "{\n";
  absl::StrAppend(&o, "  \"machine\": ", JsonString(ctx.machine), ",\n  \"date\": ",
                  JsonString(ctx.date), ",\n  \"repeat\": ", ctx.repeat, ",\n  \"touch\": ",
                  JsonString(ctx.touch), ",\n  \"traces\": [\n");
  std::vector<std::string> traces;
  for (const TraceReport& t : reports) {
    std::string s = "    {\n";
    absl::StrAppend(&s, "      \"trace\": ", JsonString(t.trace_path), ",\n      \"workload\": ",
                    JsonString(t.workload), ",\n      \"ops\": ", t.ops,
                    ",\n      \"arena_events\": ", t.arena_events, ",\n      \"threads\": ",
                    t.threads, ",\n      \"ideal_peak_live_bytes\": ", t.peak_live_bytes,
                    ",\n      \"peak_live_objects\": ", t.peak_live_objects,
                    ",\n      \"cut_short\": ", JsonString(t.cut_short),
                    ",\n      \"floor_ns_per_op\": ", absl::StrFormat("%.4f", t.floor_ns_per_op),
                    ",\n      \"policies\": [\n");
    std::vector<std::string> ps;
    for (const PolicySummary& p : t.policies) {
      ps.push_back(absl::StrCat(
          "        {\"policy\": ", JsonString(p.name), ", \"family\": ", JsonString(p.family),
          ", \"ok\": ", HasFigures(p) ? "true" : "false", ", \"error\": ", JsonString(p.error),
          ", \"skipped\": ", JsonString(p.skipped), ", \"runs\": ", p.runs,
          absl::StrFormat(", \"total_ms\": %.4f", p.total_ms),
          absl::StrFormat(", \"ns_per_op\": %.4f, \"ns_per_op_min\": %.4f, \"spread_pct\": %.2f"
                          ", \"vs_malloc\": %.4f, \"peak_rss_bytes\": %.0f, \"overhead\": %.4f"
                          ", \"final_rss_bytes\": %.0f, \"minor_faults\": %.0f"
                          ", \"major_faults\": %.0f, \"teardown_ms\": %.4f",
                          p.ns_per_op, p.ns_per_op_min, p.spread_pct, p.vs_malloc, p.peak_rss,
                          p.overhead, p.final_rss, p.minor_faults, p.major_faults,
                          p.teardown_ms),
          ", \"rss_course_bytes\": [", absl::StrJoin(p.rss_course, ","), "]}"));
    }
    absl::StrAppend(&s, absl::StrJoin(ps, ",\n"), "\n      ]\n    }");
    traces.push_back(s);
  }
  absl::StrAppend(&o, absl::StrJoin(traces, ",\n"), "\n  ]\n}\n");
  return o;
}

}  // namespace alloctrace
