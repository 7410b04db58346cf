// The replayer's HTML report (--format=html): one self-contained page
// (inline CSS and SVG, nothing loaded from elsewhere) with, per trace, the
// verdict (each fact once), the memory profile (live bytes from the trace
// and the RSS courses of the policies the verdict names and malloc; every
// other policy's in a folded panel of its own), ns/op per policy with its
// interval and the tied group (framed on the main group, far slower ones
// past a break), speed against peak RSS with the Pareto front (every point
// numbered by rank and keyed), the article's policy effects as small
// multiples (dimensions compared in two rows or more) and the full table;
// over several traces, a trace x policy heat map of speed-up against malloc
// and a table.
//
// Drawing reads an HtmlTrace per trace: a view of the replayer's results
// (TraceReport) and of the trace itself (ReplayProgram: header, live bytes),
// made by HtmlViewOf, so the charts do not depend on how the statistics are
// laid out. Every string from a trace, the command line or a policy name is
// escaped. Pure functions; no I/O.
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_REPORT_HTML_H_
#define ALLOCTRACE_REPLAYER_REPORTS_REPORT_HTML_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/measure/measured_trace.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

struct PerContainerVerdict;  // verdict/per_container_verdict.h

// A figure with, when the statistics give one, its interval.
struct HtmlEstimate {
  double value = NAN;
  double lo = NAN, hi = NAN;
  bool has_interval() const { return std::isfinite(lo) && std::isfinite(hi); }
  bool has_value() const { return std::isfinite(value); }
};

struct HtmlPolicy {
  std::string name, family;
  std::string adopt;  // the C++ type to paste and where it comes from, or how
  bool ok = false;
  std::string status;   // when not ok: "FAILED: ...", "skipped: ..." or "eliminated ..."
  bool failed = false;  // its status is RunStatus::kFailed
  int runs = 0;
  HtmlEstimate ns_per_op, vs_malloc, peak_rss;
  double overhead = NAN;  // peak RSS / ideal
  double minor_faults = NAN;
  bool tied_fastest = false;
  bool floor = false;               // the harness floor (bump), not a contender
  bool reference = false;           // the reference the ratios are to (glibc malloc)
  std::vector<int64_t> rss_course;  // bytes above baseline, evenly over the ops
};

struct HtmlVerdict {
  std::vector<std::string> fastest;  // the tied group, fastest first
  HtmlEstimate fastest_vs_malloc;
  std::vector<std::string> smallest_rss;
  double smallest_rss_bytes = NAN;
  std::string recommended;
  std::string adopt;  // how to adopt the recommended policy
  std::string rule;
  std::string sentence;  // the verdict as one paragraph (reports/words.h)
  // A faster policy that never frees, passed over (summary.h:
  // kNeverFreesMargin): its name, and the recommended one's figure over its
  // own.
  std::string passed_over;
  HtmlEstimate passed_over_edge;
  // With the search in the program: who decided and how the replay ranked
  // the pick (RecommendedWords), and where the two disagree (or "").
  std::string decided_in_program;
  std::string disagreement;
};

struct HtmlTrace {
  TraceFacts trace;  // TraceReport::trace: path, workload, memory ops, ideal peak
  std::string program, platform;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by key
  uint64_t program_ops = 0;  // every op the replay loop walks (the x axis)
  std::string note;          // e.g. that the trace cannot tell containers apart
  // Live bytes as requested over the replay's ops: each point the most over
  // the ops since the previous one.
  std::vector<double> live_x, live_bytes;
  std::vector<HtmlPolicy> policies;  // ranked: fastest first, failures last
  HtmlVerdict verdict;
  std::string interval_kind;  // what the ns/op intervals are, e.g. "95% CI of the median"
  // How far apart two identical allocators read (e.g. malloc against
  // itself), if measured: its median's offset from 1 is the noise margin.
  HtmlEstimate noise_floor;
  std::string sampling;          // SamplingWords
  std::string provisional;       // ProvisionalWords
  std::string caution;           // CautionWords
  std::string incomplete;        // IncompleteWords
  std::string in_program_terms;  // ProgramWords, if a policy is recommended
  std::string if_instrumented;   // IfInstrumentedWords
  // With --per_container: the verdict per container (null otherwise).
  std::shared_ptr<const PerContainerVerdict> per_container;
};

// How the runs were made, for the page's header.
struct HtmlContext {
  std::string machine, date;
  std::string method;  // e.g. "5 runs per policy, interleaved, ..."
};

// Live bytes over the program's ops, about `points` points (max per span).
void LiveCourse(const ReplayProgram& program, size_t points, std::vector<double>* x,
                std::vector<double>* bytes);

// The views of the replayer's results: the only code here that reads
// TraceReport and ReportContext. `report` and `program` describe the same
// trace.
HtmlTrace HtmlViewOf(const TraceReport& report, const ReplayProgram& program,
                     const ReportContext& ctx);
HtmlContext HtmlContextOf(const ReportContext& ctx);

// The page. `command_line` is shown as given (escaped); `in_situ_html`, the
// in-situ section, after the traces.
std::string FormatHtmlPage(const std::vector<HtmlTrace>& traces, const HtmlContext& ctx,
                           const std::string& command_line, const std::string& in_situ_html = "");

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORTS_REPORT_HTML_H_
