// Runs one replay in a child process of its own, so its RSS, page faults
// and any crash belong to that run alone.
#ifndef ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_
#define ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replayer/replay_loop.h"

namespace alloctrace {

// Forks; the child calls `run` and sends its RunResult back through a pipe.
// A child that crashes or exits without a result gives an error naming the
// signal or exit code; the parent never crashes with it.
absl::StatusOr<RunResult> RunInChild(const std::function<RunResult()>& run);

// Starts `argv` (argv[0] is the program's path) as a child process with
// `preload` added to LD_PRELOAD and `result_flag` followed by the number of
// a pipe's write end appended to its arguments, and reads its RunResult from
// that pipe. Used to replay under another malloc, which must be loaded
// before the process starts.
absl::StatusOr<RunResult> RunInPreloadedChild(std::vector<std::string> argv,
                                              const std::string& preload,
                                              const std::string& result_flag);

// Sends a RunResult to a parent waiting in RunInChild/RunInPreloadedChild.
bool WriteRunResult(int fd, const RunResult& r);

// The wire form of a RunResult (one line of text), shared with re-executed
// children.
std::string SerializeRunResult(const RunResult& r);
absl::StatusOr<RunResult> ParseRunResult(const std::string& line);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_
