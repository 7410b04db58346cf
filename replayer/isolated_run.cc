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
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "replayer/os_stats.h"

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

bool WriteRunResult(int fd, const RunResult& r) {
  const std::string out = SerializeRunResult(r);
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t w = write(fd, out.data() + done, out.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

namespace {

// Reads the child's result line and reaps it.
absl::StatusOr<RunResult> CollectChild(pid_t pid, int read_fd) {
  std::string line;
  char buf[4096];
  while (true) {
    const ssize_t n = read(read_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(read_fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return absl::AbortedError(absl::StrCat("the run crashed with signal ", WTERMSIG(status), " (",
                                           strsignal(WTERMSIG(status)), ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::AbortedError(absl::StrCat("the run exited with code ", WEXITSTATUS(status)));
  }
  return ParseRunResult(line);
}

}  // namespace

absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv,
                                          const std::string& preload,
                                          const std::string& result_flag) {
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
  absl::StatusOr<RunResult> r = CollectChild(pid, fds[0]);
  if (!r.ok() && absl::StrContains(r.status().message(), "code 127")) {
    return absl::NotFoundError(absl::StrCat("cannot start ", argv[0]));
  }
  return r;
}

}  // namespace alloctrace
