// capture: records every allocation of an unmodified program into a trace.
//
//   bazel run //tracer:capture -- --out=FILE [--workload=NAME] -- PROGRAM [ARGS...]
//
// Runs PROGRAM (a path, or a name looked up in PATH) with
// liballoctrace_capture.so preloaded, in the directory the command was typed
// in, waits for it, and prints one line per trace written: FILE for the
// program itself, and FILE with ".<pid>" before its extension for each child
// process that allocated (".N" after it for a same-pid exec). Exits with the
// program's exit code (128 + signal if it was killed); exits 2 on a usage
// error, if the program cannot be run, or if the program succeeded but left
// no valid trace.
//
// Flags: --out=FILE (required), --workload=NAME (header's workload; default
// the program's name), --preload=PATH (the library; default: from runfiles,
// or the installed lib/liballoctrace_capture.so).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/io.h"
#include "alloctrace/inspect/trace_stats.h"

extern char** environ;

namespace alloctrace {
namespace {

constexpr char kUsage[] =
    "usage: capture --out=FILE [--workload=NAME] [--preload=LIB] -- PROGRAM [ARGS...]";
constexpr char kLibRunfile[] = "alloctrace/tracer/capture/liballoctrace_capture.so";

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "capture: %s\n", message.c_str());
  std::exit(2);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Cwd() {
  char buf[4096];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? buf : ".";
}

// A path the user typed, made absolute (relative to where they typed it).
std::string AbsoluteUserPath(const std::string& path) {
  std::string p = ResolveUserPath(path);
  if (!p.empty() && p[0] != '/') p = Cwd() + "/" + p;
  return p;
}

std::string UserDirectory() {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  return (cwd != nullptr && *cwd != '\0') ? cwd : Cwd();
}

// PROGRAM as execve wants it: a path with a '/' is taken relative to the
// user's directory; a bare name is searched in PATH like execvp does.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    const std::string path = AbsoluteUserPath(name);
    if (!IsExecutableFile(path)) {
      Fail(absl::StrCat("program not found or not executable: ", name, " (", path, ")"));
    }
    return path;
  }
  const char* env_path = std::getenv("PATH");
  const std::string search = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
  for (absl::string_view dir : absl::StrSplit(search, ':')) {
    const std::string d = dir.empty() ? UserDirectory() : AbsoluteUserPath(std::string(dir));
    const std::string path = absl::StrCat(d, "/", name);
    if (IsExecutableFile(path)) return path;
  }
  Fail(absl::StrCat("program not found in PATH: ", name));
}

// The preload library: next to the runfiles of this binary, in RUNFILES_DIR
// (when run from a test), beside the binary (bazel-bin, a CMake build tree),
// or, installed by CMake (bin/alloctrace_capture), in the library directory
// ALLOCTRACE_LIB_DIR_FROM_BIN names relative to the binary (../lib).
std::string FindPreloadLibrary(const char* argv0) {
  std::vector<std::string> candidates;
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  const std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "";
  if (!self.empty()) candidates.push_back(absl::StrCat(self, ".runfiles/", kLibRunfile));
  candidates.push_back(absl::StrCat(argv0, ".runfiles/", kLibRunfile));
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* dir = std::getenv(var);
    if (dir != nullptr && *dir != '\0') candidates.push_back(absl::StrCat(dir, "/", kLibRunfile));
  }
  if (!self.empty()) {
    candidates.push_back(self.substr(0, self.rfind('/') + 1) + "liballoctrace_capture.so");
#ifdef ALLOCTRACE_LIB_DIR_FROM_BIN
    candidates.push_back(self.substr(0, self.rfind('/') + 1) + ALLOCTRACE_LIB_DIR_FROM_BIN
                         "/liballoctrace_capture.so");
#endif
  }
  for (const std::string& c : candidates) {
    if (IsFile(c)) {
      char real[4096];
      return ::realpath(c.c_str(), real) != nullptr ? real : c;
    }
  }
  Fail(absl::StrCat("cannot find liballoctrace_capture.so (looked in ",
                    absl::StrJoin(candidates, ", "),
                    "); build //tracer/capture or pass --preload=PATH"));
}

// FILE's siblings written by child processes: "stem.*.trace" (or "FILE.*"),
// changed since `since`.
std::vector<std::string> ChildTraces(const std::string& file, const timespec& since) {
  const size_t slash = file.rfind('/');
  const std::string dir = file.substr(0, slash + 1);
  std::string stem = file.substr(slash + 1);
  std::string ext;
  if (absl::EndsWith(stem, ".trace") && stem.size() > 6) {
    stem.resize(stem.size() - 6);
    ext = ".trace";
  }
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!absl::StartsWith(name, stem + ".") || !absl::EndsWith(name, ext) ||
        name.size() <= stem.size() + 1 + ext.size()) {
      continue;
    }
    const std::string path = dir + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (st.st_mtim.tv_sec < since.tv_sec ||
        (st.st_mtim.tv_sec == since.tv_sec && st.st_mtim.tv_nsec < since.tv_nsec)) {
      continue;
    }
    out.push_back(path);
  }
  ::closedir(d);
  // Numerically by what is between stem and extension: the program's own
  // exec'd images ("N") first, then children by pid ("PID", "PID.N").
  auto key = [&](const std::string& path) {
    const std::string middle = path.substr(dir.size() + stem.size() + 1,
                                           path.size() - dir.size() - stem.size() - 1 - ext.size());
    std::vector<uint64_t> k;
    for (absl::string_view part : absl::StrSplit(middle, '.')) {
      uint64_t v = ~uint64_t{0};
      (void)absl::SimpleAtoi(part, &v);
      k.push_back(v);
    }
    return k;
  };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    const auto ka = key(a), kb = key(b);
    return ka != kb ? ka < kb : a < b;
  });
  return out;
}

// One line about one trace (then `tail`); false if it is invalid.
bool Summarize(const std::string& path, const std::string& tail) {
  auto stats = ComputeTraceStats(path);
  if (!stats.ok()) {
    std::fprintf(stderr, "capture: %s%s\n", std::string(stats.status().message()).c_str(),
                 tail.c_str());
    return false;
  }
  std::printf(
      "capture: %s: %s, %llu events (%llu allocs, %llu frees, %llu reallocs), %llu threads, "
      "pid %u, %.2f bytes/event, %s%s\n",
      path.c_str(), stats->header.workload().c_str(),
      static_cast<unsigned long long>(stats->events),
      static_cast<unsigned long long>(stats->allocs), static_cast<unsigned long long>(stats->frees),
      static_cast<unsigned long long>(stats->reallocs),
      static_cast<unsigned long long>(stats->threads), stats->header.pid(),
      stats->bytes_per_event(),
      stats->has_footer ? "complete" : absl::StrCat("cut short (", stats->cut_short, ")").c_str(),
      tail.c_str());
  return true;
}

pid_t g_child = 0;

void ForwardSignal(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

int Main(int argc, char** argv) {
  std::string out, workload, preload;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (absl::StartsWith(arg, "--out=")) {
      out = arg.substr(6);
    } else if (absl::StartsWith(arg, "--workload=")) {
      workload = arg.substr(11);
    } else if (absl::StartsWith(arg, "--preload=")) {
      preload = arg.substr(10);
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s\n", kUsage);
      return 0;
    } else if (absl::StartsWith(arg, "-")) {
      Fail(absl::StrCat("unknown flag ", arg, "\n", kUsage));
    } else {
      break;  // the program, without "--"
    }
  }
  if (out.empty()) Fail(absl::StrCat("missing --out=FILE\n", kUsage));
  if (i >= argc) Fail(absl::StrCat("no program to run\n", kUsage));
  out = AbsoluteUserPath(out);
  const std::string program = FindProgram(argv[i]);
  preload = preload.empty() ? FindPreloadLibrary(argv[0]) : AbsoluteUserPath(preload);
  if (!IsFile(preload)) Fail(absl::StrCat("preload library not found: ", preload));
  // The program's own trace gets exactly this name (the library never
  // overwrites a file), so clear what an earlier run left.
  if (::unlink(out.c_str()) != 0 && errno != ENOENT) {
    Fail(absl::StrCat("cannot replace ", out, ": ", std::strerror(errno)));
  }

  // The environment: LD_PRELOAD first in line, where to write.
  std::vector<std::string> env;
  std::string ld_preload = preload;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    if (absl::StartsWith(var, "LD_PRELOAD=")) {
      if (var.size() > 11) absl::StrAppend(&ld_preload, ":", var.substr(11));
    } else if (!absl::StartsWith(var, "ALLOCTRACE_OUT=") &&
               !absl::StartsWith(var, "ALLOCTRACE_CAPTURE_PARENT_PID=") &&
               !(absl::StartsWith(var, "ALLOCTRACE_WORKLOAD=") && !workload.empty())) {
      env.push_back(var);
    }
  }
  env.push_back("LD_PRELOAD=" + ld_preload);
  env.push_back("ALLOCTRACE_OUT=" + out);
  if (!workload.empty()) env.push_back("ALLOCTRACE_WORKLOAD=" + workload);
  // The program is the process whose parent we are (capture_session.h).
  env.push_back(absl::StrCat("ALLOCTRACE_CAPTURE_PARENT_PID=", ::getpid()));
  const std::string dir = UserDirectory();

  timespec started;
  ::clock_gettime(CLOCK_REALTIME, &started);
  started.tv_sec -= 1;  // file times may be coarser than the clock
  std::fflush(stdout);
  std::fflush(stderr);
  // Reports a failed exec to the parent; closed by a successful one.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) Fail(absl::StrCat("pipe: ", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) Fail(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<char*> args;
    for (int k = i; k < argc; ++k) args.push_back(argv[k]);
    args.push_back(nullptr);
    std::string error;
    if (::chdir(dir.c_str()) != 0) {
      error = absl::StrCat("cannot enter ", dir, ": ", std::strerror(errno));
    } else {
      ::execve(program.c_str(), args.data(), envp.data());
      error = absl::StrCat("cannot run ", program, ": ", std::strerror(errno));
    }
    (void)WriteAll(pipe_fds[1], error);
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  g_child = pid;
  // Ctrl-C reaches the program (same process group); stay to report.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  struct sigaction forward = {};
  forward.sa_handler = ForwardSignal;
  ::sigaction(SIGTERM, &forward, nullptr);
  ::sigaction(SIGHUP, &forward, nullptr);

  // The pipe closes on exec (O_CLOEXEC): what was read by then is why the
  // program could not be run.
  std::string exec_error;
  (void)ReadAll(pipe_fds[0], &exec_error);
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!exec_error.empty()) Fail(exec_error);

  int code;
  std::string how;
  if (WIFSIGNALED(status)) {
    code = 128 + WTERMSIG(status);
    how =
        absl::StrCat("killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  } else {
    code = WEXITSTATUS(status);
    how = absl::StrCat("exited with ", code);
  }
  const std::string tail = absl::StrCat("; ", argv[i], " ", how);
  bool ok = true;
  if (!IsFile(out)) {
    std::fprintf(stderr,
                 "capture: no trace at %s: the program did not load the preload library "
                 "(static or setuid binary?) or could not create the file\n",
                 out.c_str());
    std::printf("capture: no trace%s\n", tail.c_str());
    ok = false;
  } else {
    ok = Summarize(out, tail);
  }
  // Child processes and exec'd images: a line each, up to a point.
  constexpr size_t kMaxLines = 10;
  const std::vector<std::string> children = ChildTraces(out, started);
  for (size_t k = 0; k < children.size() && k < kMaxLines; ++k) Summarize(children[k], "");
  if (children.size() > kMaxLines) {
    std::printf("capture: and %zu more traces from child processes beside %s\n",
                children.size() - kMaxLines, out.c_str());
  }
  std::fflush(stdout);
  if (!ok && code == 0) return 2;
  return code;
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) { return alloctrace::Main(argc, argv); }
