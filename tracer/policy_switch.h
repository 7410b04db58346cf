// The run-time policy switch behind TraceAllocator: with
// ALLOCTRACE_POLICY=<name> in the environment, every TraceAllocator serves
// its memory from that pool policy of pool/catalog.h and records nothing, so
// the user's own binary runs under any catalog policy without a rebuild.
//
//   ALLOCTRACE_POLICY unset or empty   record, as without the switch
//   ALLOCTRACE_POLICY=std              ::operator new / delete, no recording
//   ALLOCTRACE_POLICY=slab/st/single   the catalog's policy of that name
//
// Holding is exactly the catalog's: a `stack` policy gives each
// default-constructed TraceAllocator (each arena) a pool of its own, shared
// by its copies and released with the last of them; a `single` policy uses
// the one process-wide pool of HoldingSingleton::Instance<PoolT>(), the
// very pool the adopted type would use.
//
// The name is resolved once per process, when the first TraceAllocator is
// constructed (before its first allocation: an arena must know whether it
// records before it exists). An unknown name prints
//   alloctrace: unknown policy 'x' in ALLOCTRACE_POLICY; see replayer --list-policies
// on stderr and exits with status 2; never a silent fallback.
//
// Handshake: with ALLOCTRACE_POLICY_ACK_FD=N also set, the resolution writes
// "alloctrace-policy <name>\n" to file descriptor N (name "record" when
// unset), so a parent (replayer --confirm) learns that the program is
// instrumented and took the policy.
//
// Cost: recording pays one load and one predictable branch per call; a
// policy pays that plus one indirect call through a per-process table
// (Ops), chosen once.
//
// Thread-safety: Resolve may race from several threads; exactly one
// resolves, the others wait for it (std::call_once).
#ifndef ALLOCTRACE_TRACER_POLICY_SWITCH_H_
#define ALLOCTRACE_TRACER_POLICY_SWITCH_H_

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace alloctrace::policy_switch {

inline constexpr char kEnvPolicy[] = "ALLOCTRACE_POLICY";
inline constexpr char kEnvAckFd[] = "ALLOCTRACE_POLICY_ACK_FD";
inline constexpr char kStdName[] = "std";
inline constexpr char kAckPrefix[] = "alloctrace-policy ";
inline constexpr int kUnknownPolicyExit = 2;

// One policy as a table of functions over an untyped pool.
struct Ops {
  const char* name;
  // nullptr when out of memory (the allocator throws std::bad_alloc).
  void* (*allocate)(void* pool, size_t bytes, size_t align);
  void (*deallocate)(void* pool, void* p, size_t bytes, size_t align);
  // The pool of a new arena: a new one (stack) or the shared one (single);
  // nullptr for std. Released by destroy_pool when the arena goes.
  void* (*make_pool)();
  void (*destroy_pool)(void* pool);
};

namespace internal {
// nullptr: record. Written once by Resolve, before any TraceAllocator exists.
inline std::atomic<const Ops*> active{nullptr};
inline std::atomic<bool> resolved{false};
}  // namespace internal

// Reads ALLOCTRACE_POLICY once per process (see above); exits with status 2
// on an unknown name.
void ResolveSlow();
inline void Resolve() {
  if (!internal::resolved.load(std::memory_order_acquire)) ResolveSlow();
}

// The policy in force, nullptr to record. Valid after Resolve().
inline const Ops* Active() { return internal::active.load(std::memory_order_relaxed); }

// The ops of `name` ("std" or a catalog policy name), nullptr if unknown.
const Ops* Find(const std::string& name);

// Every name the switch accepts: "std", then the catalog's in its order.
std::vector<std::string> Names();

// Testing and benchmarks only: make `ops` (nullptr: record) the policy in
// force, as if resolved. No TraceAllocator may exist.
void ForceForTesting(const Ops* ops);

}  // namespace alloctrace::policy_switch

#endif  // ALLOCTRACE_TRACER_POLICY_SWITCH_H_
