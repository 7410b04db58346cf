// The run-time policy switch behind TraceAllocator: with
// ALLOCTRACE_POLICY=<name> in the environment, every TraceAllocator serves
// its memory from that pool policy of pool/catalog.h and records nothing, so
// the user's own binary runs under any catalog policy without a rebuild.
//
//   ALLOCTRACE_POLICY unset or empty   record, as without the switch
//   ALLOCTRACE_POLICY=std              ::operator new / delete, no recording
//   ALLOCTRACE_POLICY=slab/st/single   the catalog's policy of that name
//   ALLOCTRACE_POLICY='OrderIndex=slab/st/stack;Registry=slab/mt/stack;*=std'
//                                      an assignment: a policy per class of
//                                      containers (TraceAllocator's tag, or
//                                      its value type as the compiler spells
//                                      it, as inspect lists them); `*` for
//                                      every other class and arena 0 (std if
//                                      absent)
//
// An entry names a class in full, or by its last names when the class's
// name ends with "::" + the entry outside template brackets (`Index` names
// `role::Index` and `a::b::Index`, not `Box<role::Index>`), so that a tag
// in a namespace is named as it is written in the code. Of the entries
// naming a class, the longest serves it, so the full name always wins. An
// entry that would serve two classes (`Index`, with `a::Index` and
// `b::Index` both used) is ambiguous: the switch stops the program when the
// second is seen, rather than guess.
//
// Holding is exactly the catalog's: a `stack` policy gives each
// default-constructed TraceAllocator (each arena) a pool of its own, shared
// by its copies and released with the last of them; a `single` policy uses
// the one process-wide pool of HoldingSingleton::Instance<PoolT>(), the
// very pool the adopted type would use.
//
// Single-threaded pools are checked: an `st` policy's pool is for one
// thread at a time. Each (an arena's under `stack`, the process-wide one
// under `single`) remembers the thread that used it last; a use by another
// thread while that one still runs stops the program with status 2 before
// the pool is touched, rather than let the unlocked pool corrupt its free
// lists and crash later, far from the cause:
//   alloctrace: ALLOCTRACE_POLICY gives class 'Registry' slab/st/stack, a
//   single-threaded pool, but thread 2 (tid 12345) used it while thread 1
//   (tid 12340, the main thread), which used it before, is still running;
//   give this class an mt policy (slab/mt/stack) or std
// (one line; a `single` pool is named by its policy, as one pool for the
// whole process, with the classes it serves). A use once that thread has
// ended is a hand-off and takes the pool over: a container a worker built
// and the main thread frees after join(). A forked child takes over the
// pools of the threads it did not inherit. The check sees threads, not
// locks: two running threads that take turns under a lock of the
// program's are stopped too. Threads are numbered in the order they first
// use an st pool. The adopted pool types are not checked, nor mt policies.
//
// The name is resolved once per process, when the first TraceAllocator is
// constructed (before its first allocation: an arena must know whether it
// records before it exists). An unknown name prints
//   alloctrace: unknown policy 'x' in ALLOCTRACE_POLICY; see replayer --list-policies
// on stderr and exits with status 2; never a silent fallback. When an
// accepted name is near the unknown one (base/did_you_mean.h), the line
// ends with "; did you mean 'slab/st/single'?". A malformed assignment (an
// entry without `=`, an empty class, a class or `*` named twice) or one
// naming an unknown policy exits 2 the same way, naming the entry. An
// ambiguous entry exits 2 when the second class is seen:
//   alloctrace: ALLOCTRACE_POLICY entry 'Index=slab/st/stack' matches two
//   classes, 'a::Index' and 'b::Index'; name the class in full
// (one line). An entry that named no class a container of the program used
// is known only at exit: then the switch prints the classes the program
// did use and exits with status 2. Each of these exits flushes stdio first,
// so what the program printed so far is kept, and runs no destructors (the
// program may be mid-construction).
//
// Handshake: with ALLOCTRACE_POLICY_ACK_FD=N also set, the resolution writes
// "alloctrace-policy <name>\n" to file descriptor N (name "record" when
// unset; an assignment as given), so a parent (the replayer's search in the
// program) learns that the program is instrumented and took the policy;
// then "alloctrace-rss <bytes>\n", the process's resident size at that
// moment (before its first container allocates; -1 if unknown), so the
// parent can read the peak as what the program's containers added above
// it: the switch and the tracing library, absent from the build a user
// ships, are loaded by then.
//
// Cost: recording pays one load and one predictable branch per call; std
// pays the same and then calls ::operator new / delete inline, as
// std::allocator does; a pool policy pays one more indirect call through a
// per-process table (Ops), chosen once; an st policy adds the thread
// check, one thread-local load, one relaxed load and a compare (and, on a
// thread's first use of an st pool, its token: a small allocation, never
// freed, as a pool may name an ended thread). Creating an arena under std
// or a `single` policy allocates nothing and counts no references (every
// such arena shares one handle); under a `stack` policy it allocates the
// pool, as the adopted HoldingStack does.
//
// Thread-safety: Resolve may race from several threads; exactly one
// resolves, the others wait for it (std::call_once).
#ifndef ALLOCTRACE_TRACER_POLICY_SWITCH_H_
#define ALLOCTRACE_TRACER_POLICY_SWITCH_H_

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alloctrace::policy_switch {

inline constexpr char kEnvPolicy[] = "ALLOCTRACE_POLICY";
inline constexpr char kEnvAckFd[] = "ALLOCTRACE_POLICY_ACK_FD";
inline constexpr char kStdName[] = "std";
inline constexpr char kAckPrefix[] = "alloctrace-policy ";
inline constexpr char kAckRssPrefix[] = "alloctrace-rss ";
inline constexpr int kUnknownPolicyExit = 2;

// One policy as a table of functions over an untyped pool.
struct Ops {
  const char* name;
  // nullptr when out of memory (the allocator throws std::bad_alloc).
  void* (*allocate)(void* pool, size_t bytes, size_t align);
  void (*deallocate)(void* pool, void* p, size_t bytes, size_t align);
  // The pool of a new arena of class `class_name` ("" for arena 0; static
  // storage, kept for messages): a new one (stack) or the shared one
  // (single); nullptr for std. Released by destroy_pool when the arena goes.
  void* (*make_pool)(std::string_view class_name);
  void (*destroy_pool)(void* pool);
  // std: ::operator new / delete, which TraceAllocator calls inline, as
  // std::allocator does, rather than through allocate/deallocate.
  bool is_std;
  // stack: a pool per arena. Otherwise (std, single) every arena of the
  // policy is served alike, so TraceAllocator gives them all one handle,
  // kept here (created on first use, never destroyed): no allocation and
  // no reference counting per arena, as std::allocator and
  // HoldingSingleton have none.
  bool pool_per_instance;
  std::atomic<void*>* shared_arena;
};

// A policy per class of containers (ALLOCTRACE_POLICY with `=`). One per
// process: For's table of classes seen is the process's.
class Assignment {
 public:
  struct Entry {
    std::string class_name;
    const Ops* ops;
  };
  // Parses "Class=policy;...;*=policy". On error, nullopt and *error says
  // which entry and why.
  static std::optional<Assignment> Parse(const std::string& text, std::string* error);

  // Whether an entry naming `entry` names the class `class_name`: the
  // names are equal, or `class_name` ends with "::" + `entry` outside
  // template brackets (entry "Index" names "role::Index" and
  // "(anonymous namespace)::Index", not "Box<role::Index>").
  static bool Matches(std::string_view entry, std::string_view class_name);

  const std::string& text() const { return text_; }
  const Ops* rest() const { return rest_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // The policy of a new arena of class `class_id` named `name`: that of the
  // entry that Matches it with the longest name (an exact name always
  // wins), else the rest's. One table lookup once its class has been seen.
  // An entry that would serve a second class of another name (entry
  // "Index", classes "a::Index" and "b::Index") stops the program with
  // status 2, naming both. Thread-safe.
  const Ops* For(uint32_t class_id, std::string_view name) const;
  // The policy For gives a class named `name`, without taking note of it.
  const Ops* PolicyOf(std::string_view name) const;
  // The entries that served no arena (by their class as written), and the
  // classes seen, in order of first sight. Thread-safe.
  std::vector<std::string> Unused() const;
  std::vector<std::string> Seen() const;

 private:
  // The entry that Matches `name` with the longest name; nullptr if none.
  const Entry* EntryFor(std::string_view name) const;

  std::string text_;
  std::vector<Entry> entries_;
  const Ops* rest_ = nullptr;
  // Per entry, the class it served first ("": none yet). Guarded by the
  // lock For takes (one Assignment per process is in force).
  mutable std::vector<std::string> served_;
};

namespace internal {
// nullptr: record. Written once by Resolve, before any TraceAllocator exists.
inline std::atomic<const Ops*> active{nullptr};
inline std::atomic<bool> resolved{false};
// Set with `active` (then the rest's ops) when ALLOCTRACE_POLICY assigns.
inline std::atomic<const Assignment*> assignment{nullptr};
// TraceAllocator's shared handle (Ops::shared_arena) for every new arena,
// once one policy without a pool per arena serves them all; nullptr
// otherwise.
inline std::atomic<void*> every_arena{nullptr};
}  // namespace internal

// Reads ALLOCTRACE_POLICY once per process (see above); exits with status 2
// on an unknown name.
void ResolveSlow();
inline void Resolve() {
  if (!internal::resolved.load(std::memory_order_acquire)) ResolveSlow();
}

// The policy in force, nullptr to record; under an assignment, the rest's
// (`*`). Valid after Resolve().
inline const Ops* Active() { return internal::active.load(std::memory_order_relaxed); }

// The assignment in force, nullptr if none. Valid after Resolve().
inline const Assignment* Assigned() { return internal::assignment.load(std::memory_order_relaxed); }

// The ops of `name` ("std" or a catalog policy name), nullptr if unknown.
const Ops* Find(const std::string& name);

// Every name the switch accepts: "std", then the catalog's in its order.
std::vector<std::string> Names();

// Testing and benchmarks only: make `ops` (nullptr: record) the policy in
// force, as if resolved. No TraceAllocator may exist.
void ForceForTesting(const Ops* ops);

}  // namespace alloctrace::policy_switch

#endif  // ALLOCTRACE_TRACER_POLICY_SWITCH_H_
