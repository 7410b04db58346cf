// liballoctrace_capture.so, part 1 of 2: the replaced libc and C++
// allocation functions. Part 2, capture_session.cc, decides whether and
// where to record (start, fork, exec, exit).
//
// Replaces the C allocation functions (malloc, free, calloc, realloc,
// reallocarray, memalign, posix_memalign, aligned_alloc, valloc, pvalloc),
// every replaceable global operator new/delete, _exit/_Exit and the exec
// family (see capture_session.h for why). Only these are exported
// (preload.lds). Each allocation function calls glibc's real allocator
// through its exported __libc_* entry points (no dlsym, so no bootstrap
// recursion) and records the event into Recorder::Global(), all in arena 0
// (the global heap). malloc_usable_size is not an event and is left to glibc.
// The exec functions are glibc's next definitions, found with dlsym in the
// constructor (dlsym may allocate; a vfork child must not).
//
// Reentrancy: a replaced function records only if its thread is not
// excluded, and excludes it while it records, so allocations made by the
// recorder (and by glibc inside the call) go straight to glibc unrecorded.
//
// What is recorded:
// - Sizes: elem_size 1, count = bytes; calloc(n, size) records elem_size =
//   size, count = n, with the shape's zeroed flag; sized delete is a FREE
//   (the size is already in the ALLOC).
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
// Limits: a program (or library) that brings its own malloc, or a static
// binary, bypasses these functions and records nothing. The library must be
// preloaded, not dlopen()ed (its thread-locals use the initial-exec model).
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <new>

#include "absl/base/attributes.h"
#include "alloctrace/base/bits.h"
#include "alloctrace/tracer/call_sites.h"
#include "alloctrace/tracer/capture/capture_session.h"
#include "alloctrace/tracer/recorder.h"

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

// Returns true if the caller should record this call; then the thread is
// excluded (its recursive allocations, and the recorder's, go straight to
// glibc) until Leave().
inline bool Enter() {
  if (Recorder::ThreadExcluded()) return false;
  if (!SessionRecording()) return false;
  Recorder::SetThreadExcluded(true);
  return true;
}

inline void Leave() { Recorder::SetThreadExcluded(false); }

// The call site of an allocation whose replaced (exported) function has
// frame `frame`: 0 unless call sites are on. Called with the thread
// excluded (interning a new stack allocates).
__attribute__((noinline)) uint32_t SiteOfSlow(const void* frame) {
  uint64_t pcs[kMaxRecordedDepth];
  const int n = WalkFrames(frame, pcs, g_call_site_depth);
  return InternStack(pcs, n);
}
inline uint32_t SiteOf(const void* frame) {
  return __builtin_expect(g_call_site_depth == 0, 1) ? 0 : SiteOfSlow(frame);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RecordBytes(void* p, size_t bytes, uint8_t align_log2,
                                                     const void* frame) {
  g_recorder->RecordAlloc(p, 0, 1, bytes, align_log2, SiteOf(frame));
}

void* ReallocImpl(void* old, size_t bytes, const void* frame) {
  if (!Enter()) return __libc_realloc(old, bytes);
  void* p;
  if (old == nullptr) {
    p = __libc_realloc(nullptr, bytes);
    if (p != nullptr) RecordBytes(p, bytes, kMallocAlignLog2, frame);
  } else if (bytes == 0) {
    // glibc frees the block and returns NULL: record the free first.
    g_recorder->RecordFree(old, 0);
    p = __libc_realloc(old, 0);
    if (p != nullptr) RecordBytes(p, 0, kMallocAlignLog2, frame);
  } else {
    p = __libc_realloc(old, bytes);
    if (p != nullptr) {
      g_recorder->RecordRealloc(old, p, 0, bytes, kMallocAlignLog2, SiteOf(frame));
    }
  }
  Leave();
  return p;
}

void* MemalignImpl(size_t alignment, size_t bytes, const void* frame) {
  if (!Enter()) return __libc_memalign(alignment, bytes);
  void* p = __libc_memalign(alignment, bytes);
  if (p != nullptr) RecordBytes(p, bytes, Log2Ceil(alignment), frame);
  Leave();
  return p;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void FreeImpl(void* p) {
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
void* NewImpl(size_t asked, size_t alignment, bool nothrow, const void* frame) {
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
    if (p != nullptr) {
      RecordBytes(p, asked, aligned ? Log2Ceil(alignment) : kMallocAlignLog2, frame);
    }
    Leave();
  }
  if (p == nullptr && !nothrow) throw std::bad_alloc();
  return p;
}

// glibc's exec functions, resolved in the constructor.
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

// Runs one exec function: the session stops first (an exec'd image runs
// no destructors) and starts again in a new file if exec returns.
template <typename F, typename... Args>
int Exec(F fn, Args... args) {
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const bool stopped = StopBeforeExec();
  const int result = fn(args...);
  if (stopped) ResumeAfterFailedExec();
  return result;
}

__attribute__((constructor)) void CaptureInit() {
  const int saved_errno = errno;
  Recorder::SetThreadExcluded(true);
  Resolve(&g_execve, "execve");
  Resolve(&g_execv, "execv");
  Resolve(&g_execvp, "execvp");
  Resolve(&g_execvpe, "execvpe");
  Resolve(&g_fexecve, "fexecve");
  StartSession();
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
using alloctrace::capture_internal::SiteOf;

extern "C" {

void* malloc(size_t bytes) {
  if (!Enter()) return __libc_malloc(bytes);
  void* p = __libc_malloc(bytes);
  if (p != nullptr) RecordBytes(p, bytes, kMallocAlignLog2, __builtin_frame_address(0));
  Leave();
  return p;
}

void free(void* p) { FreeImpl(p); }

void* calloc(size_t n, size_t size) {
  if (!Enter()) return __libc_calloc(n, size);
  void* p = __libc_calloc(n, size);
  if (p != nullptr) {
    // Recorded as zeroed, so malloc-family replays call calloc too.
    const uint32_t site = SiteOf(__builtin_frame_address(0));
    if (size <= UINT32_MAX) {
      g_recorder->RecordCalloc(p, 0, static_cast<uint32_t>(size), n, kMallocAlignLog2, site);
    } else {  // calloc succeeded: no overflow
      g_recorder->RecordCalloc(p, 0, 1, n * size, kMallocAlignLog2, site);
    }
  }
  Leave();
  return p;
}

void* realloc(void* p, size_t bytes) { return ReallocImpl(p, bytes, __builtin_frame_address(0)); }

void* reallocarray(void* p, size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return ReallocImpl(p, bytes, __builtin_frame_address(0));
}

void* memalign(size_t alignment, size_t bytes) {
  return MemalignImpl(alignment, bytes, __builtin_frame_address(0));
}

void* aligned_alloc(size_t alignment, size_t bytes) {
  return MemalignImpl(alignment, bytes, __builtin_frame_address(0));
}

int posix_memalign(void** out, size_t alignment, size_t bytes) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
    return EINVAL;
  }
  const int saved_errno = errno;
  void* p = MemalignImpl(alignment, bytes, __builtin_frame_address(0));
  errno = saved_errno;
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t bytes) {
  if (!Enter()) return __libc_valloc(bytes);
  void* p = __libc_valloc(bytes);
  if (p != nullptr) {
    RecordBytes(p, bytes, alloctrace::Log2Ceil(getpagesize()), __builtin_frame_address(0));
  }
  Leave();
  return p;
}

void* pvalloc(size_t bytes) {
  if (!Enter()) return __libc_pvalloc(bytes);
  void* p = __libc_pvalloc(bytes);
  if (p != nullptr) {
    const size_t page = static_cast<size_t>(getpagesize());
    const size_t rounded = bytes == 0 ? page : (bytes + page - 1) / page * page;
    RecordBytes(p, rounded, alloctrace::Log2Ceil(page), __builtin_frame_address(0));
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
void* operator new(size_t n) { return NewImpl(n, 0, false, __builtin_frame_address(0)); }
void* operator new[](size_t n) { return NewImpl(n, 0, false, __builtin_frame_address(0)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return NewImpl(n, 0, true, __builtin_frame_address(0));
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return NewImpl(n, 0, true, __builtin_frame_address(0));
}
void* operator new(size_t n, std::align_val_t a) {
  return NewImpl(n, static_cast<size_t>(a), false, __builtin_frame_address(0));
}
void* operator new[](size_t n, std::align_val_t a) {
  return NewImpl(n, static_cast<size_t>(a), false, __builtin_frame_address(0));
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewImpl(n, static_cast<size_t>(a), true, __builtin_frame_address(0));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewImpl(n, static_cast<size_t>(a), true, __builtin_frame_address(0));
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
