// The request a measuring parent gives one child run: which policy, where
// the shared program (and thread schedule) is, the run's options, and
// which attempt this is. The parent re-executes the replayer with
// ChildArgs(request) after its own path and with "result_fd=N" appended;
// the child recognizes itself by IsChildInvocation, parses the rest with
// ParseChildArgs and runs (child_main.h).
//
// The arguments are positional "key=value" words after kChildMarker, parsed
// here and never by the command line's flags: they are how the replayer
// talks to itself, not options for people (--help does not list them).
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_CHILD_REQUEST_H_
#define ALLOCTRACE_REPLAYER_ENGINE_CHILD_REQUEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/run_result.h"

namespace alloctrace {

// argv[1] of a child run.
inline constexpr char kChildMarker[] = "--internal-child";
// argv[1] of a probe: the binary started and ended with nothing done in
// between, under a malloc's preload and without, to time what the malloc
// adds to a process's start and end (measure/isolated_run.h: ProcessCost).
inline constexpr char kProbeMarker[] = "--internal-probe";
// The word RunInFreshChild appends, followed by its result pipe's fd.
inline constexpr char kChildResultFdWord[] = "result_fd=";

struct ChildRequest {
  std::string policy;    // a registry name
  int program_fd = -1;   // ShareReplayView's memfd
  int schedule_fd = -1;  // ShareThreadSchedule's memfd; -1: a serialized replay
  int result_fd = -1;    // where the child writes its RunResult (run_result_wire.h)
  int attempt = 0;       // the run's number for its policy, from 1
  // A windowed run's windows (engine/windows.h: WindowsWord); "" for a
  // whole run.
  std::string windows;
  // The windows' start states (windows.h: ShareWindowStates); -1: the
  // child works them out.
  int states_fd = -1;
  // A replay per class of containers (mix_allocator.h: MixSpecWord); ""
  // for one policy. With a mix, `policy` is the mix's rest (`*`): the
  // process's malloc, which decides its preload.
  std::string mix;
  RunOptions options;
  // >= 0: the child serves windows (window_server.h), each asked for on
  // this fd; `windows` is then empty. Appended by the runner, as result_fd.
  int command_fd = -1;
};
// The word a serving child's runner appends, followed by its command
// pipe's fd.
inline constexpr char kChildCommandFdWord[] = "command_fd=";

// The words after the program's path, result_fd excluded (the runner
// appends it): kChildMarker, then policy=, program_fd=, schedule_fd=,
// attempt=, touch=, rss_samples=, passes=, warm_s=, windows=, states_fd=, mix=.
std::vector<std::string> ChildArgs(const ChildRequest& request);

// Whether argv is a child run (argv[1] is kChildMarker).
bool IsChildInvocation(int argc, char** argv);
bool IsProbeInvocation(int argc, char** argv);

// The request in argv (as ChildArgs wrote it, with result_fd= and, for a
// serving child, command_fd=): or
// InvalidArgument naming the first word that is missing or malformed.
absl::StatusOr<ChildRequest> ParseChildArgs(int argc, char** argv);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_CHILD_REQUEST_H_
