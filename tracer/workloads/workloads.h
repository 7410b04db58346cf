// The registry of workloads: allocation patterns from the articles this
// project starts from (see docs/ARCHITECTURE.md, "The sources"), each runnable
// traced (through alloctrace::TraceAllocator, recorded into
// Recorder::Global()) or plain (std::allocator, for measuring the cost of
// recording).
//
//   const WorkloadInfo* w = FindWorkload("simple_map");
//   absl::StatusOr<WorkloadParams> p = w->ParseParams({"entries=1000"});
//   w->run_traced(*p, /*seed=*/1);
//
// A run is deterministic for (params, seed): same allocations and frees in the
// same order (for a multi_threaded workload: per thread, see below), and it
// frees everything it allocates before it returns. Each
// container is its own allocator instance (arena); what a program would take
// from `new` or std::make_shared is recorded in arena 0.
//
// Thread-safety: the registry is immutable; runs of different workloads may
// go on in parallel (they share only Recorder::Global()).
#ifndef ALLOCTRACE_TRACER_WORKLOADS_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_WORKLOADS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "alloctrace/tracer/workloads/workload_params.h"

namespace alloctrace::workloads {

struct WorkloadInfo {
  std::string_view name;         // lower_snake, unique
  std::string_view description;  // one line
  std::string_view source;       // the article or program it comes from
  absl::Span<const ParamSpec> params;
  bool seeded;  // whether the seed changes the sequence of allocations and frees

  // `params` must be this workload's (from DefaultParams or ParseParams).
  void (*run_traced)(const WorkloadParams& params, uint64_t seed);
  void (*run_plain)(const WorkloadParams& params, uint64_t seed);
  // Runs several threads (tracer/workloads/thread_workloads.h): which thread
  // frees which object, and the order of the threads' events, vary from run
  // to run; what each thread allocates does not.
  bool multi_threaded = false;

  WorkloadParams DefaultParams() const { return WorkloadParams(name, params); }
  // The defaults with "name=value" overrides applied; errors name the
  // workload and the parameter.
  absl::StatusOr<WorkloadParams> ParseParams(absl::Span<const std::string> overrides) const {
    return ParseWorkloadParams(name, params, overrides);
  }
};

// Every workload, in a fixed order.
const std::vector<WorkloadInfo>& AllWorkloads();
// nullptr if there is no workload of that name.
const WorkloadInfo* FindWorkload(std::string_view name);

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_WORKLOADS_H_
