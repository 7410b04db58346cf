// Runs one replay in a child process of its own (base/child_process.h), so
// its RSS, page faults and any crash belong to that run alone, and reads
// the RunResult the child sends back (engine/run_result_wire.h).
//
// Thread-safety: one call at a time per process (it forks).
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/replayer/engine/run_result.h"

namespace alloctrace {

// Starts `argv` (argv[0] is the program's path) as a new process, with
// `preload` (if not empty) put first in LD_PRELOAD and `result_word`
// followed by the number of a pipe's write end appended to its arguments,
// and reads its RunResult from that pipe. The child is killed past
// `limits`: the resident-memory limit is on what it uses, not what it maps
// (a policy that maps a 1 MiB slab per container and touches a page of it
// holds gigabytes of address space but megabytes of memory, and is
// measured as such). Errors (the parent never crashes with them): Aborted
// naming the signal or exit code of a child that crashed or exited without
// a result; DeadlineExceeded for a child killed past limits.wall_seconds;
// ResourceExhausted for one killed past limits.memory_bytes (the message
// names --memory_limit_mb); NotFound if the program cannot be started.
// `cpu` >= 0: the child runs on that CPU alone (ChildSpec::cpu).
absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv, const std::string& preload,
                                          const std::string& result_word,
                                          const ChildLimits& limits = {}, int cpu = -1);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_
