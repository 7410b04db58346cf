// Runs one replay in a child process of its own, so its RSS, page faults
// and any crash belong to that run alone.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/run_result.h"

namespace alloctrace {

// Bounds on one child. Zero means no bound.
struct ChildLimits {
  double wall_seconds = 0;  // killed (SIGKILL) past this
  // Killed (SIGKILL) once its resident anonymous memory (RssAnon), read by
  // the parent every kMemoryPollMs, passes this. Resident, not mapped: a
  // policy that maps a 1 MiB slab per container and touches a page of it
  // (slab/st/stack over 40,000 strings) holds 40 GB of address space but a
  // few hundred MB of memory, and is measured as such; an address-space
  // limit (RLIMIT_DATA, used before) failed it at the 600th string.
  int64_t memory_bytes = 0;
};
inline constexpr int kMemoryPollMs = 10;

// Starts `argv` (argv[0] is the program's path) as a new process, with
// `preload` (if not empty) added to LD_PRELOAD and `result_flag` followed by
// the number of a pipe's write end appended to its arguments, and reads its
// RunResult from that pipe. Errors (the parent never crashes with them):
// Aborted naming the signal or exit code of a child that crashed or exited
// without a result; DeadlineExceeded for a child killed past
// limits.wall_seconds; ResourceExhausted for one killed past
// limits.memory_bytes; NotFound if the program cannot be started.
absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv, const std::string& preload,
                                          const std::string& result_flag,
                                          const ChildLimits& limits = {});

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_
