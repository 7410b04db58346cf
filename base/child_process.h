// ChildProcess: the one way this project runs another program. A child is
// started with an exact argv, environment, working directory, standard
// streams and set of inherited descriptors; waited for under limits on its
// wall time and its resident memory, killed (with its process group, if it
// has one) past either; and its end classified (ChildExit). The replayer's
// isolated runs, its in-situ runs of the user's program and capture all go
// through it, so a child is spawned, bounded and judged the same way
// everywhere.
//
//   absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
//   if (!child.ok()) ...;             // cannot be executed: NotFound, ...
//   ChildExit end = child->Wait(limits, result_fd, &result);
//   if (!end.Succeeded()) ... ChildExitWords(end, limits) ...
//
// Start returns only once the child has executed its program (or failed
// to: its execve error comes back through a close-on-exec pipe), so a
// program that cannot be run is an error of Start, never an exit status to
// guess at.
//
// Thread-safety: a ChildProcess is used by one thread. Start vforks (the
// calling thread waits until the child has executed its program; the child
// makes only system calls before its execve).
#ifndef ALLOCTRACE_BASE_CHILD_PROCESS_H_
#define ALLOCTRACE_BASE_CHILD_PROCESS_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace alloctrace {

struct ChildSpec {
  // The file to execute (FindProgram); "": argv[0].
  std::string path;
  std::vector<std::string> argv;  // argv[0]: as the program should see it
  // The child's whole environment; nullopt: the parent's.
  std::optional<std::vector<std::string>> env;
  std::string working_dir;         // "": the parent's
  bool new_process_group = false;  // a kill takes what the child started too
  bool stdin_null = false;         // stdin from /dev/null, else the parent's
  int stdout_fd = -1;              // becomes the child's stdout (-1: the parent's)
  int stderr_fd = -1;              // becomes the child's stderr (-1: the parent's)
  // Descriptors the child keeps open across execve, whatever their
  // close-on-exec flag (a result pipe whose number is in argv).
  std::vector<int> inherit_fds;
  // >= 0: the child runs on this CPU alone (its affinity set before its
  // execve; where that fails, a CPU this process may not use, it runs
  // where the scheduler puts it). -1: the parent's CPUs.
  int cpu = -1;
};

// Bounds on a child while it is waited for; 0: none.
struct ChildLimits {
  double wall_seconds = 0;  // killed (SIGKILL) past this, from Start
  // Killed once its resident anonymous memory (RssAnon, read every
  // kMemoryPollMs) passes this. Resident, not mapped: a child that maps
  // much and touches little is measured as what it uses.
  int64_t memory_bytes = 0;
};
inline constexpr int kMemoryPollMs = 10;

// How a child ended.
struct ChildExit {
  enum class How { kExited, kSignaled, kTimedOut, kOverMemory };
  How how = How::kExited;
  int code = 0;                // kExited: its exit status
  int signal = 0;              // kSignaled: the signal that ended it
  int64_t resident_bytes = 0;  // kOverMemory: its RssAnon when it was killed
  double wall_seconds = 0;     // from Start to its end
  struct rusage usage = {};    // the child's own, from wait4

  bool Succeeded() const { return how == How::kExited && code == 0; }
  // usage's user + system time, in seconds.
  double CpuSeconds() const;
};

// The end in words, as every tool prints it: "exited with code 3",
// "crashed with signal 11 (Segmentation fault)", "killed after the time
// limit of 5 s per run", "killed when its resident memory (42 MiB) passed
// the memory limit of 24 MiB".
std::string ChildExitWords(const ChildExit& end, const ChildLimits& limits);

class ChildProcess {
 public:
  // Starts `spec`; the calling thread leaves the child's CPU if it shares
  // it and may run on another (so that its polls in Wait do not preempt
  // the child). Errors: NotFound or PermissionDenied ("cannot run PATH:
  // ...") when argv[0] cannot be executed, NotFound when working_dir cannot
  // be entered, InvalidArgument for an empty argv, Internal when a pipe or
  // fork fails.
  static absl::StatusOr<ChildProcess> Start(const ChildSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  // A child never waited for is killed and reaped: none is left behind.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Waits for the child to end, killing it past `limits`. Meanwhile reads
  // `drain_fd` (if >= 0) to its end into *drained, so that a child writing
  // its result to a pipe can never block on it. Call once.
  ChildExit Wait(const ChildLimits& limits = {}, int drain_fd = -1, std::string* drained = nullptr);

  // For a child that answers requests and runs on: waits until `enough()`
  // holds, reading `fd` meanwhile (appended to *received), and returns
  // nullopt with the child still running; or, if it ends first or passes
  // `limits` (its wall time counted from this call), its end as Wait
  // returns it (the child killed and reaped). May be called again.
  std::optional<ChildExit> WaitFor(const ChildLimits& limits, int fd, std::string* received,
                                   const std::function<bool()>& enough);

 private:
  enum class Watched { kEnded, kTimedOut, kOverMemory, kEnough };
  using Clock = std::chrono::steady_clock;
  // The loop of Wait and WaitFor: until the child ends, passes `limits`
  // (its wall time from `since`) or `enough()` (if set) holds, reading
  // `fd` (if >= 0) into *received; *resident: what it held if over memory.
  Watched Watch(const ChildLimits& limits, Clock::time_point since, int fd, std::string* received,
                const std::function<bool()>& enough, int64_t* resident);
  // The child's end after Watch (killed first if it passed a limit).
  ChildExit Reap(Watched watched, int64_t resident, int fd, std::string* received);
  ChildProcess(pid_t pid, bool group, std::chrono::steady_clock::time_point started)
      : pid_(pid), group_(group), started_(started) {}
  void Kill();

  pid_t pid_ = -1;  // -1 once waited for
  bool group_ = false;
  std::chrono::steady_clock::time_point started_;
};

// The resident anonymous memory of `pid` (RssAnon in /proc/PID/status),
// in bytes; -1 if unknown.
int64_t ResidentAnonBytes(pid_t pid);

// The CPU `pid` last ran on (/proc/PID/stat); -1 if unknown.
int LastCpuOf(pid_t pid);

// The CPUs this process may run on (its affinity), in increasing order;
// empty if unknown.
std::vector<int> AllowedCpus();

// `name` as execve wants it. A name with a '/' is a path, relative to the
// user's directory (ResolveUserPath: where `bazel run` was typed, else the
// working directory); a bare name is searched in PATH as execvp does (an
// empty entry is the user's directory; PATH unset: /usr/local/bin:/usr/bin:/bin).
// Errors, each naming `name`: NotFound ("cannot run x: no such file", "...:
// not found on PATH"), PermissionDenied ("...: not an executable file"),
// InvalidArgument for an empty name.
absl::StatusOr<std::string> FindProgram(const std::string& name);

// The parent's environment, one "NAME=value" per entry, for a ChildSpec to
// edit.
std::vector<std::string> CurrentEnvironment();

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_CHILD_PROCESS_H_
