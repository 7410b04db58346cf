#include "alloctrace/replayer/reports/reporters.h"

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/reports/report.h"
#include "alloctrace/replayer/reports/report_html.h"

namespace alloctrace {
namespace {

std::string Table(const ReportInput& in) { return FormatTable(in.reports, in.ctx); }
std::string Markdown(const ReportInput& in) { return FormatMarkdown(in.reports, in.ctx); }
std::string Csv(const ReportInput& in) { return FormatCsv(in.reports, in.ctx); }
std::string CsvRuns(const ReportInput& in) { return FormatCsvRuns(in.reports, in.ctx); }
std::string Json(const ReportInput& in) { return FormatJson(in.reports, in.ctx); }
std::string Html(const ReportInput& in) {
  return FormatHtml(in.reports, in.programs, in.ctx, in.command_line);
}

// The order is the one --help and the usage errors list.
constexpr ReportFormat kFormats[] = {
    {"table", &Table},      {"markdown", &Markdown}, {"csv", &Csv},
    {"csv-runs", &CsvRuns}, {"json", &Json},         {"html", &Html},
};

}  // namespace

const ReportFormat* FindReportFormat(absl::string_view name) {
  for (const ReportFormat& f : kFormats) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::vector<std::string> ReportFormatNames() {
  std::vector<std::string> names;
  for (const ReportFormat& f : kFormats) names.emplace_back(f.name);
  return names;
}

std::string ReportFormatList() {
  std::string list;
  const size_t n = sizeof kFormats / sizeof kFormats[0];
  for (size_t i = 0; i < n; ++i) {
    absl::StrAppend(&list, i == 0 ? "" : i + 1 == n ? " or " : ", ", kFormats[i].name);
  }
  return list;
}

}  // namespace alloctrace
