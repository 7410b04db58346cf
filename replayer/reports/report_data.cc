// The reports for programs (CSV per policy, CSV per run and pass, JSON),
// written from the summary (replayer/verdict/summary.h); declared in report.h.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/json.h"
#include "alloctrace/replayer/reports/in_situ_report.h"
#include "alloctrace/replayer/reports/report.h"

namespace alloctrace {
namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// "eliminated" for a policy the race stopped before any run completed: ok
// (not failed), but without figures (its reason is in `error`).
std::string StatusWord(const PolicyResult& p) {
  switch (p.status) {
    case PolicyResult::Status::kOk:
      return p.eliminated && p.runs == 0 ? "eliminated" : "ok";
    case PolicyResult::Status::kFailed:
      return "FAILED";
    case PolicyResult::Status::kSkipped:
      return "skipped";
  }
  return "?";
}

// The `error` column and field: the failure, or why a policy without
// figures was eliminated.
std::string ErrorWords(const PolicyResult& p) {
  return StatusWord(p) == "eliminated" ? p.stop_reason : p.failure;
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
      "ops,noise_floor,noise_floor_lo,noise_floor_hi,clock,rank_by,passes,machine,date,touch,"
      "cpp_type,header,bazel_target,cmake_target,adopt_how\n";
  for (const TraceReport& t : reports) {
    for (const PolicyResult& p : t.policies) {
      absl::StrAppend(
          &o, CsvField(t.trace_path), ",", CsvField(t.workload), ",", CsvField(p.name), ",",
          WordOf(allocators::kFamilyWords, p.family), ",", StatusWord(p), ",",
          CsvField(ErrorWords(p)), ",", p.runs, ",", p.attempts, ",", p.failed, ",", p.reruns, ",",
          p.precise ? 1 : 0, ",", CsvEstimate(p.ns_per_op), ",", CsvEstimate(p.vs_malloc), ",",
          CsvEstimate(p.cold_ns_per_op), ",", CsvEstimate(p.warm_ns_per_op), ",",
          CsvEstimate(p.peak_rss), ",", p.tied_fastest ? 1 : 0, ",", p.tied_smallest_rss ? 1 : 0,
          ",", t.verdict.recommended == p.name ? 1 : 0, ",", t.peak_live_bytes, ",",
          p.runs > 0 ? absl::StrFormat("%.4f,%.0f,%.0f,%.0f,%.4f", p.overhead, p.final_rss,
                                       p.minor_faults, p.major_faults, p.teardown_ms)
                     : ",,,,",
          ",", t.ops, ",", CsvEstimate(t.noise_floor), ",", WordOf(kTimingClockWords, t.clock), ",",
          WordOf(kRankByWords, ctx.rank_by), ",", ctx.passes, ",", CsvField(ctx.machine), ",",
          ctx.date, ",", WordOf(kTouchWords, ctx.touch), ",", CsvField(p.adopt.cpp_type), ",",
          CsvField(p.adopt.header), ",", CsvField(p.adopt.bazel_target), ",",
          CsvField(p.adopt.cmake_target), ",", CsvField(p.adopt.how), "\n");
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
          absl::StrAppend(&o, CsvField(t.trace_path), ",", CsvField(p.name), ",", rr.round, ",", i,
                          ",", i == 0 ? "cold" : "warm", ",",
                          absl::StrFormat("%.9f,%.9f,%.4f,%.4f", f.wall_seconds, f.cpu_seconds,
                                          1e9 * f.wall_seconds / ops, 1e9 * f.cpu_seconds / ops),
                          ",", f.minor_faults, ",", f.major_faults, ",", f.involuntary_switches,
                          ",", f.voluntary_switches, ",", r.peak_rss, ",", r.final_rss, ",",
                          r.baseline_rss, ",", r.migrations, ",", rr.reruns, ",",
                          rr.disturbed ? 1 : 0, ",", absl::StrFormat("%.9f", r.teardown_seconds),
                          ",", r.ops, "\n");
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

// {"policy", "cpp_type", "header", "bazel_target", "cmake_target"} for a
// type to paste, {"policy", "how"} for a malloc.
std::string JsonAdopt(const std::string& policy, const allocators::Adoption& a) {
  if (a.cpp_type.empty()) {
    return absl::StrCat("{\"policy\": ", JsonString(policy), ", \"how\": ", JsonString(a.how), "}");
  }
  return absl::StrCat(
      "{\"policy\": ", JsonString(policy), ", \"cpp_type\": ", JsonString(a.cpp_type),
      ", \"header\": ", JsonString(a.header), ", \"bazel_target\": ", JsonString(a.bazel_target),
      ", \"cmake_target\": ", JsonString(a.cmake_target),
      a.how.empty() ? "" : absl::StrCat(", \"how\": ", JsonString(a.how)), "}");
}

// With --confirm: the in-situ fields of the verdict.
std::string InSituVerdictJson(const InSituSummary& s) {
  return absl::StrCat(", \"in_situ_fastest\": ", JsonNames(s.fastest), ", \"replay_pick\": ",
                      s.replay_pick.empty() ? "null" : JsonString(s.replay_pick),
                      ", \"replay_pick_held\": ", s.replay_pick_held ? "true" : "false");
}

std::string JsonVerdict(const TraceReport& t) {
  const Verdict& v = t.verdict;
  return absl::StrCat(
      "{\"fastest\": ", JsonNames(v.fastest),
      ", \"fastest_vs_malloc\": ", JsonEstimate(v.fastest_vs_malloc),
      ", \"smallest_rss\": ", JsonNames(v.smallest_rss),
      ", \"recommended\": ", v.recommended.empty() ? "null" : JsonString(v.recommended),
      ", \"rule\": ", JsonString(v.rule),
      ", \"passed_over\": ", v.passed_over.empty() ? "null" : JsonString(v.passed_over),
      ", \"sentence\": ", JsonString(t.no_memory_ops ? NoOpsLine(t) : v.sentence),
      ", \"adopt\": ", v.recommended.empty() ? "null" : JsonAdopt(v.recommended, v.adopt),
      t.in_situ == nullptr ? "" : InSituVerdictJson(*t.in_situ), "}");
}

std::string JsonRun(const RunRecord& rr) {
  const RunResult& r = rr.result;
  std::vector<std::string> passes;
  for (size_t i = 0; i < r.passes.size(); ++i) {
    const PassFigures& f = r.passes[i];
    passes.push_back(absl::StrFormat(
        "{\"pass\": %d, \"kind\": \"%s\", \"wall_s\": %.9f, \"cpu_s\": %.9f, \"minor_faults\": "
        "%d, \"major_faults\": %d, \"involuntary_switches\": %d, \"voluntary_switches\": %d, "
        "\"wait_s\": %.9f, \"thread_cpu_s\": [%s]}",
        i, i == 0 ? "cold" : "warm", f.wall_seconds, f.cpu_seconds, f.minor_faults, f.major_faults,
        f.involuntary_switches, f.voluntary_switches, f.wait_seconds,
        absl::StrJoin(f.thread_cpu_seconds, ", ",
                      [](std::string* out, double c) { absl::StrAppendFormat(out, "%.9f", c); })));
  }
  return absl::StrFormat(
      "{\"round\": %d, \"reruns\": %d, \"disturbed\": %s, \"peak_rss_bytes\": %d, "
      "\"final_rss_bytes\": %d, \"baseline_rss_bytes\": %d, \"migrations\": %d, "
      "\"teardown_s\": %.9f, \"passes\": [%s]}",
      rr.round, rr.reruns, rr.disturbed ? "true" : "false", r.peak_rss, r.final_rss, r.baseline_rss,
      r.migrations, r.teardown_seconds, absl::StrJoin(passes, ", "));
}

}  // namespace

std::string FormatJson(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
  std::string o = "{\n";
  absl::StrAppend(&o, "  \"machine\": ", JsonString(ctx.machine),
                  ",\n  \"date\": ", JsonString(ctx.date),
                  ",\n  \"touch\": ", JsonString(WordOf(kTouchWords, ctx.touch)),
                  ",\n  \"clock\": ", JsonString(WordOf(kTimingClockWords, ctx.clock)),
                  ",\n  \"rank_by\": ", JsonString(WordOf(kRankByWords, ctx.rank_by)),
                  ",\n  \"passes\": ", ctx.passes,
                  absl::StrFormat(",\n  \"precision\": %.4f,\n  \"budget_s\": %.3f", ctx.precision,
                                  ctx.budget_seconds),
                  ",\n  \"min_runs\": ", ctx.min_runs, ",\n");
  if (reports.size() == 1) absl::StrAppend(&o, "  \"verdict\": ", JsonVerdict(reports[0]), ",\n");
  absl::StrAppend(&o, "  \"traces\": [\n");
  std::vector<std::string> traces;
  for (const TraceReport& t : reports) {
    std::string s = "    {\n";
    absl::StrAppend(
        &s, "      \"trace\": ", JsonString(t.trace_path),
        ",\n      \"workload\": ", JsonString(t.workload), ",\n      \"ops\": ", t.ops,
        ",\n      \"arena_events\": ", t.arena_events, ",\n      \"threads\": ", t.threads,
        ",\n      \"ideal_peak_live_bytes\": ", t.peak_live_bytes,
        ",\n      \"peak_live_objects\": ", t.peak_live_objects,
        ",\n      \"cut_short\": ", JsonString(t.cut_short),
        ",\n      \"one_heap_note\": ", JsonString(OneHeapNote(t)),
        ",\n      \"replay_threads\": ", t.replay_threads,
        ",\n      \"sync_points\": ", t.sync_points,
        ",\n      \"cross_thread_frees\": ", t.cross_thread_frees,
        ",\n      \"clock\": ", JsonString(WordOf(kTimingClockWords, t.clock)),
        ",\n      \"per_thread_note\": ", JsonString(PerThreadNote(t)),
        ",\n      \"arena_sharing\": ", JsonString(t.arena_sharing),
        ",\n      \"arena_shape\": ", JsonString(t.arena_shape),
        ",\n      \"no_memory_ops\": ", t.no_memory_ops ? "true" : "false",
        ",\n      \"rounds\": ", t.rounds, ",\n      \"failed_policies\": ", t.failed_policies,
        ",\n      \"noise_floor\": ", JsonEstimate(t.noise_floor),
        absl::StrFormat(",\n      \"disturbed\": {\"runs\": %d, \"disturbed\": %d, "
                        "\"kept\": %d}",
                        t.disturbance.runs, t.disturbance.disturbed, t.disturbance.kept),
        ",\n      \"verdict\": ", JsonVerdict(t),
        t.in_situ == nullptr ? "" : absl::StrCat(",\n      \"in_situ\": ", InSituJson(*t.in_situ)),
        ",\n      \"policies\": [\n");
    std::vector<std::string> ps;
    for (const PolicyResult& p : t.policies) {
      std::vector<std::string> runs;
      for (const RunRecord& rr : p.raw) runs.push_back(JsonRun(rr));
      ps.push_back(absl::StrCat(
          "        {\"policy\": ", JsonString(p.name),
          ", \"family\": ", JsonString(WordOf(allocators::kFamilyWords, p.family)),
          ", \"note\": ", JsonString(p.note), ", \"status\": ", JsonString(StatusWord(p)),
          ", \"error\": ", JsonString(ErrorWords(p)),
          ",\n         \"adopt\": ", JsonAdopt(p.name, p.adopt), ",\n         ",
          "\"runs_ok\": ", p.runs, ", \"attempts\": ", p.attempts, ", \"runs_failed\": ", p.failed,
          ", \"reruns\": ", p.reruns, ", \"disturbed_kept\": ", p.disturbed_kept, ", \"stop\": ",
          JsonString(p.stop_reason), ", \"eliminated\": ", p.eliminated ? "true" : "false",
          ", \"screened_out\": ", p.screened_out ? "true" : "false", ", \"precise\": ",
          p.precise ? "true" : "false", ",\n         \"ns_per_op\": ", JsonEstimate(p.ns_per_op),
          ", \"vs_malloc\": ", JsonEstimate(p.vs_malloc), ",\n         \"cold_ns_per_op\": ",
          JsonEstimate(p.cold_ns_per_op), ", \"cold_vs_malloc\": ", JsonEstimate(p.cold_vs_malloc),
          ",\n         \"warm_ns_per_op\": ", JsonEstimate(p.warm_ns_per_op),
          ", \"warm_vs_malloc\": ", JsonEstimate(p.warm_vs_malloc),
          ",\n         \"peak_rss_bytes\": ", JsonEstimate(p.peak_rss),
          ", \"tied_fastest\": ", p.tied_fastest ? "true" : "false",
          ", \"tied_smallest_rss\": ", p.tied_smallest_rss ? "true" : "false",
          p.runs > 0 ? absl::StrFormat(", \"overhead\": %.4f, \"final_rss_bytes\": %.0f, "
                                       "\"minor_faults\": %.0f, \"major_faults\": %.0f, "
                                       "\"teardown_ms\": %.4f",
                                       p.overhead, p.final_rss, p.minor_faults, p.major_faults,
                                       p.teardown_ms)
                     : ", \"overhead\": null, \"final_rss_bytes\": null, \"minor_faults\": null, "
                       "\"major_faults\": null, \"teardown_ms\": null",
          ",\n         \"rss_course_bytes\": [", absl::StrJoin(p.rss_course, ","), "]",
          t.in_situ == nullptr
              ? ""
              : absl::StrCat(",\n         \"in_situ\": ", InSituPolicyJson(*t.in_situ, p.name)),
          ",\n         \"runs\": [", absl::StrJoin(runs, ",\n                  "), "]}"));
    }
    absl::StrAppend(&s, absl::StrJoin(ps, ",\n"), "\n      ]\n    }");
    traces.push_back(s);
  }
  absl::StrAppend(&o, absl::StrJoin(traces, ",\n"), "\n  ]\n}\n");
  return o;
}

}  // namespace alloctrace
