#include "alloctrace/replayer/reports/html_parts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/charts/html.h"

namespace alloctrace::html_internal {

using charts::Escape;
using charts::FormatValue;
using charts::Unit;

bool Contender(const HtmlPolicy& p) { return p.ok && !p.floor; }

charts::Axis SpeedAxis(std::string label, bool frame) {
  charts::Axis a{std::move(label), Unit::kNanoseconds, /*include_zero=*/false};
  a.frame = frame;
  a.log_if_wide = true;
  return a;
}

const HtmlPolicy* Find(const HtmlTrace& t, const std::string& name) {
  for (const HtmlPolicy& p : t.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> Without(const std::vector<std::string>& names,
                                 const std::vector<std::string>& drop) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (!Contains(drop, n)) out.push_back(n);
  }
  return out;
}

std::map<std::string, int> Ranks(const HtmlTrace& t) {
  std::map<std::string, int> ranks;
  int rank = 0;
  for (const HtmlPolicy& p : t.policies) {
    if (p.ok && !p.floor) ranks.emplace(p.name, ++rank);
  }
  return ranks;
}

std::string Names(const std::vector<std::string>& names, size_t max) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < max; ++i) shown.push_back(Escape(names[i]));
  std::string o = absl::StrJoin(shown, ", ");
  if (names.size() > max) absl::StrAppend(&o, " and ", names.size() - max, " more");
  return o;
}

std::string Interval(const HtmlEstimate& e, Unit unit) {
  if (!e.has_value()) return "";
  if (!e.has_interval()) return FormatValue(e.value, unit);
  return absl::StrCat(FormatValue(e.value, unit), " [", FormatValue(e.lo, unit), ", ",
                      FormatValue(e.hi, unit), "]");
}

std::vector<double> CourseX(size_t readings, uint64_t ops) {
  std::vector<double> x;
  if (readings == 0) return x;
  const uint64_t segment = (ops + readings - 1) / readings;
  for (size_t k = 0; k < readings; ++k) {
    x.push_back(static_cast<double>(std::min<uint64_t>(ops, (k + 1) * segment)));
  }
  return x;
}

}  // namespace alloctrace::html_internal
