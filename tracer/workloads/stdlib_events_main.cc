// stdlib_events: runs one of the shared_ptr article's workloads through an
// allocator that writes each allocation event as a line of text, so the
// workloads can be recorded under a standard library the recorder cannot be
// built with. Debian's Protocol Buffers and Abseil are built against
// libstdc++; a program built with clang++ -stdlib=libc++ cannot link them
// (their std::string is another type there). This program uses neither: it
// builds with either library, and events_to_trace (built as usual) turns its
// output into a trace. tools/record_libcxx.sh does both steps.
//
//   stdlib_events WORKLOAD SEED LISTS NODES ITERATIONS INSERTS OUT
//
// WORKLOAD is shared_ptr_new, make_shared or allocate_shared; the numbers are
// the workload's parameters (see `record --list`). Output, one item a line:
//   alloctrace-events 1
//   stdlib <libc++|libstdc++> <version macro>
//   compiler <name and version>
//   workload <name>
//   seed <n>
//   param <name> <value>          (four lines)
//   C <arena>                     a new arena (allocator instance), from 1
//   D <arena>                     its last copy was destroyed
//   A <address hex> <arena> <element bytes> <count> <alignment>
//   F <address hex> <arena>
//   end <number of event lines>
// Arena 0 is the global heap (what new and make_shared use). Exit status 0,
// 2 for a usage error, 1 if OUT cannot be written.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "alloctrace/tracer/arena_allocator.h"
#include "alloctrace/tracer/no_arena.h"
#include "alloctrace/tracer/workloads/shared_ptr_workloads.h"
#include "alloctrace/tracer/workloads/stdlib_name.h"

namespace alloctrace::workloads {
namespace {

class EventLog {
 public:
  static EventLog& Get() {
    static EventLog* const kLog = new EventLog;
    return *kLog;
  }
  bool Open(const char* path) {
    out_ = std::fopen(path, "w");
    if (out_ == nullptr) return false;
    std::setvbuf(out_, nullptr, _IOFBF, 1 << 20);
    return true;
  }
  std::FILE* out() { return out_; }
  uint32_t NewArena() {
    const uint32_t id = ++arenas_;
    Line("C %u\n", id);
    return id;
  }
  template <typename... Args>
  void Line(const char* format, Args... args) {
    std::fprintf(out_, format, args...);
    ++lines_;
  }
  bool Close() {
    std::fprintf(out_, "end %llu\n", static_cast<unsigned long long>(lines_));
    const bool ok = std::ferror(out_) == 0;
    return std::fclose(out_) == 0 && ok;
  }

 private:
  std::FILE* out_ = nullptr;
  uint32_t arenas_ = 0;
  uint64_t lines_ = 0;
};

// One allocator instance and its copies, reference-counted by hand so that
// an allocator is one pointer, as TraceAllocator is: allocate_shared keeps
// the allocator in the control block, whose size must not differ from a
// recorded trace's for any reason but the standard library. Logs D when the
// last copy goes. Single-threaded, as the workloads are.
class ArenaState {
 public:
  static ArenaState* Create() { return new ArenaState(EventLog::Get().NewArena()); }
  // Arena 0, never destroyed.
  static ArenaState* Global() {
    static ArenaState* const kGlobal = new ArenaState(0);
    kGlobal->Ref();
    return kGlobal;
  }
  void Ref() { ++refs_; }
  void Unref() {
    if (--refs_ == 0) Destroy();
  }
  uint32_t id() const { return id_; }

 private:
  explicit ArenaState(uint32_t id) : id_(id) {}
  // Out of line: inlined into two copies' destructors in a row, GCC 12
  // cannot see that the first leaves refs_ above zero, and warns of a use
  // after free (-Wuse-after-free) that cannot happen.
  __attribute__((noinline)) void Destroy() {
    EventLog::Get().Line("D %u\n", id_);
    delete this;
  }
  uint64_t refs_ = 1;
  const uint32_t id_;
};

// Behaves as TraceAllocator does (tracer/trace_allocator.h): a new arena per
// default-constructed instance, shared by copies and rebinds; a container's
// copy starts a new one; kNoArena is arena 0; memory from ::operator new.
// The container semantics (propagation, copies, equality) are
// ArenaAllocator's, the same as TraceAllocator's.
template <typename T>
class EventLogAllocator : public ArenaAllocator<EventLogAllocator, T> {
 public:
  EventLogAllocator() : state_(ArenaState::Create()) {}
  explicit EventLogAllocator(NoArenaTag) : state_(ArenaState::Global()) {}
  EventLogAllocator(const EventLogAllocator& other) noexcept : state_(other.state_) {
    state_->Ref();
  }
  template <typename U>
  EventLogAllocator(const EventLogAllocator<U>& other) noexcept  // NOLINT: implicit by design
      : state_(other.state_) {
    state_->Ref();
  }
  EventLogAllocator& operator=(const EventLogAllocator& other) noexcept {
    other.state_->Ref();
    state_->Unref();
    state_ = other.state_;
    return *this;
  }
  ~EventLogAllocator() { state_->Unref(); }

  T* allocate(std::size_t n) {
    void* p;
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      p = ::operator new (n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      p = ::operator new(n * sizeof(T));
    }
    EventLog::Get().Line("A %llx %u %zu %zu %zu\n",
                         static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)),
                         state_->id(), sizeof(T), n, alignof(T));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    EventLog::Get().Line("F %llx %u\n",
                         static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)),
                         state_->id());
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      ::operator delete (p, n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      ::operator delete(p, n * sizeof(T));
    }
  }
  uint32_t arena_id() const { return state_->id(); }

 private:
  template <typename U>
  friend class EventLogAllocator;
  template <template <typename...> class, typename, typename...>
  friend class ::alloctrace::ArenaAllocator;
  const void* arena_key() const { return state_; }

  ArenaState* state_;
};
static_assert(sizeof(EventLogAllocator<int>) == sizeof(void*));

bool ParseCount(const char* text, int64_t min, int64_t* value) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min) return false;
  *value = v;
  return true;
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "stdlib_events: %s\nusage: stdlib_events WORKLOAD SEED LISTS NODES ITERATIONS "
               "INSERTS OUT\n  WORKLOAD: shared_ptr_new, make_shared or allocate_shared\n",
               message);
  return 2;
}

int Run(int argc, char** argv) {
  if (argc != 8) return Usage("expected 7 arguments");
  const std::string workload = argv[1];
  void (*run)(const SharedPtrListSizes&, uint64_t) = nullptr;
  if (workload == "shared_ptr_new") {
    run = &RunSharedPtrListsWith<EventLogAllocator, SharedPtrKind::kNew>;
  } else if (workload == "make_shared") {
    run = &RunSharedPtrListsWith<EventLogAllocator, SharedPtrKind::kMakeShared>;
  } else if (workload == "allocate_shared") {
    run = &RunSharedPtrListsWith<EventLogAllocator, SharedPtrKind::kAllocateShared>;
  } else {
    return Usage(("unknown workload '" + workload + "'").c_str());
  }
  int64_t seed, lists, nodes, iterations, inserts;
  if (!ParseCount(argv[2], 0, &seed)) return Usage("SEED is not a non-negative integer");
  if (!ParseCount(argv[3], 1, &lists)) return Usage("LISTS is not an integer >= 1");
  if (!ParseCount(argv[4], 1, &nodes)) return Usage("NODES is not an integer >= 1");
  if (!ParseCount(argv[5], 1, &iterations)) return Usage("ITERATIONS is not an integer >= 1");
  if (!ParseCount(argv[6], 1, &inserts)) return Usage("INSERTS is not an integer >= 1");
  EventLog& log = EventLog::Get();
  if (!log.Open(argv[7])) {
    std::fprintf(stderr, "stdlib_events: cannot write %s: %s\n", argv[7], std::strerror(errno));
    return 1;
  }
  std::fprintf(log.out(), "alloctrace-events 1\nstdlib %s %s\ncompiler %s\nworkload %s\n",
               StdlibName(), StdlibVersion().c_str(), CompilerName().c_str(), workload.c_str());
  std::fprintf(log.out(),
               "seed %lld\nparam lists %lld\nparam nodes %lld\nparam iterations %lld\n"
               "param inserts_per_iteration %lld\n",
               static_cast<long long>(seed), static_cast<long long>(lists),
               static_cast<long long>(nodes), static_cast<long long>(iterations),
               static_cast<long long>(inserts));
  run({static_cast<uint64_t>(lists), nodes, iterations, inserts}, static_cast<uint64_t>(seed));
  if (!log.Close()) {
    std::fprintf(stderr, "stdlib_events: error writing %s\n", argv[7]);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace alloctrace::workloads

int main(int argc, char** argv) { return alloctrace::workloads::Run(argc, argv); }
