// Aggregates repeated runs per policy and renders the comparison as an
// 80-column table, Markdown, CSV or JSON.
#ifndef ALLOCTRACE_REPLAYER_REPORT_H_
#define ALLOCTRACE_REPLAYER_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "replayer/replay_loop.h"
#include "replayer/replay_program.h"

namespace alloctrace {

struct PolicyRuns {
  std::string name;
  std::string family;  // "baseline", "article", "ours", "external"
  std::vector<RunResult> runs;
  std::string error;    // why the policy has no figures (crash, failure)
  std::string skipped;  // why it was not run (e.g. library not installed)
};

// Median-of-runs figures for one policy.
struct PolicySummary {
  std::string name, family, error, skipped;
  int runs = 0;
  double total_ms = 0;       // median time of the timed loop
  double ns_per_op = 0;      // median
  double ns_per_op_min = 0;
  double spread_pct = 0;     // (max - min) / median
  double teardown_ms = 0;    // median
  double peak_rss = 0;       // median bytes above the child's baseline
  double final_rss = 0;
  double minor_faults = 0;   // median
  double major_faults = 0;
  double vs_malloc = 0;      // malloc's ns/op / this ns/op (>1: faster)
  double overhead = 0;       // peak RSS / ideal peak live bytes
  std::vector<int64_t> rss_course;  // of the median-time run
};

struct TraceReport {
  std::string trace_path;
  std::string workload;
  uint64_t ops = 0;           // memory ops per run
  uint64_t arena_events = 0;
  uint64_t threads = 0;
  uint64_t peak_live_bytes = 0;
  uint64_t peak_live_objects = 0;
  std::string cut_short;
  std::vector<PolicySummary> policies;  // fastest first, failures last
  double floor_ns_per_op = -1;          // the bump allocator's, if run
};

struct ReportContext {
  std::string machine;
  std::string date;
  int repeat = 0;
  std::string touch;
};

TraceReport Summarize(const ReplayProgram& program, const std::vector<PolicyRuns>& runs);

std::string FormatTable(const std::vector<TraceReport>& reports, const ReportContext& ctx);
std::string FormatMarkdown(const std::vector<TraceReport>& reports, const ReportContext& ctx);
std::string FormatCsv(const std::vector<TraceReport>& reports, const ReportContext& ctx);
std::string FormatJson(const std::vector<TraceReport>& reports, const ReportContext& ctx);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORT_H_
