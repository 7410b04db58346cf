#include "alloctrace/replayer/reporters.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "alloctrace/replayer/report.h"
#include "alloctrace/replayer/report_html.h"
#include "alloctrace/replayer/summary.h"

namespace alloctrace {
namespace {

TEST(ReportersTest, EveryFormatIsFoundByItsNameAndNothingElse) {
  EXPECT_EQ(ReportFormatNames(),
            (std::vector<std::string>{"table", "markdown", "csv", "csv-runs", "json", "html"}));
  for (const std::string& name : ReportFormatNames()) {
    const ReportFormat* f = FindReportFormat(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->name, name);
  }
  EXPECT_EQ(FindReportFormat("xml"), nullptr);
  EXPECT_EQ(FindReportFormat(""), nullptr);
  EXPECT_EQ(ReportFormatList(), "table, markdown, csv, csv-runs, json or html");
}

// Each entry renders what its Format function renders, byte for byte.
TEST(ReportersTest, EachEntryRendersItsFormat) {
  ReplayProgram program;
  program.path = "empty.trace";
  TraceReport report;
  report.trace_path = "empty.trace";
  report.no_memory_ops = true;
  const std::vector<TraceReport> reports = {report};
  const std::vector<ReplayProgram> programs = {program};
  ReportContext ctx;
  ctx.machine = "test";
  const std::string command_line = "replayer empty.trace";
  const ReportInput in{reports, programs, ctx, command_line};
  EXPECT_EQ(FindReportFormat("table")->render(in), FormatTable(reports, ctx));
  EXPECT_EQ(FindReportFormat("markdown")->render(in), FormatMarkdown(reports, ctx));
  EXPECT_EQ(FindReportFormat("csv")->render(in), FormatCsv(reports, ctx));
  EXPECT_EQ(FindReportFormat("csv-runs")->render(in), FormatCsvRuns(reports, ctx));
  EXPECT_EQ(FindReportFormat("json")->render(in), FormatJson(reports, ctx));
  EXPECT_EQ(FindReportFormat("html")->render(in),
            FormatHtml(reports, programs, ctx, command_line));
}

}  // namespace
}  // namespace alloctrace
