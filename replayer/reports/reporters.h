// The replayer's output formats (--format=NAME), one table entry each: a
// name, what it writes, and the function that renders a measurement in that
// format (formats.h). A new format is one function and one entry in
// reporters.cc; --format's help, its usage errors and reporters_test all go
// through the table.
//
// Thread-safety: the table is immutable; renderers are pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_REPORTERS_H_
#define ALLOCTRACE_REPLAYER_REPORTS_REPORTERS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// Everything a report may draw from. `reports` and `programs` are in the
// same order (one per trace); the references outlive the call. The first
// report's in_situ holds the program's runs under TRACE -- PROGRAM; under
// --in_situ there is no replay and `in_situ_only` holds them.
struct ReportInput {
  const std::vector<TraceReport>& reports;
  const std::vector<ReplayProgram>& programs;
  const ReportContext& ctx;
  const std::string& command_line;  // as typed, shown by the HTML page
  const InSituSummary* in_situ_only = nullptr;
};

struct ReportFormat {
  const char* name;   // the --format value
  const char* about;  // what it writes, in --help ("" when the name says it)
  std::string (*render)(const ReportInput& in);
};

// The format named `name`, nullptr if there is none.
const ReportFormat* FindReportFormat(absl::string_view name);

// Every format's name, in the table's order.
std::vector<std::string> ReportFormatNames();

// The names as a phrase of alternatives: "table, markdown, ... or html".
std::string ReportFormatList();

// The same with what each writes, as --format's help says it: "table,
// markdown, csv (one row per policy), ... or html (one self-contained page
// with charts)".
std::string ReportFormatHelp();

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORTS_REPORTERS_H_
