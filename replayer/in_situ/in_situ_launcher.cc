// in_situ_launcher RESULT_FD PROGRAM [ARGS...]: runs PROGRAM as a child of
// a small process and reports its wait4 figures on RESULT_FD as one line
//   "v1 <wait status> <wall s> <user+system s> <ru_maxrss KiB> <minflt> <majflt>\n".
//
// Why a launcher: ru_maxrss is the high-water mark of every memory image a
// process had, the one it was forked from included (and with vfork, the
// parent's, which the child runs on until its execve), so a program started
// straight from the replayer (tens of MiB of decoded trace) would report
// the replayer's RSS. A process this launcher forks starts from the
// launcher's few hundred KiB, so its ru_maxrss is the program's own.
//
// The program's LD_PRELOAD comes in ALLOCTRACE_LAUNCH_LD_PRELOAD, set as
// LD_PRELOAD in the program only, so the malloc under test never loads into
// the launcher (whose memory the program's image starts from).
//
// The launcher makes itself a process group leader, so that killing the
// group at the time limit takes the program (and what it started) along.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: in_situ_launcher RESULT_FD PROGRAM [ARGS...]\n");
    return 125;
  }
  // A bare descriptor, not base/'s ScopedFd: the launcher links libc alone, so
  // that the image the program's ru_maxrss starts from stays small.
  const int result_fd = std::atoi(argv[1]);
  setpgid(0, 0);
  const double t0 = Now();
  const pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    close(result_fd);
    const char* preload = std::getenv("ALLOCTRACE_LAUNCH_LD_PRELOAD");
    if (preload != nullptr) {
      setenv("LD_PRELOAD", preload, 1);
      unsetenv("ALLOCTRACE_LAUNCH_LD_PRELOAD");
    }
    execv(argv[2], argv + 2);
    std::fprintf(stderr, "cannot execute %s: %s\n", argv[2], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage ru = {};
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  const double wall = Now() - t0;
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  char line[256];
  const int n = std::snprintf(line, sizeof line, "v1 %d %.9f %.9f %ld %ld %ld\n", status, wall, cpu,
                              ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt);
  if (n <= 0 || write(result_fd, line, static_cast<size_t>(n)) != n) return 125;
  return 0;
}
