#include "alloctrace/replayer/measure/isolated_run.h"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/run_result_wire.h"

namespace alloctrace {

namespace {

// The resident anonymous memory of `pid` (RssAnon, bytes); -1 if unknown.
int64_t ResidentAnonBytes(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long v = 0;
    if (std::sscanf(line, "RssAnon: %lld kB", &v) == 1) {
      kib = v;
      break;
    }
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

// Reads the child's result line and reaps it; kills it past `wall_seconds`
// (if > 0) or once its resident memory passes `memory_bytes` (if > 0),
// read every kMemoryPollMs.
absl::StatusOr<RunResult> CollectChild(pid_t pid, int read_fd, double wall_seconds,
                                       int64_t memory_bytes) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::microseconds(static_cast<int64_t>(wall_seconds * 1e6));
  std::string line;
  char buf[4096];
  bool timed_out = false;
  int64_t resident = 0;  // past memory_bytes, when the child was killed for it
  while (true) {
    int wait_ms = -1;
    if (wall_seconds > 0) {
      const int64_t left_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left_ms <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left_ms + 1, 1 << 30));
    }
    if (memory_bytes > 0) {
      const int64_t now = ResidentAnonBytes(pid);
      if (now > memory_bytes) {
        resident = now;
        break;
      }
      wait_ms = wait_ms < 0 ? kMemoryPollMs : std::min(wait_ms, kMemoryPollMs);
    }
    if (wait_ms >= 0) {
      struct pollfd p = {read_fd, POLLIN, 0};
      const int ready = poll(&p, 1, wait_ms);
      if (ready <= 0) continue;  // EINTR or not yet: the limits are checked above
    }
    const ssize_t n = read(read_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(read_fd);
  if (timed_out || resident > 0) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrFormat("killed after the time limit of %g s per run", wall_seconds));
  }
  if (resident > 0) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "killed when its resident memory (%.0f MiB) passed the child's memory limit of %.0f MiB "
        "(--memory_limit_mb)",
        static_cast<double>(resident) / (1 << 20), static_cast<double>(memory_bytes) / (1 << 20)));
  }
  if (WIFSIGNALED(status)) {
    return absl::AbortedError(absl::StrCat("crashed with signal ", WTERMSIG(status), " (",
                                           strsignal(WTERMSIG(status)), ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::AbortedError(absl::StrCat("exited with code ", WEXITSTATUS(status)));
  }
  return ParseRunResult(line);
}

}  // namespace

absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv, const std::string& preload,
                                          const std::string& result_flag,
                                          const ChildLimits& limits) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  argv.push_back(absl::StrCat(result_flag, fds[1]));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const char* old = getenv("LD_PRELOAD");
  const std::string ld_preload =
      old != nullptr && *old != '\0' ? absl::StrCat(preload, ":", old) : preload;
  std::fflush(nullptr);
  ReleaseFreeMallocMemory();  // fork copies less
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    if (!preload.empty()) setenv("LD_PRELOAD", ld_preload.c_str(), 1);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  absl::StatusOr<RunResult> r = CollectChild(pid, fds[0], limits.wall_seconds, limits.memory_bytes);
  if (!r.ok() && absl::StrContains(r.status().message(), "code 127")) {
    return absl::NotFoundError(absl::StrCat("cannot start ", argv[0]));
  }
  return r;
}

}  // namespace alloctrace
