// Runs one replay in a child process of its own, so its RSS, page faults
// and any crash belong to that run alone.
#ifndef ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_
#define ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "replayer/replay_loop.h"

namespace alloctrace {

// Forks; the child calls `run` and sends its RunResult back through a pipe.
// A child that crashes or exits without a result gives an error naming the
// signal or exit code; the parent never crashes with it.
absl::StatusOr<RunResult> RunInChild(const std::function<RunResult()>& run);

// The wire form of a RunResult (one line of text), shared with re-executed
// children.
std::string SerializeRunResult(const RunResult& r);
absl::StatusOr<RunResult> ParseRunResult(const std::string& line);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ISOLATED_RUN_H_
