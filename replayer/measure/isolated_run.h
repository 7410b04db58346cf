// Runs one replay in a child process of its own (base/child_process.h), so
// its RSS, page faults and any crash belong to that run alone, and reads
// the RunResult the child sends back (engine/run_result_wire.h).
//
// Thread-safety: one call at a time per process (it forks).
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/scoped_fd.h"
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

// The CPU a serialized replay's runs are pinned to: the last this process
// may use; -1 if unknown.
int ReplayCpu();

// What the malloc library `preload` adds to starting and ending a process,
// in CPU seconds: `probe` (argv: a program that returns at once) started
// `rounds` times without a preload and with `preload`, in turn (which goes
// first alternating by round), and the median over the rounds of the
// difference of the two's CPU time (user + system, from wait4), or 0 if
// that median is below 0. Pairing by round cancels the machine's drift;
// the program's own start is in both. `cpu` >= 0: every probe runs on that
// CPU alone. Unpinned, successive children alternate between two CPUs on
// Linux, so one of the pair would always run on one CPU and the other on
// the other, and a difference in the CPUs' speed would be read as the
// library's cost.
// Errors: as RunInFreshChild's start, or Aborted naming how a probe ended
// that did not exit with 0.
absl::StatusOr<double> ProcessCost(const std::vector<std::string>& probe,
                                   const std::string& preload, int rounds, int cpu = -1);

// A child that serves windows (engine/window_server.h): started once with
// a command pipe and a result pipe (their fds appended to `argv` after
// `command_word` and `result_word`), then asked for one window at a time.
// Destroying it closes its command pipe and kills it.
class ServingChild {
 public:
  // Errors as RunInFreshChild's start: NotFound, Internal.
  static absl::StatusOr<std::unique_ptr<ServingChild>> Start(std::vector<std::string> argv,
                                                             const std::string& preload,
                                                             const std::string& command_word,
                                                             const std::string& result_word,
                                                             int cpu = -1);
  ServingChild(const ServingChild&) = delete;
  ServingChild& operator=(const ServingChild&) = delete;

  // Sends `request` (one line, no newline) and reads the answer, killing
  // the child past `limits` (its wall time counted from this call). Errors
  // as RunInFreshChild's for a child that ended or was killed; a result
  // with an error, or any error, ends the child: ended() is then true.
  absl::StatusOr<RunResult> Serve(const std::string& request, const ChildLimits& limits);
  bool ended() const { return ended_; }
  pid_t pid() const { return child_.pid(); }

 private:
  ServingChild(ChildProcess child, ScopedFd command_fd, ScopedFd result_fd)
      : child_(std::move(child)),
        command_fd_(std::move(command_fd)),
        result_fd_(std::move(result_fd)) {}

  ChildProcess child_;  // destroyed last: killed after its pipes close
  ScopedFd command_fd_;
  ScopedFd result_fd_;
  std::string received_;  // read from result_fd_, not yet taken
  bool ended_ = false;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ISOLATED_RUN_H_
