// One run of the user's program for in-situ measurement (in_situ.h): a
// fresh process (base/child_process.h) with the environment of its
// candidate, its output to the log, its figures from the launcher's wait4,
// killed (with its process group) past the time limit.
//
// Thread-safety: one run at a time per process (it forks); a LogFile is
// used by one thread.
#ifndef ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_RUN_H_
#define ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_RUN_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/in_situ/in_situ.h"

namespace alloctrace {

// The log every run's stdout and stderr are appended to, each run under a
// header line. Move-only; closes on destruction.
class LogFile {
 public:
  // Truncates the file, or with `append` adds to it.
  static absl::StatusOr<LogFile> Open(const std::string& path, bool append = false);
  LogFile(LogFile&& other) noexcept : f_(other.f_) { other.f_ = nullptr; }
  LogFile& operator=(LogFile&&) = delete;
  ~LogFile();
  // Appends the header and the contents of fd (from its start).
  void Append(const std::string& header, int stdout_fd, int stderr_fd);

 private:
  explicit LogFile(std::FILE* f) : f_(f) {}
  std::FILE* f_;
};

// How one run of the user's program is made.
struct ProgramRun {
  std::string launcher;           // in_situ_launcher (see there: why)
  std::vector<std::string> argv;  // argv[0]: a path to execute
  std::string policy;             // ALLOCTRACE_POLICY ("" : unset)
  std::string preload;            // a library path ("" : none)
  std::string probe;              // the preload check library, with `preload`
  double timeout_seconds = 0;     // killed past this (0: never)
};

struct ChildOutcome {
  InSituRun run;                         // round left 0
  std::string error;                     // "" if it exited 0
  bool timed_out = false;                // killed at ProgramRun::timeout_seconds
  std::vector<std::string> stderr_tail;  // last lines, when it failed
  std::string acknowledged_policy;       // what the switch said it took ("" : nothing)
  int64_t start_rss_bytes = 0;           // resident when the switch resolved (0: unknown)
  std::string malloc_provider;           // what the preload check said serves malloc
};

// Runs run.argv once (see above), through base/child_process.h. Never
// throws; errors are in the outcome.
ChildOutcome RunProgram(const ProgramRun& run, LogFile& log, const std::string& header);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_RUN_H_
