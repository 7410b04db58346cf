// liballoctrace_capture.so: whole-program allocation capture by LD_PRELOAD.
//
// Replaces the C allocation functions (malloc, free, calloc, realloc,
// reallocarray, memalign, posix_memalign, aligned_alloc, valloc, pvalloc) and
// every replaceable global operator new/delete. Each replacement calls glibc's
// real allocator through its exported __libc_* entry points (no dlsym, so no
// bootstrap recursion) and records the event into Recorder::Global(), all in
// arena 0 (the global heap). malloc_usable_size is not an event and is left to
// glibc.
//
// What is recorded:
// - Sizes: elem_size 1, count = bytes; calloc(n, size) records elem_size =
//   size, count = n, with the shape's zeroed flag; sized delete is a FREE (the size is already in the ALLOC).
// - Alignment: what the caller is guaranteed or asked for. malloc, calloc,
//   realloc and plain operator new guarantee alignof(max_align_t) = 16 on
//   x86-64 (__STDCPP_DEFAULT_NEW_ALIGNMENT__), so they record 16;
//   memalign, posix_memalign, aligned_alloc and aligned new record the
//   alignment asked for (rounded up to a power of two, as glibc does), even
//   below 16; valloc and pvalloc record the page size (pvalloc's size is
//   rounded up to whole pages, as it is usable).
// - Order: a FREE is recorded before the block goes back to glibc, an ALLOC
//   after it came out, so another thread reusing the address is always
//   ordered after the free. REALLOC is recorded after glibc's realloc: if the
//   block moved and another thread sharing its malloc arena gets the old
//   address in that window, the trace writer sees an allocation of a live
//   address (it frees the old object first and counts an unmatched free).
//
// Lifetime:
// - Starts in a constructor: ALLOCTRACE_OUT names the file (`%p` is replaced
//   by the pid; default `alloctrace.%p.trace`), ALLOCTRACE_WORKLOAD the
//   workload (default: the program's name); labels carry the command line
//   from /proc/self/cmdline. Allocations made before the constructor runs are
//   not recorded; their frees are dropped by the writer and counted as
//   unmatched frees.
// - A name is never overwritten: the file is created exclusively, and if it
//   exists (an exec'd image keeps its pid; an old run may have used the pid)
//   ".1", ".2", ... is put before a ".trace" extension (or appended).
// - fork: the child abandons the parent's recording (its writer thread does
//   not exist there) and starts its own trace lazily, at its first allocation,
//   so a child that only execs leaves no file. If ALLOCTRACE_OUT has no `%p`,
//   a child (a forked process, or any process whose pid is not
//   ALLOCTRACE_ROOT_PID when that is set) puts ".<pid>" before the extension.
// - exit: a destructor stops the recording and writes the footer. It runs
//   after the program's atexit handlers and static destructors. _exit and
//   _Exit (dash, for one, ends with _exit) are replaced too and stop the
//   recording first, unless called from inside an allocation function (a
//   signal handler interrupting one) or from a vfork child (another pid
//   sharing our memory).
// - exec (execve, execv, execvp, execvpe, fexecve, execl, execlp, execle)
//   stops the recording first, so the old image's trace is complete; if exec
//   fails, recording goes on in a new file (the next free name). The new
//   image writes its own trace (same pid: the next free name).
// - Anything else that ends the process (a fatal signal, a raw exit_group)
//   leaves every chunk already written (the writer flushes every
//   50 ms) and no footer: the trace reads as cut short. No signal handlers
//   are installed: they would change the program's own signal behaviour.
//
// Limits: a program (or library) that brings its own malloc, or a static
// binary, bypasses these functions and records nothing. The library must be
// preloaded, not dlopen()ed (its thread-locals use the initial-exec model).
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tracer/recorder.h"

extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
}

namespace alloctrace {
namespace capture_internal {
namespace {

// malloc's guarantee on x86-64 (alignof(max_align_t)), as log2.
constexpr uint8_t kMallocAlignLog2 = 4;
static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ == 16, "kMallocAlignLog2 assumes 16");

enum State : int {
  kOff = 0,           // before the constructor, after the destructor, or failed
  kOn = 1,            // recording
  kChildPending = 2,  // forked: start at the first allocation
  kStarting = 3,      // a thread is starting the child's recording
};

std::atomic<int> g_state{kOff};
Recorder* g_recorder = nullptr;
pid_t g_recording_pid = 0;  // the process whose recording g_state describes
bool g_recording_forked = false;
bool g_verbose = false;

void WriteStderr(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(2, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string ReadFile(const char* path) {
  std::string out;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// proto3 strings must be UTF-8: anything else becomes '?'.
std::string SanitizeUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    }
    if (ok && c < 0x20 && c != '\t') ok = false;  // keep labels on one line
    if (ok) {
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
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return name;
    }
    if (errno != EEXIST) return "";
  }
  errno = EEXIST;
  return "";
}

// Called with the thread excluded. Sets g_state to kOn or kOff.
void StartRecording(bool forked) {
  const pid_t pid = ::getpid();
  const char* out = ::getenv("ALLOCTRACE_OUT");
  std::string pattern = (out != nullptr && *out != '\0') ? out : "alloctrace.%p.trace";
  if (pattern.find("%p") == std::string::npos) {
    bool child = forked;
    const char* root = ::getenv("ALLOCTRACE_ROOT_PID");
    if (root != nullptr && *root != '\0' && std::to_string(pid) != root) child = true;
    if (child) pattern = InsertBeforeExtension(pattern, ".%p");
  }
  const std::string wanted = ReplaceAll(pattern, "%p", std::to_string(pid));
  const std::string path = ReserveFile(wanted);
  if (path.empty()) {
    WriteStderr(absl::StrCat("alloctrace: not recording: cannot create trace file ", wanted, ": ",
                             strerror(errno), "\n"));
    g_state.store(kOff);
    return;
  }

  // argv from /proc/self/cmdline: NUL-separated.
  std::vector<std::string> argv;
  const std::string cmdline = ReadFile("/proc/self/cmdline");
  for (size_t at = 0; at < cmdline.size();) {
    size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    argv.push_back(SanitizeUtf8(cmdline.substr(at, end - at)));
    at = end + 1;
  }
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
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) options.labels["exe"] = SanitizeUtf8(std::string(exe, static_cast<size_t>(n)));
  options.flush_ms = 50;

  // The writer thread inherits a mask with every signal blocked, so the
  // program's signals are never delivered to it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const absl::Status s = g_recorder->Start(options);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!s.ok()) {
    WriteStderr(absl::StrCat("alloctrace: not recording: ", s.message(), "\n"));
    g_state.store(kOff);
    return;
  }
  g_recording_pid = pid;
  g_recording_forked = forked;
  g_state.store(kOn, std::memory_order_release);
}

void StopRecording() {
  int expected = kOn;
  if (!g_state.compare_exchange_strong(expected, kOff)) {
    g_state.store(kOff);
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

// The child's first allocation starts its recording.
__attribute__((noinline)) bool StartInChild() {
  int expected = kChildPending;
  if (!g_state.compare_exchange_strong(expected, kStarting)) {
    return g_state.load(std::memory_order_acquire) == kOn;
  }
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  StartRecording(/*forked=*/true);
  Recorder::SetThreadExcluded(false);
  errno = saved_errno;
  return g_state.load(std::memory_order_acquire) == kOn;
}

void AtForkChild() {
  const int state = g_state.load();
  if (state == kOff) return;
  g_recorder->AbandonAfterFork();
  g_state.store(kChildPending);
}

// Returns true if the caller should record this call; then the thread is
// excluded (its recursive allocations, and the recorder's, go straight to
// glibc) until Leave().
inline bool Enter() {
  if (Recorder::ThreadExcluded()) return false;
  const int state = g_state.load(std::memory_order_acquire);
  if (__builtin_expect(state != kOn, 0)) {
    if (state != kChildPending || !StartInChild()) return false;
  }
  Recorder::SetThreadExcluded(true);
  return true;
}

inline void Leave() { Recorder::SetThreadExcluded(false); }

inline uint8_t Log2Ceil(size_t v) {
  if (v <= 1) return 0;
  return static_cast<uint8_t>(64 - __builtin_clzll(static_cast<unsigned long long>(v - 1)));
}

inline void RecordBytes(void* p, size_t bytes, uint8_t align_log2) {
  g_recorder->RecordAlloc(p, 0, 1, bytes, align_log2);
}

void* ReallocImpl(void* old, size_t bytes) {
  if (!Enter()) return __libc_realloc(old, bytes);
  void* p;
  if (old == nullptr) {
    p = __libc_realloc(nullptr, bytes);
    if (p != nullptr) RecordBytes(p, bytes, kMallocAlignLog2);
  } else if (bytes == 0) {
    // glibc frees the block and returns NULL: record the free first.
    g_recorder->RecordFree(old, 0);
    p = __libc_realloc(old, 0);
    if (p != nullptr) RecordBytes(p, 0, kMallocAlignLog2);
  } else {
    p = __libc_realloc(old, bytes);
    if (p != nullptr) g_recorder->RecordRealloc(old, p, 0, bytes, kMallocAlignLog2);
  }
  Leave();
  return p;
}

void* MemalignImpl(size_t alignment, size_t bytes) {
  if (!Enter()) return __libc_memalign(alignment, bytes);
  void* p = __libc_memalign(alignment, bytes);
  if (p != nullptr) RecordBytes(p, bytes, Log2Ceil(alignment));
  Leave();
  return p;
}

void FreeImpl(void* p) {
  if (p == nullptr) return;
  if (!Enter()) {
    __libc_free(p);
    return;
  }
  g_recorder->RecordFree(p, 0);
  __libc_free(p);
  Leave();
}

// operator new: retries through the new_handler as the standard requires.
void* NewImpl(size_t asked, size_t alignment, bool nothrow) {
  const size_t bytes = asked == 0 ? 1 : asked;
  const bool aligned = alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  const bool record = Enter();
  void* p;
  while (true) {
    p = aligned ? __libc_memalign(alignment, bytes) : __libc_malloc(bytes);
    if (p != nullptr) break;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) break;
    if (record) Leave();
    if (nothrow) {
      try {
        handler();
      } catch (...) {
        return nullptr;
      }
    } else {
      handler();
    }
    if (record) Recorder::SetThreadExcluded(true);
  }
  if (record) {
    if (p != nullptr) RecordBytes(p, asked, aligned ? Log2Ceil(alignment) : kMallocAlignLog2);
    Leave();
  }
  if (p == nullptr && !nothrow) throw std::bad_alloc();
  return p;
}

// At exit, _exit or _Exit. Not from inside a hook (a signal handler that
// interrupted one: the recorder's locks may be held), nor from a vfork child
// (its memory, and so g_state, is its parent's).
void StopAtExit() {
  if (g_state.load() != kOn || Recorder::ThreadExcluded() || ::getpid() != g_recording_pid) {
    return;
  }
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  StopRecording();
  Recorder::SetThreadExcluded(false);
  errno = saved_errno;
}

__attribute__((destructor)) void CaptureFini() { StopAtExit(); }

// glibc's exec functions, resolved in the constructor (dlsym may allocate;
// a vfork child must not).
using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
ExecveFn g_execve = nullptr;
ExecvFn g_execv = nullptr;
ExecvFn g_execvp = nullptr;
ExecveFn g_execvpe = nullptr;
FexecveFn g_fexecve = nullptr;

template <typename F>
void Resolve(F* fn, const char* name) {
  *fn = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

// Runs one exec function: stops the recording first (an exec'd image runs
// no destructors), restarts it in a new file if exec returns.
template <typename F, typename... Args>
int Exec(F fn, Args... args) {
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const bool stopped =
      g_state.load() == kOn && !Recorder::ThreadExcluded() && ::getpid() == g_recording_pid;
  if (stopped) StopAtExit();
  const int result = fn(args...);
  const int saved_errno = errno;
  if (stopped) {
    Recorder::SetThreadExcluded(true);
    StartRecording(g_recording_forked);
    Recorder::SetThreadExcluded(false);
  }
  errno = saved_errno;
  return result;
}

__attribute__((constructor)) void CaptureInit() {
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  g_recorder = &Recorder::Global();
  const char* verbose = ::getenv("ALLOCTRACE_VERBOSE");
  g_verbose = verbose != nullptr && *verbose != '\0' && *verbose != '0';
  pthread_atfork(nullptr, nullptr, &AtForkChild);
  Resolve(&g_execve, "execve");
  Resolve(&g_execv, "execv");
  Resolve(&g_execvp, "execvp");
  Resolve(&g_execvpe, "execvpe");
  Resolve(&g_fexecve, "fexecve");
  StartRecording(/*forked=*/false);
  Recorder::SetThreadExcluded(false);
  errno = saved_errno;
}

[[noreturn]] void ExitNow(int status) {
  StopAtExit();
  while (true) {
    ::syscall(SYS_exit_group, status);
    ::syscall(SYS_exit, status);
  }
}

}  // namespace
}  // namespace capture_internal
}  // namespace alloctrace

using alloctrace::capture_internal::Enter;
using alloctrace::capture_internal::Exec;
using alloctrace::capture_internal::ExitNow;
using alloctrace::capture_internal::FreeImpl;
using alloctrace::capture_internal::g_recorder;
using alloctrace::capture_internal::kMallocAlignLog2;
using alloctrace::capture_internal::Leave;
using alloctrace::capture_internal::MemalignImpl;
using alloctrace::capture_internal::NewImpl;
using alloctrace::capture_internal::ReallocImpl;
using alloctrace::capture_internal::RecordBytes;

extern "C" {

void* malloc(size_t bytes) {
  if (!Enter()) return __libc_malloc(bytes);
  void* p = __libc_malloc(bytes);
  if (p != nullptr) RecordBytes(p, bytes, kMallocAlignLog2);
  Leave();
  return p;
}

void free(void* p) { FreeImpl(p); }

void* calloc(size_t n, size_t size) {
  if (!Enter()) return __libc_calloc(n, size);
  void* p = __libc_calloc(n, size);
  if (p != nullptr) {
    // Recorded as zeroed, so malloc-family replays call calloc too.
    if (size <= UINT32_MAX) {
      g_recorder->RecordCalloc(p, 0, static_cast<uint32_t>(size), n, kMallocAlignLog2);
    } else {
      g_recorder->RecordCalloc(p, 0, 1, n * size, kMallocAlignLog2);  // calloc succeeded: no overflow
    }
  }
  Leave();
  return p;
}

void* realloc(void* p, size_t bytes) { return ReallocImpl(p, bytes); }

void* reallocarray(void* p, size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return ReallocImpl(p, bytes);
}

void* memalign(size_t alignment, size_t bytes) { return MemalignImpl(alignment, bytes); }

void* aligned_alloc(size_t alignment, size_t bytes) { return MemalignImpl(alignment, bytes); }

int posix_memalign(void** out, size_t alignment, size_t bytes) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
    return EINVAL;
  }
  const int saved_errno = errno;
  void* p = MemalignImpl(alignment, bytes);
  errno = saved_errno;
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t bytes) {
  if (!Enter()) return __libc_valloc(bytes);
  void* p = __libc_valloc(bytes);
  if (p != nullptr) RecordBytes(p, bytes, alloctrace::capture_internal::Log2Ceil(getpagesize()));
  Leave();
  return p;
}

void* pvalloc(size_t bytes) {
  if (!Enter()) return __libc_pvalloc(bytes);
  void* p = __libc_pvalloc(bytes);
  if (p != nullptr) {
    const size_t page = static_cast<size_t>(getpagesize());
    const size_t rounded = bytes == 0 ? page : (bytes + page - 1) / page * page;
    RecordBytes(p, rounded, alloctrace::capture_internal::Log2Ceil(page));
  }
  Leave();
  return p;
}

void _exit(int status) { ExitNow(status); }
void _Exit(int status) { ExitNow(status); }

int execve(const char* path, char* const argv[], char* const envp[]) {
  return Exec(alloctrace::capture_internal::g_execve, path, argv, envp);
}
int execv(const char* path, char* const argv[]) {
  return Exec(alloctrace::capture_internal::g_execv, path, argv);
}
int execvp(const char* file, char* const argv[]) {
  return Exec(alloctrace::capture_internal::g_execvp, file, argv);
}
int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return Exec(alloctrace::capture_internal::g_execvpe, file, argv, envp);
}
int fexecve(int fd, char* const argv[], char* const envp[]) {
  return Exec(alloctrace::capture_internal::g_fexecve, fd, argv, envp);
}

// The list forms: collect the arguments on the stack, as glibc does.
#define ALLOCTRACE_COLLECT_ARGS(arg0, ap, argv)                          \
  size_t argc = 1;                                                       \
  va_start(ap, arg0);                                                    \
  while (va_arg(ap, const char*) != nullptr) ++argc;                     \
  va_end(ap);                                                            \
  auto** argv = static_cast<char**>(alloca((argc + 1) * sizeof(char*))); \
  argv[0] = const_cast<char*>(arg0);                                     \
  va_start(ap, arg0);                                                    \
  for (size_t i = 1; i <= argc; ++i) argv[i] = va_arg(ap, char*);

int execl(const char* path, const char* arg0, ...) {
  va_list ap;
  ALLOCTRACE_COLLECT_ARGS(arg0, ap, argv)
  va_end(ap);
  return execv(path, argv);
}
int execlp(const char* file, const char* arg0, ...) {
  va_list ap;
  ALLOCTRACE_COLLECT_ARGS(arg0, ap, argv)
  va_end(ap);
  return execvp(file, argv);
}
int execle(const char* path, const char* arg0, ...) {
  va_list ap;
  ALLOCTRACE_COLLECT_ARGS(arg0, ap, argv)
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, argv, envp);
}
#undef ALLOCTRACE_COLLECT_ARGS

}  // extern "C"

// Every replaceable global operator new and delete (C++17).
void* operator new(size_t n) { return NewImpl(n, 0, false); }
void* operator new[](size_t n) { return NewImpl(n, 0, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return NewImpl(n, 0, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return NewImpl(n, 0, true); }
void* operator new(size_t n, std::align_val_t a) {
  return NewImpl(n, static_cast<size_t>(a), false);
}
void* operator new[](size_t n, std::align_val_t a) {
  return NewImpl(n, static_cast<size_t>(a), false);
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewImpl(n, static_cast<size_t>(a), true);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewImpl(n, static_cast<size_t>(a), true);
}

void operator delete(void* p) noexcept { FreeImpl(p); }
void operator delete[](void* p) noexcept { FreeImpl(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { FreeImpl(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { FreeImpl(p); }
void operator delete(void* p, size_t) noexcept { FreeImpl(p); }
void operator delete[](void* p, size_t) noexcept { FreeImpl(p); }
void operator delete(void* p, std::align_val_t) noexcept { FreeImpl(p); }
void operator delete[](void* p, std::align_val_t) noexcept { FreeImpl(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { FreeImpl(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { FreeImpl(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { FreeImpl(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { FreeImpl(p); }
