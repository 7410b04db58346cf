// capture: records every allocation of an unmodified program into a trace.
//
//   bazel run //tracer:capture -- --out=FILE [--workload=NAME] -- PROGRAM [ARGS...]
//
// Runs PROGRAM (a path, or a name looked up in PATH: FindProgram) with
// liballoctrace_capture.so preloaded, in the directory the command was typed
// in, waits for it, and prints one line per trace written: FILE for the
// program itself, and FILE with ".<pid>" before its extension for each child
// process that allocated (".N" after it for a same-pid exec). Exits with the
// program's exit code (128 + signal if it was killed); exits 2 on a usage
// error, if the program cannot be run, or if the program succeeded but left
// no valid trace.
//
// Flags (Abseil's, as every tool here: --help lists them): --out=FILE
// (required), --workload=NAME (header's workload; default the program's
// name), --preload=PATH (the library; default: from runfiles, or the
// installed lib/liballoctrace_capture.so). The program starts after "--", or
// at the first argument that is not a flag.
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/io.h"
#include "alloctrace/base/output_file.h"
#include "alloctrace/inspect/trace_stats.h"
#include "alloctrace/tracer/call_sites.h"

ABSL_FLAG(std::string, out, "",
          "the program's trace, required; relative to where the command was typed; an old "
          "file of that name is removed first");
ABSL_FLAG(std::string, workload, "", "the header's workload; default: the program's name");
ABSL_FLAG(int, call_sites, 0,
          "record each allocation's call stack, this many frames deep (1 to 32; 0: none), "
          "for `inspect --sites`: the allocating call, then its callers through frame "
          "pointers (code built without them gives the allocating call only)");
ABSL_FLAG(std::string, preload, "",
          "the capture library to preload; default: the one built beside capture, or the "
          "installed lib/liballoctrace_capture.so");

namespace alloctrace {
namespace {

constexpr char kUsage[] =
    "usage: capture --out=FILE [--workload=NAME] [--call_sites=N] [--preload=LIB] -- PROGRAM "
    "[ARGS...]";
constexpr char kLibRunfile[] = "alloctrace/tracer/capture/liballoctrace_capture.so";

[[noreturn]] void Fail(absl::string_view message) {
  std::fprintf(stderr, "capture: %s\n", std::string(message).c_str());
  std::exit(2);
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
  auto stats = CountTraceEvents(path);
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

// What the command line asks for.
struct Request {
  std::string out;                   // absolute
  std::string workload;              // "": the program's name
  std::string preload;               // --preload as typed
  int call_sites = 0;                // frames per stack; 0: none
  std::vector<std::string> program;  // as typed: name, then arguments
};

// Parses the flags (an unknown one exits 2, as in every tool) and checks
// that the command line names a trace and a program; exits 2 if not.
Request ParseRequest(int argc, char** argv) {
  // --help lists capture's own flags (this file's), not only those of a
  // file named after the binary, which an installed alloctrace_capture is not.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "tracer/capture/");
  };
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(absl::StrCat(
      "records every allocation of an unmodified program into a trace.\n", kUsage,
      "\nexample: bazel run //tracer:capture -- --out=ls.trace -- ls /\n"
      "exit status: the program's (128 + signal if it was killed); 2 for a usage error, a\n"
      "program that cannot be run, or a program that succeeded but left no valid trace."));
  Request request;
  request.program = TakeProgramArgs(argc, argv, /*from_first_positional=*/true);
  const std::vector<char*> positional = ParseCommandLineOrExitUsage(argc, argv, "capture");
  if (positional.size() > 1) {
    Fail(absl::StrCat("unexpected argument ", positional[1], "\n", kUsage));
  }
  if (absl::GetFlag(FLAGS_out).empty()) Fail(absl::StrCat("missing --out=FILE\n", kUsage));
  if (request.program.empty()) Fail(absl::StrCat("no program to run\n", kUsage));
  request.out = AbsoluteUserPath(absl::GetFlag(FLAGS_out));
  // The library makes the trace a file of its own, read back here.
  if (OutputDescriptor(request.out) >= 0) {
    Fail(absl::StrCat("--out=", request.out,
                      ": capture writes its trace to a file of its own, not to a descriptor"));
  }
  // Through a symbolic link, the file it names is the one replaced (as the
  // other programs write a link's target), not the link.
  request.out = ResolveOutputPath(request.out);
  request.workload = absl::GetFlag(FLAGS_workload);
  request.preload = absl::GetFlag(FLAGS_preload);
  request.call_sites = absl::GetFlag(FLAGS_call_sites);
  if (request.call_sites < 0 || request.call_sites > kMaxRecordedDepth) {
    Fail(absl::StrCat("--call_sites=", request.call_sites, ": expected a frame count from 0 to ",
                      kMaxRecordedDepth, "\n", kUsage));
  }
  return request;
}

// The environment of the program: ours, with the library first in
// LD_PRELOAD, where to write, and capture's pid, by which the library knows
// the program from its children (capture_session.h).
std::vector<std::string> ProgramEnvironment(const Request& request, const std::string& preload) {
  std::vector<std::string> env;
  std::string ld_preload = preload;
  for (const std::string& var : CurrentEnvironment()) {
    if (absl::StartsWith(var, "LD_PRELOAD=")) {
      if (var.size() > 11) absl::StrAppend(&ld_preload, ":", var.substr(11));
    } else if (!absl::StartsWith(var, "ALLOCTRACE_OUT=") &&
               !absl::StartsWith(var, "ALLOCTRACE_CAPTURE_PARENT_PID=") &&
               !absl::StartsWith(var, "ALLOCTRACE_CALL_SITES=") &&
               !(absl::StartsWith(var, "ALLOCTRACE_WORKLOAD=") && !request.workload.empty())) {
      env.push_back(var);
    }
  }
  env.push_back("LD_PRELOAD=" + ld_preload);
  env.push_back("ALLOCTRACE_OUT=" + request.out);
  if (!request.workload.empty()) env.push_back("ALLOCTRACE_WORKLOAD=" + request.workload);
  if (request.call_sites > 0) {
    env.push_back(absl::StrCat("ALLOCTRACE_CALL_SITES=", request.call_sites));
  }
  env.push_back(absl::StrCat("ALLOCTRACE_CAPTURE_PARENT_PID=", ::getpid()));
  return env;
}

// Finds the program and the library and clears the way for the trace: how
// to start the program. Exits 2 if something is missing.
ChildSpec ProgramSpec(const Request& request, const char* argv0) {
  const absl::StatusOr<std::string> path = FindProgram(request.program[0]);
  if (!path.ok()) Fail(path.status().message());
  const std::string preload =
      request.preload.empty() ? FindPreloadLibrary(argv0) : AbsoluteUserPath(request.preload);
  if (!IsFile(preload)) Fail(absl::StrCat("preload library not found: ", preload));
  // Where the trace goes must take a file before the program runs: a
  // program's run may be long, or not repeatable. The library writes a new
  // regular file there and this program reads it back, so a device or a
  // FIFO is refused, never removed (as root, --out=/dev/null would take
  // /dev/null from the whole machine).
  if (const absl::Status st = CheckOutputFile(request.out, {*path, preload}); !st.ok()) {
    Fail(absl::StrCat(st.message(), "; nothing run"));
  }
  struct stat st;
  if (::stat(request.out.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    Fail(absl::StrCat(request.out, " is ", FileKind(st.st_mode),
                      ": capture writes its trace to a regular file; nothing run"));
  }
  // The program's own trace gets exactly this name (the library never
  // overwrites a file), so clear what an earlier run left.
  if (::unlink(request.out.c_str()) != 0 && errno != ENOENT) {
    Fail(absl::StrCat("cannot replace ", request.out, ": ", std::strerror(errno), "; nothing run"));
  }
  ChildSpec spec;
  spec.path = *path;
  spec.argv = request.program;  // argv[0] as typed, as a shell would give it
  spec.env = ProgramEnvironment(request, preload);
  spec.working_dir = UserDirectory();
  return spec;
}

// The program's pid once started; a signal to forward that came before.
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_pending_signal = 0;

void ForwardSignal(int sig) {
  if (g_child > 0) {
    ::kill(g_child, sig);
  } else {
    g_pending_signal = sig;
  }
}

// Starts the program (exits 2 if it cannot be run). SIGTERM and SIGHUP are
// forwarded to it, also one that comes while it starts; SIGINT and SIGQUIT
// reach it from the terminal (same process group) and are ignored here, so
// that capture stays to report. They are ignored only once the program has
// been executed: an ignored signal would stay ignored in it.
ChildProcess StartProgram(const ChildSpec& spec) {
  struct sigaction forward = {};
  forward.sa_handler = ForwardSignal;
  ::sigaction(SIGTERM, &forward, nullptr);
  ::sigaction(SIGHUP, &forward, nullptr);
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  if (!child.ok()) Fail(child.status().message());
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  g_child = child->pid();
  if (g_pending_signal != 0) ::kill(child->pid(), g_pending_signal);
  return std::move(*child);
}

// Waits for the program to end; a signal that comes later is not forwarded
// (its pid may be another process's by then).
ChildExit WaitForProgram(ChildProcess& program) {
  const ChildExit end = program.Wait();
  g_child = 0;
  return end;
}

// How the program ended, in capture's words, and the exit code that says it.
std::pair<int, std::string> ExitCodeAndWords(const ChildExit& end) {
  switch (end.how) {
    case ChildExit::How::kExited:
      return {end.code, absl::StrCat("exited with ", end.code)};
    case ChildExit::How::kSignaled:
      return {128 + end.signal,
              absl::StrCat("killed by signal ", end.signal, " (", strsignal(end.signal), ")")};
    default:  // a limit: capture sets none
      return {128 + SIGKILL, ChildExitWords(end, ChildLimits())};
  }
}

// Prints a line per trace the run wrote (the program's, then its children's
// and exec'd images', up to a point); returns capture's exit code.
int Report(const Request& request, const ChildExit& end, const timespec& started) {
  const auto [code, how] = ExitCodeAndWords(end);
  const std::string tail = absl::StrCat("; ", request.program[0], " ", how);
  const std::string& out = request.out;
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

int Main(int argc, char** argv) {
  const Request request = ParseRequest(argc, argv);
  const ChildSpec spec = ProgramSpec(request, argv[0]);
  timespec started;
  ::clock_gettime(CLOCK_REALTIME, &started);
  started.tv_sec -= 1;  // file times may be coarser than the clock
  ChildProcess program = StartProgram(spec);
  const ChildExit end = WaitForProgram(program);
  return Report(request, end, started);
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) { return alloctrace::Main(argc, argv); }
