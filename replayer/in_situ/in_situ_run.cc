#include "alloctrace/replayer/in_situ/in_situ_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "alloctrace/tracer/policy_switch.h"

extern char** environ;

namespace alloctrace {
namespace {

constexpr int kStderrTailLines = 5;
constexpr char kMallocPrefix[] = "alloctrace-malloc ";

// All of fd's contents from its start.
std::string ReadAll(int fd) {
  std::string s;
  if (lseek(fd, 0, SEEK_SET) < 0) return s;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  return s;
}

std::vector<std::string> LastLines(const std::string& text, int count) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    lines.emplace_back(l);
  }
  if (static_cast<int>(lines.size()) > count) lines.erase(lines.begin(), lines.end() - count);
  return lines;
}

// The child's environment: the parent's without the variables a run sets.
std::vector<std::string> ChildEnv(const ChildSpec& spec, int ack_fd) {
  std::vector<std::string> env;
  std::string old_preload;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view v(*e);
    if (absl::StartsWith(v, "LD_PRELOAD=")) {
      old_preload = std::string(v.substr(11));
      continue;
    }
    if (absl::StartsWith(v, "ALLOCTRACE_LAUNCH_LD_PRELOAD=") ||
        absl::StartsWith(v, absl::StrCat(policy_switch::kEnvPolicy, "=")) ||
        absl::StartsWith(v, absl::StrCat(policy_switch::kEnvAckFd, "="))) {
      continue;
    }
    env.emplace_back(v);
  }
  if (!spec.policy.empty())
    env.push_back(absl::StrCat(policy_switch::kEnvPolicy, "=", spec.policy));
  env.push_back(absl::StrCat(policy_switch::kEnvAckFd, "=", ack_fd));
  std::string preload = spec.preload;
  if (!preload.empty() && !spec.probe.empty()) absl::StrAppend(&preload, ":", spec.probe);
  if (!old_preload.empty()) {
    absl::StrAppend(&preload, preload.empty() ? "" : ":", old_preload);
  }
  // Set as LD_PRELOAD by the launcher, in the program only.
  if (!preload.empty()) env.push_back("ALLOCTRACE_LAUNCH_LD_PRELOAD=" + preload);
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (std::string& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Waits for pid until `deadline_s` seconds from `t0` (0: forever); kills
// its process group past it. Returns false on timeout.
bool WaitWithin(pid_t pid, double timeout_s, std::chrono::steady_clock::time_point t0, int* status,
                struct rusage* ru) {
#if defined(SYS_pidfd_open)
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  const int pidfd = -1;
#endif
  bool timed_out = false;
  if (pidfd >= 0 && timeout_s > 0) {
    while (true) {
      const double left =
          timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      struct pollfd p = {pidfd, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left * 1e3) + 1);
      if (ready > 0) break;
    }
  } else if (timeout_s > 0) {
    // No pidfd (kernel before 5.3): poll the child every millisecond.
    while (true) {
      siginfo_t si = {};
      if (waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          si.si_pid == pid) {
        break;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
          timeout_s) {
        timed_out = true;
        break;
      }
      usleep(1000);
    }
  }
  if (pidfd >= 0) close(pidfd);
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  while (wait4(pid, status, 0, ru) < 0 && errno == EINTR) {
  }
  return !timed_out;
}

}  // namespace

absl::StatusOr<LogFile> LogFile::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write the log ", path, ": ", strerror(errno)));
  }
  return LogFile(f);
}

LogFile::~LogFile() {
  if (f_ != nullptr) std::fclose(f_);
}

void LogFile::Append(const std::string& header, int stdout_fd, int stderr_fd) {
  std::fprintf(f_, "==== %s: stdout\n", header.c_str());
  const std::string out = ReadAll(stdout_fd);
  std::fwrite(out.data(), 1, out.size(), f_);
  std::fprintf(f_, "==== %s: stderr\n", header.c_str());
  const std::string err = ReadAll(stderr_fd);
  std::fwrite(err.data(), 1, err.size(), f_);
  std::fflush(f_);
}

ChildOutcome RunProgram(const ChildSpec& spec, LogFile& log, const std::string& header) {
  ChildOutcome o;
  const int out_fd = memfd_create("alloctrace-stdout", MFD_CLOEXEC);
  const int err_fd = memfd_create("alloctrace-stderr", MFD_CLOEXEC);
  int ack[2] = {-1, -1};
  int result[2] = {-1, -1};
  if (out_fd < 0 || err_fd < 0 || pipe2(ack, O_CLOEXEC | O_NONBLOCK) != 0 ||
      pipe2(result, O_CLOEXEC | O_NONBLOCK) != 0) {
    o.error = absl::StrCat("cannot set up the run: ", strerror(errno));
    for (int fd : {out_fd, err_fd, ack[0], ack[1], result[0], result[1]}) {
      if (fd >= 0) close(fd);
    }
    return o;
  }
  // The ends the launcher and program inherit (F_DUPFD clears close-on-exec).
  const int child_ack = fcntl(ack[1], F_DUPFD, 3);
  const int child_result = fcntl(result[1], F_DUPFD, 3);
  std::vector<std::string> env = ChildEnv(spec, child_ack);
  std::vector<std::string> argv = {spec.launcher, absl::StrCat(child_result)};
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  std::vector<char*> envp = Pointers(env);
  std::vector<char*> args = Pointers(argv);
  std::fflush(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // the time limit kills whatever the program started too
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execve(args[0], args.data(), envp.data());
    const std::string msg = absl::StrCat("cannot execute ", argv[0], ": ", strerror(errno), "\n");
    ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    _exit(127);
  }
  if (child_ack >= 0) close(child_ack);
  if (child_result >= 0) close(child_result);
  close(ack[1]);
  close(result[1]);
  if (pid < 0) {
    o.error = absl::StrCat("fork: ", strerror(errno));
  } else {
    int status = 0;
    struct rusage ru = {};
    const bool in_time = WaitWithin(pid, spec.timeout_seconds, t0, &status, &ru);
    std::string line;
    char rbuf[512];
    ssize_t rn;
    while ((rn = read(result[0], rbuf, sizeof rbuf)) > 0)
      line.append(rbuf, static_cast<size_t>(rn));
    int program_status = 0;
    long maxrss_kib = 0, minflt = 0, majflt = 0;
    const bool reported =
        std::sscanf(line.c_str(), "v1 %d %lf %lf %ld %ld %ld", &program_status, &o.run.wall_s,
                    &o.run.cpu_s, &maxrss_kib, &minflt, &majflt) == 6;
    o.run.peak_rss_bytes = static_cast<int64_t>(maxrss_kib) * 1024;
    o.run.minor_faults = minflt;
    o.run.major_faults = majflt;
    if (!in_time) {
      o.run.wall_s = spec.timeout_seconds;
      o.error =
          absl::StrFormat("killed after the time limit of %g s per run", spec.timeout_seconds);
    } else if (!reported) {
      o.error = absl::StrCat("the launcher ", spec.launcher, " reported nothing (",
                             WIFSIGNALED(status) ? absl::StrCat("signal ", WTERMSIG(status))
                                                 : absl::StrCat("exit ", WEXITSTATUS(status)),
                             ")");
    } else if (WIFSIGNALED(program_status)) {
      o.error = absl::StrCat("crashed with signal ", WTERMSIG(program_status), " (",
                             strsignal(WTERMSIG(program_status)), ")");
    } else if (WIFEXITED(program_status) && WEXITSTATUS(program_status) != 0) {
      o.error = absl::StrCat("exited with code ", WEXITSTATUS(program_status));
    }
  }
  close(result[0]);
  std::string acks;
  char buf[4096];
  ssize_t n;
  while ((n = read(ack[0], buf, sizeof buf)) > 0) acks.append(buf, static_cast<size_t>(n));
  close(ack[0]);
  for (absl::string_view line : absl::StrSplit(acks, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, policy_switch::kAckPrefix)) {
      if (o.acknowledged_policy.empty()) o.acknowledged_policy = std::string(line);
    } else if (absl::ConsumePrefix(&line, kMallocPrefix)) {
      if (o.malloc_provider.empty()) o.malloc_provider = std::string(line);
    }
  }
  if (!o.error.empty()) o.stderr_tail = LastLines(ReadAll(err_fd), kStderrTailLines);
  log.Append(absl::StrCat(header, o.error.empty() ? "" : absl::StrCat(" FAILED: ", o.error)),
             out_fd, err_fd);
  close(out_fd);
  close(err_fd);
  return o;
}

}  // namespace alloctrace
