#include "alloctrace/replayer/reports/reporters.h"

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/reports/formats.h"

namespace alloctrace {
namespace {

// The order is the one --help and the usage errors list.
constexpr ReportFormat kFormats[] = {
    {"table", "", &TableReport},
    {"markdown", "", &MarkdownReport},
    {"csv", "one row per policy", &CsvReport},
    {"csv-runs", "one row per run and pass", &CsvRunsReport},
    {"csv-classes", "one row per class, --per_container", &CsvClassesReport},
    {"json", "", &JsonReport},
    {"html", "one self-contained page with charts", &HtmlReport},
};

std::string Alternatives(bool with_about) {
  std::string list;
  const size_t n = sizeof kFormats / sizeof kFormats[0];
  for (size_t i = 0; i < n; ++i) {
    absl::StrAppend(&list, i == 0 ? "" : i + 1 == n ? " or " : ", ", kFormats[i].name);
    if (with_about && *kFormats[i].about != '\0') {
      absl::StrAppend(&list, " (", kFormats[i].about, ")");
    }
  }
  return list;
}

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

std::string ReportFormatList() { return Alternatives(/*with_about=*/false); }

std::string ReportFormatHelp() { return Alternatives(/*with_about=*/true); }

}  // namespace alloctrace
