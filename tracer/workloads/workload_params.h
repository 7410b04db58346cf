// Named integer parameters of a workload: what each one means, its default,
// the value the source article used, and "name=value" overrides from a
// command line, checked against those specs.
//
//   WorkloadParams p(workload_name, specs);      // all defaults
//   absl::Status s = p.Parse("entries=1000");    // or ParseWorkloadParams()
//   int64_t n = p.Get("entries");
//
// Errors are absl::InvalidArgumentError with a message naming the workload and
// the parameter. Get() of a name the workload does not declare is a bug in
// the workload and aborts.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_PARAMS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_PARAMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace alloctrace::workloads {

// One parameter of a workload. Specs live in static storage: WorkloadParams
// keeps pointers to them.
struct ParamSpec {
  std::string_view name;
  int64_t default_value;
  // The value as the source states it ("1,000,000", "256, 512 and 1024"),
  // or "" if the source does not say.
  std::string_view source_value;
  std::string_view help;
  // Accepted values: >= min_value and, if `allowed` is not empty, one of them.
  int64_t min_value = 1;
  std::vector<int64_t> allowed = {};
};

class WorkloadParams {
 public:
  // The defaults of `specs`. `workload` and `specs` must outlive this object.
  WorkloadParams(std::string_view workload, absl::Span<const ParamSpec> specs);

  // The value of `name`. Aborts if the workload declares no such parameter.
  int64_t Get(std::string_view name) const;
  // Sets `name` after checking the value against its spec.
  absl::Status Set(std::string_view name, int64_t value);
  // Applies one "name=value" override.
  absl::Status Parse(std::string_view assignment);

  std::string_view workload() const { return workload_; }
  absl::Span<const ParamSpec> specs() const { return specs_; }
  // Values in spec order.
  const std::vector<int64_t>& values() const { return values_; }
  // "name=value name=value ..." in spec order.
  std::string ToString() const;

  friend bool operator==(const WorkloadParams& a, const WorkloadParams& b) {
    return a.workload_ == b.workload_ && a.values_ == b.values_;
  }
  friend bool operator!=(const WorkloadParams& a, const WorkloadParams& b) { return !(a == b); }

 private:
  int Find(std::string_view name) const;  // index in specs_, or -1

  std::string_view workload_;
  absl::Span<const ParamSpec> specs_;
  std::vector<int64_t> values_;
};

// The defaults with every "name=value" of `overrides` applied. A parameter may
// be given once.
absl::StatusOr<WorkloadParams> ParseWorkloadParams(std::string_view workload,
                                                   absl::Span<const ParamSpec> specs,
                                                   absl::Span<const std::string> overrides);

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_PARAMS_H_
