// The report formats, one renderer each (--format=NAME; the table of them
// is reporters.cc). Each renders a measurement whole: every trace's
// replay, the in-situ runs beside it under TRACE -- PROGRAM, or the in-situ
// runs alone under --in_situ (ReportInput::in_situ_only). A new format is a
// new file here with one function, and one entry in reporters.cc.
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_FORMATS_H_
#define ALLOCTRACE_REPLAYER_REPORTS_FORMATS_H_

#include <string>

#include "alloctrace/replayer/reports/reporters.h"

namespace alloctrace {

std::string TableReport(const ReportInput& in);     // table_report.cc: 80 columns
std::string MarkdownReport(const ReportInput& in);  // markdown_report.cc
std::string CsvReport(const ReportInput& in);       // csv_report.cc: a row per policy
std::string CsvRunsReport(const ReportInput& in);   // csv_report.cc: a row per run and pass
std::string CsvClassesReport(
    const ReportInput& in);                     // csv_report.cc: a row per class (--per_container)
std::string JsonReport(const ReportInput& in);  // json_report.cc
std::string HtmlReport(const ReportInput& in);  // html_page.cc: one page with charts

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORTS_FORMATS_H_
