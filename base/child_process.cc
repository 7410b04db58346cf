#include "alloctrace/base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/scoped_fd.h"

extern char** environ;

namespace alloctrace {
namespace {

using Clock = std::chrono::steady_clock;

// What the child reports through the close-on-exec pipe when it cannot get
// to its program: which step failed, and errno.
struct StartFailure {
  int step;  // kEnterDirectory or kExecute
  int error;
};
constexpr int kEnterDirectory = 1;
constexpr int kExecute = 2;

std::vector<char*> Pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  p.reserve(v.size() + 1);
  for (std::string& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// In the vforked child, on the parent's memory until execve: only system
// calls, and writes to its own stack frame. First every signal this process
// handles goes back to its default (the child has its own table of
// handlers), then the parent's signal mask (`mask`) is restored: no handler
// of the parent's runs on the parent's memory in the child.
[[noreturn]] void BecomeChild(const ChildSpec& spec, const char* path, char* const* argv,
                              char* const* envp, int report_fd, const sigset_t* mask,
                              const cpu_set_t* cpu) {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction action;
    if (sigaction(sig, nullptr, &action) != 0) continue;
    if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
    action.sa_handler = SIG_DFL;
    action.sa_flags = 0;
    sigaction(sig, &action, nullptr);
  }
  sigprocmask(SIG_SETMASK, mask, nullptr);
  if (cpu != nullptr) sched_setaffinity(0, sizeof *cpu, cpu);  // this task only: the child
  if (spec.new_process_group) setpgid(0, 0);
  if (spec.stdin_null) {
    ScopedFd null_fd(open("/dev/null", O_RDONLY));
    if (null_fd.get() == STDIN_FILENO) null_fd.Release();  // stdin already (the parent had none)
    if (null_fd.valid()) dup2(null_fd.get(), STDIN_FILENO);
  }
  if (spec.stdout_fd >= 0) dup2(spec.stdout_fd, STDOUT_FILENO);
  if (spec.stderr_fd >= 0) dup2(spec.stderr_fd, STDERR_FILENO);
  for (int fd : spec.inherit_fds) fcntl(fd, F_SETFD, 0);
  StartFailure failure{kExecute, 0};
  if (!spec.working_dir.empty() && chdir(spec.working_dir.c_str()) != 0) {
    failure = StartFailure{kEnterDirectory, errno};
  } else {
    execve(path, argv, envp);
    failure.error = errno;
  }
  ssize_t ignored = write(report_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

absl::Status StartError(const ChildSpec& spec, const StartFailure& f) {
  if (f.step == kEnterDirectory) {
    return absl::NotFoundError(
        absl::StrCat("cannot enter ", spec.working_dir, ": ", strerror(f.error)));
  }
  const std::string& path = spec.path.empty() ? spec.argv[0] : spec.path;
  const std::string message = absl::StrCat("cannot run ", path, ": ", strerror(f.error));
  return f.error == EACCES || f.error == EPERM ? absl::PermissionDeniedError(message)
                                               : absl::NotFoundError(message);
}

// Moves the calling thread off `pid`'s CPU, if it shares it and may run on
// another. A child started by vfork wakes its parent at its execve, and
// the scheduler tends to wake a thread on its waker's CPU: the parent then
// shares the child's CPU, and each of its polls while the child runs
// (every kMemoryPollMs) preempts the child's timed passes. fork left the
// parent where it was. Narrowing the thread's CPUs migrates it; restoring
// them leaves it where it now is.
void LeaveCpuOf(pid_t pid) {
  const int mine = sched_getcpu();
  if (mine < 0 || LastCpuOf(pid) != mine) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2 ||
      !CPU_ISSET(mine, &allowed)) {
    return;
  }
  cpu_set_t others = allowed;
  CPU_CLR(mine, &others);
  if (sched_setaffinity(0, sizeof others, &others) == 0) {
    sched_setaffinity(0, sizeof allowed, &allowed);
  }
}

int OpenPidFd(pid_t pid) {
#if defined(SYS_pidfd_open)
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// Whether `pid` has ended (without reaping it).
bool Ended(pid_t pid) {
  siginfo_t si = {};
  return waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         si.si_pid == pid;
}

// Reads what `fd` has now; false at its end (or on an error).
bool DrainSome(int fd, std::string* out) {
  char buf[4096];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (out != nullptr) out->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

std::string Mib(int64_t bytes) {
  return absl::StrFormat("%.0f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

double ChildExit::CpuSeconds() const {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

absl::StatusOr<ChildProcess> ChildProcess::Start(const ChildSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("no program to run");
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = spec.env ? *spec.env : CurrentEnvironment();
  std::vector<char*> argv = Pointers(args);
  std::vector<char*> envp = Pointers(env);
  // The child reports a failed start here; its end closes on execve.
  absl::StatusOr<Pipe> report = Pipe::Make();
  if (!report.ok()) return report.status();
  const std::string& path = spec.path.empty() ? spec.argv[0] : spec.path;
  std::fflush(nullptr);
  // vfork, not fork: the child runs on this process's memory until its
  // execve, so starting it costs the same whatever this process holds
  // (fork copied the page tables of a replayer holding a decoded 11 M-op
  // trace for every run, and the child tore the copy down at its execve:
  // a tenth of a windowed measurement's time). Every signal is blocked
  // until the child has executed its program (BecomeChild).
  // The child's CPU, made here: the vforked child only makes system calls.
  cpu_set_t cpu;
  CPU_ZERO(&cpu);
  const bool pinned = spec.cpu >= 0 && spec.cpu < CPU_SETSIZE;
  if (pinned) CPU_SET(spec.cpu, &cpu);
  sigset_t all, mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &mask);
  const Clock::time_point started = Clock::now();
  const pid_t pid = vfork();
  if (pid == 0) {
    BecomeChild(spec, path.c_str(), argv.data(), envp.data(), report->write.get(), &mask,
                pinned ? &cpu : nullptr);
  }
  const int error = errno;
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  if (pid < 0) return absl::InternalError(absl::StrCat("vfork: ", strerror(error)));
  report->write.Reset();
  // The pipe closes on a successful execve: anything read is a failure.
  StartFailure failure{0, 0};
  ssize_t n;
  while ((n = read(report->read.get(), &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  report->read.Reset();
  if (n == static_cast<ssize_t>(sizeof failure)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return StartError(spec, failure);
  }
  LeaveCpuOf(pid);
  return ChildProcess(pid, spec.new_process_group, started);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), group_(other.group_), started_(other.started_) {
  other.pid_ = -1;
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0) return;
  Kill();
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void ChildProcess::Kill() {
  if (group_) kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
}

ChildProcess::Watched ChildProcess::Watch(const ChildLimits& limits, Clock::time_point since,
                                          int fd, std::string* received,
                                          const std::function<bool()>& enough, int64_t* resident) {
  const Clock::time_point deadline =
      since + std::chrono::microseconds(static_cast<int64_t>(limits.wall_seconds * 1e6));
  const ScopedFd pidfd_owner(OpenPidFd(pid_));
  const int pidfd = pidfd_owner.get();
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  bool reading = fd >= 0;
  Watched watched = Watched::kEnded;
  while (true) {
    int wait_ms = -1;
    if (limits.wall_seconds > 0) {
      const int64_t left_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left_ms <= 0) {
        watched = Watched::kTimedOut;
        break;
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left_ms + 1, 1 << 30));
    }
    if (limits.memory_bytes > 0) {
      const int64_t now = ResidentAnonBytes(pid_);
      if (now > limits.memory_bytes) {
        watched = Watched::kOverMemory;
        *resident = now;
        break;
      }
      wait_ms = wait_ms < 0 ? kMemoryPollMs : std::min(wait_ms, kMemoryPollMs);
    }
    // Without a pidfd (a kernel before 5.3) the end is polled for.
    if (pidfd < 0) wait_ms = wait_ms < 0 ? 5 : std::min(wait_ms, 5);
    struct pollfd fds[2];
    int nfds = 0;
    if (pidfd >= 0) fds[nfds++] = {pidfd, POLLIN, 0};
    if (reading) fds[nfds++] = {fd, POLLIN, 0};
    const int ready = poll(fds, static_cast<nfds_t>(nfds), wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (reading) reading = DrainSome(fd, received);
    if (enough && enough()) {
      watched = Watched::kEnough;
      break;
    }
    if (pidfd >= 0 ? (ready > 0 && (fds[0].revents & POLLIN) != 0) : Ended(pid_)) break;
  }
  return watched;
}

ChildExit ChildProcess::Reap(Watched watched, int64_t resident, int fd, std::string* received) {
  ChildExit end;
  const bool killed = watched == Watched::kTimedOut || watched == Watched::kOverMemory;
  if (killed) {
    end.how =
        watched == Watched::kTimedOut ? ChildExit::How::kTimedOut : ChildExit::How::kOverMemory;
    end.resident_bytes = resident;
    Kill();
  }
  int status = 0;
  while (wait4(pid_, &status, 0, &end.usage) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  end.wall_seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  // What the child wrote before it ended (a grandchild holding the pipe
  // open does not hold this up: the reads do not block).
  if (fd >= 0) DrainSome(fd, received);
  if (killed) return end;
  if (WIFSIGNALED(status)) {
    end.how = ChildExit::How::kSignaled;
    end.signal = WTERMSIG(status);
  } else {
    end.how = ChildExit::How::kExited;
    end.code = WEXITSTATUS(status);
  }
  return end;
}

ChildExit ChildProcess::Wait(const ChildLimits& limits, int drain_fd, std::string* drained) {
  int64_t resident = 0;
  const Watched watched = Watch(limits, started_, drain_fd, drained, nullptr, &resident);
  return Reap(watched, resident, drain_fd, drained);
}

std::optional<ChildExit> ChildProcess::WaitFor(const ChildLimits& limits, int fd,
                                               std::string* received,
                                               const std::function<bool()>& enough) {
  LeaveCpuOf(pid_);
  int64_t resident = 0;
  const Watched watched = Watch(limits, Clock::now(), fd, received, enough, &resident);
  if (watched == Watched::kEnough) return std::nullopt;
  return Reap(watched, resident, fd, received);
}

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

std::string ChildExitWords(const ChildExit& end, const ChildLimits& limits) {
  switch (end.how) {
    case ChildExit::How::kExited:
      return absl::StrCat("exited with code ", end.code);
    case ChildExit::How::kSignaled:
      return absl::StrCat("crashed with signal ", end.signal, " (", strsignal(end.signal), ")");
    case ChildExit::How::kTimedOut:
      return absl::StrFormat("killed after the time limit of %g s per run", limits.wall_seconds);
    case ChildExit::How::kOverMemory:
      return absl::StrCat("killed when its resident memory (", Mib(end.resident_bytes),
                          ") passed the memory limit of ", Mib(limits.memory_bytes));
  }
  return "ended";
}

std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  return cpus;
}

int LastCpuOf(pid_t pid) {
  // Field 39 of /proc/PID/stat.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // Fields 3 on follow the last ')' (the command name may hold any byte).
  const char* p = strrchr(buf, ')');
  if (p == nullptr) return -1;
  int field = 2;
  while (*p != '\0' && field < 39) {
    if (*p++ == ' ') ++field;
  }
  return field == 39 ? std::atoi(p) : -1;
}

absl::StatusOr<std::string> FindProgram(const std::string& name) {
  auto executable = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return absl::InvalidArgumentError("no program given");
  auto absolute = [&](const std::string& path) {
    const std::string p = ResolveUserPath(path);
    if (!p.empty() && p[0] == '/') return p;
    char cwd[4096];
    return std::string(getcwd(cwd, sizeof cwd) != nullptr ? cwd : ".") + "/" + p;
  };
  if (name.find('/') != std::string::npos) {
    const std::string path = absolute(name);
    if (executable(path)) return path;
    if (access(path.c_str(), F_OK) != 0) {
      return absl::NotFoundError(absl::StrCat("cannot run ", name, ": no such file"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot run ", name, ": not an executable file"));
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    const std::string candidate =
        absl::StrCat(dir.empty() ? absolute(".") : absolute(std::string(dir)), "/", name);
    if (executable(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("cannot run ", name, ": not found on PATH"));
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace alloctrace
