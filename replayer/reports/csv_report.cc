// --format=csv (one row per policy) and --format=csv-runs (one row per run
// and pass). Under --confirm or --in_situ the CSV is the in-situ one: a row
// per policy run in the program, with the replay's columns beside it.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

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

std::string CsvEstimate(const Estimate& e) {
  if (!e.has_data()) return ",,";
  return absl::StrFormat("%.4f,%.4f,%.4f", e.median, e.lo, e.hi);
}

std::string PolicyCsv(const std::vector<TraceReport>& reports, const ReportContext& ctx) {
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
          &o, CsvField(t.trace.path), ",", CsvField(t.trace.workload), ",", CsvField(p.name), ",",
          WordOf(allocators::kFamilyWords, p.family), ",", StatusWord(p), ",",
          CsvField(ErrorWords(p)), ",", p.runs, ",", p.attempts, ",", p.failed, ",", p.reruns, ",",
          p.precise ? 1 : 0, ",", CsvEstimate(p.ns_per_op), ",", CsvEstimate(p.vs_malloc), ",",
          CsvEstimate(p.cold_ns_per_op), ",", CsvEstimate(p.warm_ns_per_op), ",",
          CsvEstimate(p.peak_rss), ",", p.tied_fastest ? 1 : 0, ",", p.tied_smallest_rss ? 1 : 0,
          ",", t.verdict.recommended == p.name ? 1 : 0, ",", t.trace.peak_live_bytes, ",",
          p.runs > 0 ? absl::StrFormat("%.4f,%.0f,%.0f,%.0f,%.4f", p.overhead, p.final_rss,
                                       p.minor_faults, p.major_faults, p.teardown_ms)
                     : ",,,,",
          ",", t.trace.memory_ops, ",", CsvEstimate(t.noise_floor), ",",
          WordOf(kTimingClockWords, t.clock), ",", WordOf(kRankByWords, ctx.rank_by), ",",
          ctx.passes, ",", CsvField(ctx.machine), ",", ctx.date, ",", TouchWord(t), ",",
          CsvField(p.adopt.cpp_type), ",", CsvField(p.adopt.header), ",",
          CsvField(p.adopt.bazel_target), ",", CsvField(p.adopt.cmake_target), ",",
          CsvField(p.adopt.how), "\n");
    }
  }
  return o;
}

std::string RunsCsv(const std::vector<TraceReport>& reports) {
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
          absl::StrAppend(&o, CsvField(t.trace.path), ",", CsvField(p.name), ",", rr.round, ",", i,
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
  return o;
}

std::string InSituCsv(const InSituSummary& s, const TraceReport* replay) {
  std::string o =
      "policy,replay_rank,replay_ns_per_op,replay_vs_malloc,in_situ_wall_s,in_situ_wall_lo,"
      "in_situ_wall_hi,in_situ_cpu_s,in_situ_vs_reference,in_situ_peak_rss_bytes,in_situ_runs,"
      "in_situ_status,tied_fastest,reference,eliminated,stop\n";
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    const bool rok = r != nullptr && r->ok() && r->ns_per_op.has_data();
    absl::StrAppendFormat(
        &o, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%d,%d,%d,%s\n", p.name,
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
        p.reference, p.eliminated, CsvField(p.stop_reason));
  }
  return o;
}

// The in-situ CSV where there are in-situ runs; "" if none.
std::string InSituCsvOf(const ReportInput& in) {
  if (in.in_situ_only != nullptr) return InSituCsv(*in.in_situ_only, nullptr);
  if (!in.reports.empty() && in.reports[0].in_situ != nullptr) {
    return InSituCsv(*in.reports[0].in_situ, &in.reports[0]);
  }
  return "";
}

}  // namespace

std::string CsvClassesReport(const ReportInput& in) {
  std::string o =
      "trace,class,id,tagged,share,memory_ops,arenas,shared_arenas,threads,policy,searched,held,"
      "contribution,contribution_lo,contribution_hi,contribution_n,cpp_type,alias,note\n";
  for (const TraceReport& t : in.reports) {
    if (t.per_container == nullptr) continue;
    const PerContainerVerdict& v = *t.per_container;
    for (const ClassVerdict& c : v.classes) {
      absl::StrAppend(
          &o, CsvField(t.trace.path), ",", CsvField(c.facts.def.name), ",", c.facts.def.id, ",",
          c.facts.def.tagged ? 1 : 0, ",", absl::StrFormat("%.4f", c.facts.share), ",",
          c.facts.memory_ops, ",", c.facts.arenas, ",", c.facts.shared_arenas, ",",
          c.facts.threads.size(), ",",
          CsvField(c.policy == kHeapPolicy ? absl::StrCat("heap:", v.heap) : c.policy), ",",
          c.searched ? 1 : 0, ",", CsvField(c.held), ",", CsvEstimate(c.contribution), ",",
          c.contribution.has_data() ? std::to_string(c.contribution.n) : "", ",",
          CsvField(c.adopt.cpp_type), ",", CsvField(c.alias), ",", CsvField(c.note), "\n");
    }
  }
  return o;
}

std::string CsvReport(const ReportInput& in) {
  const std::string in_situ = InSituCsvOf(in);
  return in_situ.empty() ? PolicyCsv(in.reports, in.ctx) : in_situ;
}

std::string CsvRunsReport(const ReportInput& in) {
  const std::string in_situ = InSituCsvOf(in);
  return in_situ.empty() ? RunsCsv(in.reports) : in_situ;
}

}  // namespace alloctrace
