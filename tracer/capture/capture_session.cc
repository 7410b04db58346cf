#include "alloctrace/tracer/capture/capture_session.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"
#include "alloctrace/base/scoped_fd.h"
#include "alloctrace/base/utf8.h"
#include "alloctrace/tracer/call_sites.h"

// Exported (preload.lds): an instrumented program's own recorder finds it
// and stands aside (Recorder::AutoStart), since this library records all of
// the program's allocations into the file that recorder would write.
extern "C" __attribute__((visibility("default"))) const int alloctrace_capture_preloaded = 1;

namespace alloctrace::capture_internal {

std::atomic<int> g_session_state{kOff};
Recorder* g_recorder = nullptr;
int g_call_site_depth = 0;

namespace {

pid_t g_recording_pid = 0;  // the process whose recording g_session_state describes
bool g_recording_forked = false;
bool g_verbose = false;
// Collector(), found once per image at its start (a forked child has its
// parent's image, and looks nothing up in the loader after the fork).
std::string* g_collector = nullptr;

// Best effort: there is nowhere else to report a failure to.
void WriteStderr(std::string_view s) { (void)WriteAll(2, s); }

std::string ReadFile(const char* path) {
  std::string out;
  const ScopedFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return out;
  (void)ReadAll(fd.get(), &out);  // what was read before an error is still useful
  return out;
}

// proto3 strings must be UTF-8: anything else becomes '?'. Control
// characters do too (but tab), to keep labels on one line.
std::string SanitizeUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = (c < 0x20 && c != '\t') ? 0 : Utf8SequenceLength(s, i);
    if (len != 0) {
      out.append(s, i, len);
      i += len;
    } else {
      out.push_back('?');
      ++i;
    }
  }
  return out;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// "dir/x.trace" + ".7" -> "dir/x.7.trace"; "dir/x" + ".7" -> "dir/x.7".
std::string InsertBeforeExtension(const std::string& path, const std::string& part) {
  static constexpr char kExt[] = ".trace";
  const size_t ext_len = sizeof(kExt) - 1;
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  if (path.size() >= base + ext_len + 1 &&
      path.compare(path.size() - ext_len, ext_len, kExt) == 0) {
    return path.substr(0, path.size() - ext_len) + part + kExt;
  }
  return path + part;
}

// Creates `path` exclusively, or the first free "path.N". Returns the name
// created, or "" with errno set.
std::string ReserveFile(const std::string& path) {
  for (int n = 0; n < 1000; ++n) {
    const std::string name = n == 0 ? path : InsertBeforeExtension(path, absl::StrCat(".", n));
    const ScopedFd fd(::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.valid()) return name;
    if (errno != EEXIST) return "";
  }
  errno = EEXIST;
  return "";
}

// The process's argv, from /proc/self/cmdline (NUL-separated).
std::vector<std::string> CommandLine() {
  std::vector<std::string> argv;
  const std::string cmdline = ReadFile("/proc/self/cmdline");
  for (size_t at = 0; at < cmdline.size();) {
    size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    argv.push_back(SanitizeUtf8(cmdline.substr(at, end - at)));
    at = end + 1;
  }
  return argv;
}

// Whether CPython's command line makes it ignore PYTHONMALLOC: -E (the
// PYTHON* variables ignored) or -I (isolated), alone or among other
// one-letter options (-Es, as in a "#!/usr/bin/python3 -Es" script), before
// the script, -c or -m ends the options.
bool IgnoresPythonEnvironment(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-' || a == "--") return false;  // the script, "-" or "--"
    if (a[1] == '-') continue;                                   // a long option
    for (size_t k = 1; k < a.size(); ++k) {
      const char c = a[k];
      if (c == 'E' || c == 'I') return true;
      if (c == 'c' || c == 'm') return false;  // the rest is the command or the module
      if (c == 'W' || c == 'X') {              // the rest, or the next word, is its value
        if (k + 1 == a.size()) ++i;
        break;
      }
    }
  }
  return false;
}

// "cpython" where the process runs CPython's cyclic garbage collector over
// objects it takes from malloc: the interpreter's PyGC_Collect in the
// global scope (an interpreter's executable, or a program linked with
// libpython) and PYTHONMALLOC naming malloc, not ignored (-E, -I), without
// which CPython takes its objects of 512 bytes or less from arenas of its
// own that malloc never sees. The collector reads every object it tracks
// at each collection, a read of the live heap that the replayer's
// --touch=auto makes for such a trace (replayer/engine/live_walk.h). ""
// otherwise. A failed lookup's message is taken and its buffer freed here,
// while the thread is excluded, so the program starts with no pending
// dlerror() and its trace with no free of a block it never saw allocated.
std::string Collector() {
  const char* m = ::getenv("PYTHONMALLOC");
  if (m == nullptr || (strcmp(m, "malloc") != 0 && strcmp(m, "malloc_debug") != 0)) return "";
  if (::dlsym(RTLD_DEFAULT, "PyGC_Collect") == nullptr) {
    ::dlerror();  // the message
    ::dlerror();  // and its buffer, freed
    return "";
  }
  return IgnoresPythonEnvironment(CommandLine()) ? "" : "cpython";
}

// Called with the thread excluded. Sets g_session_state to kOn or kOff.
void StartRecording(bool forked) {
  const pid_t pid = ::getpid();
  const char* out = ::getenv("ALLOCTRACE_OUT");
  std::string pattern = (out != nullptr && *out != '\0') ? out : "alloctrace.%p.trace";
  if (pattern.find("%p") == std::string::npos) {
    // Under capture, the program it started (and every image that program
    // execs: same pid, same parent) is the one process whose parent is
    // capture; any other process here is a child, forked or not.
    bool child = forked;
    const char* capture = ::getenv("ALLOCTRACE_CAPTURE_PARENT_PID");
    if (capture != nullptr && *capture != '\0' && std::to_string(::getppid()) != capture) {
      child = true;
    }
    if (child) pattern = InsertBeforeExtension(pattern, ".%p");
  }
  const std::string wanted = ReplaceAll(pattern, "%p", std::to_string(pid));
  const std::string path = ReserveFile(wanted);
  if (path.empty()) {
    WriteStderr(absl::StrCat("alloctrace: not recording: cannot create trace file ", wanted, ": ",
                             strerror(errno), "\n"));
    g_session_state.store(kOff);
    return;
  }

  const std::vector<std::string> argv = CommandLine();
  RecordingOptions options;
  options.path = path;
  options.program = argv.empty() ? "" : argv[0];
  const char* workload = ::getenv("ALLOCTRACE_WORKLOAD");
  if (workload != nullptr && *workload != '\0') {
    options.workload = SanitizeUtf8(workload);
  } else {
    const size_t slash = options.program.rfind('/');
    options.workload =
        slash == std::string::npos ? options.program : options.program.substr(slash + 1);
  }
  std::string joined;
  for (const std::string& a : argv) absl::StrAppend(&joined, joined.empty() ? "" : " ", a);
  options.labels["cmdline"] = joined;
  options.labels["capture"] = "LD_PRELOAD liballoctrace_capture.so";
  options.labels["pid"] = std::to_string(pid);
  options.labels["ppid"] = std::to_string(::getppid());
  if (forked) options.labels["forked"] = "true";
  if (g_call_site_depth > 0) options.labels["call_site_depth"] = std::to_string(g_call_site_depth);
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) options.labels["exe"] = SanitizeUtf8(std::string(exe, static_cast<size_t>(n)));
  if (g_collector != nullptr && !g_collector->empty()) options.labels["collector"] = *g_collector;
  options.flush_ms = 50;

  // The drainer thread inherits a mask with every signal blocked, so the
  // program's signals are never delivered to it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const absl::Status s = g_recorder->Start(options);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!s.ok()) {
    WriteStderr(absl::StrCat("alloctrace: not recording: ", s.message(), "\n"));
    g_session_state.store(kOff);
    return;
  }
  g_recording_pid = pid;
  g_recording_forked = forked;
  g_session_state.store(kOn, std::memory_order_release);
}

void StopRecording() {
  int expected = kOn;
  if (!g_session_state.compare_exchange_strong(expected, kOff)) {
    g_session_state.store(kOff);
    return;
  }
  RecordingStats stats;
  const absl::Status s = g_recorder->Stop(&stats);
  if (!s.ok()) {
    WriteStderr(absl::StrCat("alloctrace: ", s.message(), "\n"));
  } else if (g_verbose) {
    WriteStderr(absl::StrCat("alloctrace: pid ", ::getpid(), ": ", stats.events, " events, ",
                             stats.threads, " threads, ", stats.unmatched_frees,
                             " unmatched frees, ", stats.dropped_events, " dropped, writer ",
                             absl::SixDigits(stats.writer_cpu_seconds), " s CPU\n"));
  }
}

// ALLOCTRACE_CALL_SITES: frames per call stack, 0 (or unset) for none.
int CallSiteDepthFromEnv() {
  const char* v = ::getenv("ALLOCTRACE_CALL_SITES");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long depth = std::strtol(v, &end, 10);
  if (*end != '\0' || depth < 0 || depth > kMaxRecordedDepth) {
    WriteStderr(absl::StrCat("alloctrace: ALLOCTRACE_CALL_SITES=", v,
                             " is not a frame count from 0 to ", kMaxRecordedDepth,
                             ": recording without call sites\n"));
    return 0;
  }
  return static_cast<int>(depth);
}

void AtForkChild() {
  const int state = g_session_state.load();
  if (state == kOff) return;
  g_recorder->AbandonAfterFork();
  ResetCallSitesAfterFork();
  g_session_state.store(kChildPending);
}

bool ShouldStopHere() {
  return g_session_state.load() == kOn && !Recorder::ThreadExcluded() &&
         ::getpid() == g_recording_pid;
}

__attribute__((destructor)) void CaptureFini() { StopAtExit(); }

}  // namespace

void StartSession() {
  g_recorder = &Recorder::Global();
  const char* verbose = ::getenv("ALLOCTRACE_VERBOSE");
  g_verbose = verbose != nullptr && *verbose != '\0' && *verbose != '0';
  g_call_site_depth = CallSiteDepthFromEnv();
  g_collector = new std::string(Collector());  // never freed: read until exit
  pthread_atfork(nullptr, nullptr, &AtForkChild);
  StartRecording(/*forked=*/false);
}

__attribute__((noinline)) bool StartInChild() {
  int expected = kChildPending;
  if (!g_session_state.compare_exchange_strong(expected, kStarting)) {
    return g_session_state.load(std::memory_order_acquire) == kOn;
  }
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  StartRecording(/*forked=*/true);
  Recorder::SetThreadExcluded(false);
  errno = saved_errno;
  return g_session_state.load(std::memory_order_acquire) == kOn;
}

void StopAtExit() {
  if (!ShouldStopHere()) return;
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  StopRecording();
  Recorder::SetThreadExcluded(false);
  errno = saved_errno;
}

bool StopBeforeExec() {
  if (!ShouldStopHere()) return false;
  StopAtExit();
  return true;
}

void ResumeAfterFailedExec() {
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  StartRecording(g_recording_forked);
  Recorder::SetThreadExcluded(false);
  errno = saved_errno;
}

}  // namespace alloctrace::capture_internal
