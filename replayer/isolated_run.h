// Runs one replay in a child process of its own, so its RSS, page faults
// and any crash belong to that run alone.
#ifndef ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_
#define ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replayer/replay_loop.h"

namespace alloctrace {

// Starts `argv` (argv[0] is the program's path) as a new process, with
// `preload` (if not empty) added to LD_PRELOAD and `result_flag` followed by
// the number of a pipe's write end appended to its arguments, and reads its
// RunResult from that pipe. A child that crashes or exits without a result
// gives an error naming the signal or exit code; the parent never crashes
// with it.
absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv,
                                          const std::string& preload,
                                          const std::string& result_flag);

// Sends a RunResult to a parent waiting in RunInFreshChild.
bool WriteRunResult(int fd, const RunResult& r);

// The wire form of a RunResult (one line of text), shared with re-executed
// children.
std::string SerializeRunResult(const RunResult& r);
absl::StatusOr<RunResult> ParseRunResult(const std::string& line);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_
