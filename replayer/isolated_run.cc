#include "replayer/isolated_run.h"

#include <malloc.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace alloctrace {

std::string SerializeRunResult(const RunResult& r) {
  std::ostringstream o;
  o.precision(17);
  o << "v1 " << r.seconds << ' ' << r.teardown_seconds << ' ' << r.ops << ' ' << r.baseline_rss
    << ' ' << r.peak_rss << ' ' << r.final_rss << ' ' << r.minor_faults << ' ' << r.major_faults
    << ' ' << r.rss_course.size();
  for (int64_t v : r.rss_course) o << ' ' << v;
  o << ' ' << r.error << '\n';
  return o.str();
}

absl::StatusOr<RunResult> ParseRunResult(const std::string& line) {
  std::istringstream in(line);
  RunResult r;
  std::string version;
  size_t n = 0;
  in >> version >> r.seconds >> r.teardown_seconds >> r.ops >> r.baseline_rss >> r.peak_rss >>
      r.final_rss >> r.minor_faults >> r.major_faults >> n;
  if (!in || version != "v1" || n > 1000000) {
    return absl::InternalError(absl::StrCat("malformed result from child: ", line.substr(0, 80)));
  }
  r.rss_course.resize(n);
  for (size_t i = 0; i < n; ++i) in >> r.rss_course[i];
  if (!in) return absl::InternalError("truncated result from child");
  std::getline(in, r.error);
  if (!r.error.empty() && r.error[0] == ' ') r.error.erase(0, 1);
  return r;
}

absl::StatusOr<RunResult> RunInChild(const std::function<RunResult()>& run) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  std::fflush(nullptr);
  // Free heap memory the parent still holds resident would be inherited and
  // reused for free by allocators built on malloc: give it back first.
  malloc_trim(0);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    const std::string out = SerializeRunResult(run());
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t w = write(fds[1], out.data() + done, out.size() - done);
      if (w <= 0) _exit(3);
      done += static_cast<size_t>(w);
    }
    _exit(0);  // no atexit handlers, no static destructors: the parent owns those
  }
  close(fds[1]);
  std::string line;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return absl::AbortedError(
        absl::StrCat("the run crashed with signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::AbortedError(absl::StrCat("the run exited with code ", WEXITSTATUS(status)));
  }
  return ParseRunResult(line);
}

}  // namespace alloctrace
