// Renders the summary of every trace (replayer/verdict/summary.h) as an 80-column
// table, Markdown, CSV (one row per policy, or per run and pass) or JSON.
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_REPORT_H_
#define ALLOCTRACE_REPLAYER_REPORTS_REPORT_H_

#include <string>
#include <vector>

#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

std::string FormatTable(const std::vector<TraceReport>& reports, const ReportContext& ctx);
std::string FormatMarkdown(const std::vector<TraceReport>& reports, const ReportContext& ctx);
std::string FormatCsv(const std::vector<TraceReport>& reports, const ReportContext& ctx);
// One row per run and pass.
std::string FormatCsvRuns(const std::vector<TraceReport>& reports, const ReportContext& ctx);
std::string FormatJson(const std::vector<TraceReport>& reports, const ReportContext& ctx);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORTS_REPORT_H_
