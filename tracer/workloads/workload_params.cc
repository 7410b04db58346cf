#include "alloctrace/tracer/workloads/workload_params.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace alloctrace::workloads {
namespace {

// Debian's Abseil has its own string_view type.
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }
std::string_view Trim(std::string_view s) {
  const absl::string_view t = absl::StripAsciiWhitespace(Sv(s));
  return std::string_view(t.data(), t.size());
}

std::string KnownNames(absl::Span<const ParamSpec> specs) {
  if (specs.empty()) return "it has no parameters";
  std::vector<absl::string_view> names;
  for (const ParamSpec& spec : specs) names.push_back(Sv(spec.name));
  return absl::StrCat("known: ", absl::StrJoin(names, ", "));
}

absl::Status UnknownName(std::string_view workload, std::string_view name,
                         absl::Span<const ParamSpec> specs) {
  return absl::InvalidArgumentError(absl::StrCat("workload ", Sv(workload), ": unknown parameter ",
                                                 Sv(name), " (", KnownNames(specs), ")"));
}

absl::Status CheckValue(std::string_view workload, const ParamSpec& spec, int64_t value) {
  if (value < spec.min_value) {
    return absl::InvalidArgumentError(absl::StrCat("workload ", Sv(workload), ": parameter ",
                                                   Sv(spec.name), " must be >= ", spec.min_value,
                                                   ", got ", value));
  }
  if (!spec.allowed.empty() &&
      std::find(spec.allowed.begin(), spec.allowed.end(), value) == spec.allowed.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload ", Sv(workload), ": parameter ", Sv(spec.name), " must be one of ",
                     absl::StrJoin(spec.allowed, ", "), ", got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

WorkloadParams::WorkloadParams(std::string_view workload, absl::Span<const ParamSpec> specs)
    : workload_(workload), specs_(specs) {
  values_.reserve(specs.size());
  for (const ParamSpec& spec : specs) values_.push_back(spec.default_value);
}

int WorkloadParams::Find(std::string_view name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int64_t WorkloadParams::Get(std::string_view name) const {
  const int i = Find(name);
  if (i < 0) {
    std::fprintf(stderr, "workload %.*s reads undeclared parameter %.*s\n",
                 static_cast<int>(workload_.size()), workload_.data(),
                 static_cast<int>(name.size()), name.data());
    std::abort();
  }
  return values_[i];
}

absl::Status WorkloadParams::Set(std::string_view name, int64_t value) {
  const int i = Find(name);
  if (i < 0) return UnknownName(workload_, name, specs_);
  if (absl::Status s = CheckValue(workload_, specs_[i], value); !s.ok()) return s;
  values_[i] = value;
  return absl::OkStatus();
}

absl::Status WorkloadParams::Parse(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("workload ", Sv(workload_), ": parameter \"",
                                                   Sv(assignment), "\" is not name=value"));
  }
  const std::string_view name = Trim(assignment.substr(0, eq));
  const std::string_view text = Trim(assignment.substr(eq + 1));
  if (Find(name) < 0) return UnknownName(workload_, name, specs_);
  int64_t value;
  if (text.empty() || !absl::SimpleAtoi(Sv(text), &value)) {
    return absl::InvalidArgumentError(absl::StrCat("workload ", Sv(workload_), ": parameter ",
                                                   Sv(name), ": \"", Sv(text),
                                                   "\" is not a 64-bit integer"));
  }
  return Set(name, value);
}

std::string WorkloadParams::ToString() const {
  std::string out;
  for (size_t i = 0; i < specs_.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : " ", Sv(specs_[i].name), "=", values_[i]);
  }
  return out;
}

absl::StatusOr<WorkloadParams> ParseWorkloadParams(std::string_view workload,
                                                   absl::Span<const ParamSpec> specs,
                                                   absl::Span<const std::string> overrides) {
  WorkloadParams params(workload, specs);
  std::vector<std::string_view> seen;
  for (const std::string& assignment : overrides) {
    if (absl::Status s = params.Parse(assignment); !s.ok()) return s;
    const std::string_view name =
        Trim(std::string_view(assignment).substr(0, assignment.find('=')));
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return absl::InvalidArgumentError(absl::StrCat("workload ", Sv(workload), ": parameter ",
                                                     Sv(name), " given more than once"));
    }
    seen.push_back(name);
  }
  return params;
}

}  // namespace alloctrace::workloads
