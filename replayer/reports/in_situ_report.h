// The in-situ verdict (in_situ.h) and how every report format shows the
// in-situ runs beside the replay's prediction: table and Markdown sections,
// a CSV with replay and in-situ columns per policy, JSON objects (merged
// into the replay's JSON by report_data.cc) and an HTML section.
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_IN_SITU_REPORT_H_
#define ALLOCTRACE_REPLAYER_REPORTS_IN_SITU_REPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// `text` in `format` (table, markdown, csv, json, html; as report.h and
// report_html.h write the replay) with the in-situ runs of `replay`
// added: a section (table, markdown, html), the in-situ CSV with replay
// columns (csv), nothing for json (report_data.cc merges it). Without a
// replay, the in-situ report alone.
std::string WithInSitu(const std::string& format, const std::string& text, const InSituSummary& s,
                       const TraceReport* replay);

// `replay` may be null (--in_situ without a trace).
std::string InSituTable(const InSituSummary& s, const TraceReport* replay);
std::string InSituMarkdown(const InSituSummary& s, const TraceReport* replay);
std::string InSituCsv(const InSituSummary& s, const TraceReport* replay);
std::string InSituHtml(const InSituSummary& s, const TraceReport* replay);
// The whole in-situ measurement as one JSON object.
std::string InSituJson(const InSituSummary& s);
// {"wall_s": {"median", "ci95"}, "cpu_s": {...}, "peak_rss_bytes", "runs",
// "status"} of `policy` (a replay name), "null" if it was not run in situ.
std::string InSituPolicyJson(const InSituSummary& s, const std::string& policy);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORTS_IN_SITU_REPORT_H_
