#include "alloctrace/replayer/reports/in_situ_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/json.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/replayer/verdict/adopt.h"

namespace alloctrace {
namespace {

std::string TimeWords(const std::string& clock) {
  return clock == "wall" ? "wall time" : "CPU time (user + system)";
}

std::string Sec(const Estimate& e) {
  if (!e.has_data()) return "-";
  return e.median >= 10 ? absl::StrFormat("%.1f", e.median) : absl::StrFormat("%.3f", e.median);
}
std::string Ci(const Estimate& e, const char* fmt) {
  if (!e.has_data()) return "-";
  return absl::StrFormat(fmt, e.lo, e.hi);
}
std::string Times(const Estimate& e) {
  if (!e.has_data()) return "-";
  return absl::StrFormat("%.2fx [%.2f, %.2f]", e.median, e.lo, e.hi);
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

// `text` in lines of at most 80 columns (a longer word stands alone), each
// after `indent` spaces.
std::string Wrap80(const std::string& text, size_t indent) {
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

std::string EstimateJson(const Estimate& e) {
  if (!e.has_data()) return "null";
  return absl::StrFormat("{\"median\": %.6g, \"ci95\": [%.6g, %.6g]}", e.median, e.lo, e.hi);
}

}  // namespace

std::string WithInSitu(const std::string& format, const std::string& text, const InSituSummary& s,
                       const TraceReport* replay) {
  if (format == "table")
    return absl::StrCat(text, text.empty() ? "" : "\n", InSituTable(s, replay));
  if (format == "markdown") return absl::StrCat(text, InSituMarkdown(s, replay));
  if (format == "csv" || format == "csv-runs") return InSituCsv(s, replay);
  if (format == "json") {
    return replay != nullptr ? text : absl::StrCat("{\"in_situ\": ", InSituJson(s), "}\n");
  }
  if (format == "html") {
    const std::string section = InSituHtml(s, replay);
    const size_t body = text.rfind("</body>");
    if (replay == nullptr || body == std::string::npos) {
      return absl::StrCat(
          "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>alloctrace "
          "in situ</title></head><body>",
          section, "</body></html>\n");
    }
    return absl::StrCat(text.substr(0, body), section, text.substr(body));
  }
  return text;
}

std::string InSituTable(const InSituSummary& s, const TraceReport* replay) {
  std::string o = absl::StrCat("IN SITU: ", absl::StrJoin(s.argv, " "), "\n");
  absl::StrAppend(&o, Wrap80(s.sentence, 2));
  const bool ref_failed = std::any_of(s.policies.begin(), s.policies.end(), [](const auto& p) {
    return p.reference && p.status == RunStatus::kFailed;
  });
  const char* how = ref_failed       ? "its first run failed: instrumentation unknown"
                    : s.instrumented ? "instrumented: ALLOCTRACE_POLICY"
                                     : "not instrumented: mallocs only";
  absl::StrAppendFormat(&o, "  reference %s (%s); %d round%s in %.1f s; program output: %s\n",
                        s.reference, how, s.rounds, s.rounds == 1 ? "" : "s", s.wall_seconds,
                        s.log_path);
  absl::StrAppendFormat(&o, "%-30s %5s %7s %7s %-17s %-17s %7s %3s\n", "policy", "rplay", "wall s",
                        "cpu s", "95% CI", "x ref [95% CI]", "peakRSS", "n");
  for (const InSituPolicy& p : s.policies) {
    const std::string rank = ReplayRank(replay, p.name == s.reference ? "malloc" : p.name);
    if (!p.ok()) {
      absl::StrAppendFormat(&o, "%-30s %5s %s %s\n", p.name, rank,
                            p.status == RunStatus::kFailed ? "FAILED" : "skipped", p.failure);
      for (const std::string& l : p.stderr_tail) absl::StrAppend(&o, "    stderr: ", l, "\n");
      continue;
    }
    absl::StrAppendFormat(&o, "%-30s %5s %7s %7s%s%-17s %-17s %7s %3d\n", p.name, rank,
                          Sec(p.wall_s), Sec(p.cpu_s), p.tied_fastest ? "*" : " ",
                          Ci(p.ranked, "[%.3f, %.3f]"),
                          p.reference ? "(reference)" : Times(p.vs_reference),
                          Mib(p.peak_rss_bytes.median), static_cast<int>(p.runs.size()));
  }
  absl::StrAppend(
      &o,
      Wrap80(absl::StrCat("rplay: the policy's rank in the replay above; wall s, cpu s (user + "
                          "system): medians over the program's runs; 95% CI: of the ranked one (",
                          WordOf(kTimingClockWords, s.clock),
                          "); x ref: the reference's over this one's, paired by round (>1 faster); "
                          "peakRSS: ru_maxrss; * tied fastest."),
             2));
  return o;
}

std::string InSituMarkdown(const InSituSummary& s, const TraceReport* replay) {
  std::string o = absl::StrCat("### In situ: `", absl::StrJoin(s.argv, " "),
                               "`\n\n**Verdict (in "
                               "situ):** ",
                               s.sentence, "\n\nReference: ", s.reference, "; program output: `",
                               s.log_path, "`.\n\n");
  absl::StrAppend(
      &o,
      "| policy | replay rank | replay ns/op | in-situ wall s [95% CI] | cpu s "
      "| x reference | peak RSS | runs | status |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    absl::StrAppend(
        &o, "| ", p.name, p.tied_fastest ? " **\\***" : "", " | ",
        ReplayRank(replay, r != nullptr ? r->name : p.name), " | ",
        r != nullptr && r->ok() && r->ns_per_op.has_data()
            ? absl::StrFormat("%.1f", r->ns_per_op.median)
            : "-",
        " | ", Sec(p.wall_s), " ", Ci(p.wall_s, "[%.3f, %.3f]"), " | ", Sec(p.cpu_s), " | ",
        p.reference ? "reference" : Times(p.vs_reference), " | ",
        p.ok() ? Mib(p.peak_rss_bytes.median) : "-", " | ", p.runs.size(), " | ",
        p.ok() ? "ok" : absl::StrCat(WordOf(kRunStatusWords, p.status), ": ", p.failure), " |\n");
  }
  return o + "\n";
}

std::string InSituCsv(const InSituSummary& s, const TraceReport* replay) {
  std::string o =
      "policy,replay_rank,replay_ns_per_op,replay_vs_malloc,in_situ_wall_s,in_situ_wall_lo,"
      "in_situ_wall_hi,in_situ_cpu_s,in_situ_vs_reference,in_situ_peak_rss_bytes,in_situ_runs,"
      "in_situ_status,tied_fastest,reference\n";
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    const bool rok = r != nullptr && r->ok() && r->ns_per_op.has_data();
    absl::StrAppendFormat(
        &o, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%d,%d\n", p.name,
        ReplayRank(replay, r != nullptr ? r->name : p.name),
        rok ? absl::StrFormat("%.4g", r->ns_per_op.median) : "",
        rok && r->vs_malloc.has_data() ? absl::StrFormat("%.4g", r->vs_malloc.median) : "",
        p.ok() ? absl::StrFormat("%.6g", p.wall_s.median) : "",
        p.ok() ? absl::StrFormat("%.6g", p.wall_s.lo) : "",
        p.ok() ? absl::StrFormat("%.6g", p.wall_s.hi) : "",
        p.ok() ? absl::StrFormat("%.6g", p.cpu_s.median) : "",
        p.vs_reference.has_data() ? absl::StrFormat("%.4g", p.vs_reference.median) : "",
        p.ok() ? absl::StrFormat("%.0f", p.peak_rss_bytes.median) : "",
        static_cast<int>(p.runs.size()), WordOf(kRunStatusWords, p.status), p.tied_fastest,
        p.reference);
  }
  return o;
}

std::string InSituPolicyJson(const InSituSummary& s, const std::string& policy) {
  const std::string name = InSituNameOf(policy, s.reference);
  const InSituPolicy* p = nullptr;
  for (const InSituPolicy& q : s.policies) {
    if (q.name == name) p = &q;
  }
  if (p == nullptr) return "null";
  return absl::StrCat(
      "{\"wall_s\": ", EstimateJson(p->wall_s), ", \"cpu_s\": ", EstimateJson(p->cpu_s),
      ", \"peak_rss_bytes\": ",
      p->ok() ? absl::StrFormat("%.0f", p->peak_rss_bytes.median) : "null",
      ", \"vs_reference\": ", EstimateJson(p->vs_reference),
      absl::StrFormat(", \"minor_faults\": %.0f, \"major_faults\": %.0f", p->minor_faults,
                      p->major_faults),
      ", \"runs\": ", p->runs.size(),
      ", \"status\": ", JsonString(WordOf(kRunStatusWords, p->status)),
      ", \"error\": ", JsonString(p->failure), ", \"stderr_tail\": [",
      absl::StrJoin(p->stderr_tail, ", ",
                    [](std::string* out, const std::string& l) { out->append(JsonString(l)); }),
      "]}");
}

std::string InSituJson(const InSituSummary& s) {
  std::vector<std::string> ps;
  for (const InSituPolicy& p : s.policies) {
    ps.push_back(absl::StrCat("{\"policy\": ", JsonString(p.name),
                              ", \"in_situ\": ", InSituPolicyJson(s, p.name), "}"));
  }
  return absl::StrCat(
      "{\"argv\": [",
      absl::StrJoin(s.argv, ", ",
                    [](std::string* out, const std::string& a) { out->append(JsonString(a)); }),
      "], \"log\": ", JsonString(s.log_path),
      ", \"instrumented\": ", s.instrumented ? "true" : "false",
      ", \"reference\": ", JsonString(s.reference),
      ", \"clock\": ", JsonString(WordOf(kTimingClockWords, s.clock)), ", \"rounds\": ", s.rounds,
      absl::StrFormat(", \"wall_s\": %.3f", s.wall_seconds), ", \"in_situ_fastest\": [",
      absl::StrJoin(s.fastest, ", ",
                    [](std::string* out, const std::string& a) { out->append(JsonString(a)); }),
      "], \"recommended\": ", s.recommended.empty() ? "null" : JsonString(s.recommended),
      ", \"replay_pick\": ", s.replay_pick.empty() ? "null" : JsonString(s.replay_pick),
      ", \"replay_pick_held\": ",
      s.replay_pick.empty() ? "null"
      : s.replay_pick_held  ? "true"
                            : "false",
      ", \"pick_vs_best\": ", EstimateJson(s.pick_vs_best), ", \"rule\": ", JsonString(s.rule),
      ", \"sentence\": ", JsonString(s.sentence), ",\n  \"policies\": [\n    ",
      absl::StrJoin(ps, ",\n    "), "]}");
}

std::string InSituHtml(const InSituSummary& s, const TraceReport* replay) {
  using charts::Escape;
  std::string o = absl::StrCat("<section class=\"in-situ\"><h2>In situ: <code>",
                               Escape(absl::StrJoin(s.argv, " ")),
                               "</code></h2><p><b>Verdict "
                               "(in situ):</b> ",
                               Escape(s.sentence), "</p><p>Reference ", Escape(s.reference),
                               "; program output: <code>", Escape(s.log_path), "</code></p>");
  absl::StrAppend(&o,
                  "<table><tr><th>policy</th><th>replay rank</th><th>replay ns/op</th>"
                  "<th>in-situ wall s [95% CI]</th><th>cpu s</th><th>x reference</th>"
                  "<th>peak RSS</th><th>runs</th><th>status</th></tr>");
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    absl::StrAppend(
        &o, "<tr><td>", Escape(p.name), p.tied_fastest ? " *" : "", "</td><td>",
        ReplayRank(replay, r != nullptr ? r->name : p.name), "</td><td>",
        r != nullptr && r->ok() && r->ns_per_op.has_data()
            ? absl::StrFormat("%.1f", r->ns_per_op.median)
            : "-",
        "</td><td>", Sec(p.wall_s), " ", Ci(p.wall_s, "[%.3f, %.3f]"), "</td><td>", Sec(p.cpu_s),
        "</td><td>", p.reference ? "reference" : Times(p.vs_reference), "</td><td>",
        p.ok() ? Mib(p.peak_rss_bytes.median) : "-", "</td><td>", p.runs.size(), "</td><td>",
        Escape(p.ok() ? "ok" : absl::StrCat(WordOf(kRunStatusWords, p.status), ": ", p.failure)),
        "</td></tr>");
  }
  return o + "</table></section>\n";
}

}  // namespace alloctrace
