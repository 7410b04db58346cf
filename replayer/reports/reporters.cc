#include "alloctrace/replayer/reports/reporters.h"

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/reports/formats.h"

namespace alloctrace {
namespace {

// The order is the one --help and the usage errors list.
constexpr ReportFormat kFormats[] = {
    {"table", &TableReport},      {"markdown", &MarkdownReport},      {"csv", &CsvReport},
    {"csv-runs", &CsvRunsReport}, {"csv-classes", &CsvClassesReport}, {"json", &JsonReport},
    {"html", &HtmlReport},
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
