#include "alloctrace/base/child_process.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// The test program, from the test's runfiles.
std::string TestProg() {
  const char* dir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(dir != nullptr ? dir : ".", "/alloctrace/base/child_process_testprog");
}

ChildExit RunTestProg(std::vector<std::string> args, const ChildLimits& limits = {}) {
  ChildSpec spec;
  spec.argv = {TestProg()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return ChildExit{};
  return child->Wait(limits);
}

TEST(ChildProcessTest, ExitStatusIsKept) {
  const ChildExit ok = RunTestProg({"exit", "0"});
  EXPECT_TRUE(ok.Succeeded());
  const ChildExit three = RunTestProg({"exit", "3"});
  EXPECT_FALSE(three.Succeeded());
  EXPECT_EQ(three.how, ChildExit::How::kExited);
  EXPECT_EQ(three.code, 3);
  EXPECT_EQ(ChildExitWords(three, {}), "exited with code 3");
}

TEST(ChildProcessTest, ACrashIsItsSignal) {
  const ChildExit e = RunTestProg({"segv"});
  EXPECT_EQ(e.how, ChildExit::How::kSignaled);
  EXPECT_EQ(e.signal, SIGSEGV);
  EXPECT_TRUE(absl::StartsWith(ChildExitWords(e, {}), "crashed with signal 11 ("))
      << ChildExitWords(e, {});
}

TEST(ChildProcessTest, KilledPastItsTimeLimit) {
  ChildLimits limits;
  limits.wall_seconds = 0.2;
  const ChildExit e = RunTestProg({"sleep", "30"}, limits);
  EXPECT_EQ(e.how, ChildExit::How::kTimedOut);
  EXPECT_GE(e.wall_seconds, 0.2);
  EXPECT_LT(e.wall_seconds, 10);
  EXPECT_EQ(ChildExitWords(e, limits), "killed after the time limit of 0.2 s per run");
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan's shadow memory is resident too
TEST(ChildProcessTest, KilledPastItsResidentMemoryLimit) {
  ChildLimits limits;
  limits.memory_bytes = int64_t{32} << 20;
  limits.wall_seconds = 30;
  const ChildExit e = RunTestProg({"alloc", "128"}, limits);
  EXPECT_EQ(e.how, ChildExit::How::kOverMemory);
  EXPECT_GT(e.resident_bytes, limits.memory_bytes);
  EXPECT_TRUE(absl::StrContains(ChildExitWords(e, limits), "passed the memory limit of 32 MiB"))
      << ChildExitWords(e, limits);
}
#endif

TEST(ChildProcessTest, DrainsAPipeLargerThanItsBuffer) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  ChildSpec spec;
  // 1 MiB: far past a pipe's 64 KiB, so the child blocks unless drained.
  spec.argv = {TestProg(), "write", absl::StrCat(fds[1]), "1048576"};
  spec.inherit_fds = {fds[1]};
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  ASSERT_TRUE(child.ok()) << child.status();
  close(fds[1]);
  std::string got;
  ChildLimits limits;
  limits.wall_seconds = 30;
  const ChildExit e = child->Wait(limits, fds[0], &got);
  close(fds[0]);
  EXPECT_TRUE(e.Succeeded()) << ChildExitWords(e, limits);
  EXPECT_EQ(got.size(), 1048576u);
}

// A child that answers each line written to `commands` with "got LINE"
// on `answers`, until `commands` is closed.
struct EchoChild {
  EchoChild() {
    int c[2], a[2];
    EXPECT_EQ(pipe2(c, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(a, O_CLOEXEC), 0);
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c",
                 absl::StrCat("while read l <&", c[0], "; do echo \"got $l\" >&", a[1], "; done")};
    spec.inherit_fds = {c[0], a[1]};
    absl::StatusOr<ChildProcess> started = ChildProcess::Start(spec);
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) child.emplace(*std::move(started));
    close(c[0]);
    close(a[1]);
    commands = c[1];
    answers = a[0];
  }
  ~EchoChild() {
    if (commands >= 0) close(commands);
    close(answers);
  }
  std::optional<ChildProcess> child;
  int commands = -1;
  int answers = -1;
};

TEST(ChildProcessTest, WaitsForAnAnswerAndTheChildRunsOn) {
  EchoChild echo;
  ASSERT_TRUE(echo.child.has_value());
  ChildLimits limits;
  limits.wall_seconds = 30;
  std::string received;
  auto lines = [&](int n) {
    return [&received, n] { return std::count(received.begin(), received.end(), '\n') >= n; };
  };
  ASSERT_EQ(write(echo.commands, "a\n", 2), 2);
  EXPECT_FALSE(echo.child->WaitFor(limits, echo.answers, &received, lines(1)).has_value());
  EXPECT_EQ(received, "got a\n");
  ASSERT_EQ(write(echo.commands, "b\n", 2), 2);
  EXPECT_FALSE(echo.child->WaitFor(limits, echo.answers, &received, lines(2)).has_value());
  EXPECT_EQ(received, "got a\ngot b\n");
  // No answer within its limit, counted from the call: killed.
  limits.wall_seconds = 0.2;
  std::optional<ChildExit> end = echo.child->WaitFor(limits, echo.answers, &received, lines(3));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->how, ChildExit::How::kTimedOut);
}

TEST(ChildProcessTest, AChildThatEndsBeforeItAnswersIsItsEnd) {
  EchoChild echo;
  ASSERT_TRUE(echo.child.has_value());
  close(echo.commands);  // its loop ends: it exits
  echo.commands = -1;
  ChildLimits limits;
  limits.wall_seconds = 30;
  std::string received;
  std::optional<ChildExit> end =
      echo.child->WaitFor(limits, echo.answers, &received, [] { return false; });
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(end->Succeeded()) << ChildExitWords(*end, limits);
  EXPECT_LT(end->wall_seconds, 30);
}

TEST(ChildProcessTest, AGroupIsKilledWithWhatItStarted) {
  ChildSpec spec;
  spec.argv = {TestProg(), "family"};
  spec.new_process_group = true;
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t group = child->pid();
  ChildLimits limits;
  limits.wall_seconds = 0.3;
  EXPECT_EQ(child->Wait(limits).how, ChildExit::How::kTimedOut);
  // Nothing of the group is left (the grandchild was killed with it).
  for (int i = 0; i < 100 && kill(-group, 0) == 0; ++i) usleep(10000);
  EXPECT_NE(kill(-group, 0), 0);
}

TEST(ChildProcessTest, AProgramThatCannotRunIsAnErrorOfStart) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/program"};
  absl::StatusOr<ChildProcess> missing = ChildProcess::Start(spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(),
            "cannot run /nonexistent/program: No such file or directory");
  const std::string plain = absl::StrCat(std::getenv("TEST_TMPDIR"), "/not_executable");
  std::ofstream(plain) << "text\n";
  spec.argv = {plain};
  absl::StatusOr<ChildProcess> denied = ChildProcess::Start(spec);
  ASSERT_FALSE(denied.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(denied.status())) << denied.status();
  spec.argv = {TestProg(), "exit", "0"};
  spec.working_dir = "/nonexistent/dir";
  absl::StatusOr<ChildProcess> no_dir = ChildProcess::Start(spec);
  ASSERT_FALSE(no_dir.ok());
  EXPECT_EQ(no_dir.status().message(), "cannot enter /nonexistent/dir: No such file or directory");
}

TEST(ChildProcessTest, EnvironmentAndDirectoryAreTheSpecs) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "test \"$ONLY\" = yes && test -z \"$HOME\" && test \"$(pwd)\" = \"$1\"", "sh", dir};
  spec.env = std::vector<std::string>{"ONLY=yes", "PATH=/usr/bin:/bin"};
  spec.working_dir = dir;
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_TRUE(child->Wait().Succeeded());
}

// Start blocks every signal around its vfork; the child's program starts
// with the caller's mask, not with everything blocked.
TEST(ChildProcessTest, TheChildStartsWithTheCallersSignalMask) {
  sigset_t usr1, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &before), 0);
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec grep SigBlk /proc/self/status"};
  spec.stdout_fd = fds[1];
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  close(fds[1]);
  ASSERT_TRUE(child.ok()) << child.status();
  std::string got;
  const ChildExit e = child->Wait(ChildLimits(), fds[0], &got);
  close(fds[0]);
  sigset_t expected;
  pthread_sigmask(SIG_SETMASK, &before, &expected);
  EXPECT_TRUE(e.Succeeded());
  // The kernel's hexadecimal mask: bit n - 1 for signal n (SIGUSR1 and
  // whatever the test was started with blocked).
  unsigned long long bits = 0;
  for (int sig = 1; sig <= 64; ++sig) {
    if (sigismember(&expected, sig) == 1) bits |= 1ull << (sig - 1);
  }
  ASSERT_NE(bits & (1ull << (SIGUSR1 - 1)), 0u);
  char line[64];
  std::snprintf(line, sizeof line, "SigBlk:\t%016llx\n", bits);
  EXPECT_EQ(got, line);
}

// Started, a child does not share its CPU with the caller while the caller
// may run elsewhere: the caller's polls would preempt it. A child that
// spins, started 20 times (without leaving, 9 to 12 of 20 shared on a
// 2-core machine; up to 3 allow for the scheduler moving either between
// the start and the look).
TEST(ChildProcessTest, TheCallerLeavesTheChildsCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "one CPU: nowhere to go";
  int shared = 0;
  for (int i = 0; i < 20; ++i) {
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", "while :; do :; done"};
    absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
    ASSERT_TRUE(child.ok()) << child.status();
    const int theirs = LastCpuOf(child->pid());
    ASSERT_GE(theirs, 0);
    shared += theirs == sched_getcpu();
    ChildLimits limits;
    limits.wall_seconds = 0.001;
    child->Wait(limits);
  }
  EXPECT_LE(shared, 3);
}

// The CPUs a running child may use, from /proc/PID/status
// ("Cpus_allowed_list:	0-1"); "" if unreadable.
std::string CpusAllowedOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Cpus_allowed_list:")) {
      const size_t at = line.find_first_not_of(" \t", line.find(':') + 1);
      return at == std::string::npos ? "" : line.substr(at);
    }
  }
  return "";
}

TEST(ChildProcessTest, APinnedChildRunsOnItsCpuAlone) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  for (int cpu : cpus) {
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", "while :; do :; done"};
    spec.cpu = cpu;
    absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
    ASSERT_TRUE(child.ok()) << child.status();
    EXPECT_EQ(CpusAllowedOf(child->pid()), std::to_string(cpu));
    ChildLimits limits;
    limits.wall_seconds = 0.001;
    child->Wait(limits);
  }
  // The parent keeps its own CPUs.
  EXPECT_EQ(AllowedCpus(), cpus);
  // A CPU this process may not use leaves the child where the parent may run.
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "while :; do :; done"};
  spec.cpu = CPU_SETSIZE - 1;
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(CpusAllowedOf(child->pid()), CpusAllowedOf(getpid()));
  ChildLimits limits;
  limits.wall_seconds = 0.001;
  child->Wait(limits);
}

TEST(FindProgramTest, PathsAreTheUsersAndNamesAreSearchedInPath) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string tool = dir + "/tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  chmod(tool.c_str(), 0755);
  // A relative path is relative to where the user typed the command.
  setenv("BUILD_WORKING_DIRECTORY", dir.c_str(), 1);
  absl::StatusOr<std::string> rel = FindProgram("./tool");
  ASSERT_TRUE(rel.ok()) << rel.status();
  EXPECT_EQ(*rel, dir + "/./tool");
  // A bare name is searched in PATH; an empty entry is the user's directory.
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  setenv("PATH", "/nonexistent::/bin", 1);
  absl::StatusOr<std::string> found = FindProgram("tool");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, dir + "/./tool");
  EXPECT_EQ(FindProgram("no-such-tool").status().message(),
            "cannot run no-such-tool: not found on PATH");
  setenv("PATH", saved.c_str(), 1);
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(FindProgram("/nonexistent/x").status().message(),
            "cannot run /nonexistent/x: no such file");
  const std::string plain = dir + "/plain";
  std::ofstream(plain) << "text\n";
  chmod(plain.c_str(), 0644);
  EXPECT_TRUE(absl::IsPermissionDenied(FindProgram(plain).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(FindProgram("").status()));
}

}  // namespace
}  // namespace alloctrace
