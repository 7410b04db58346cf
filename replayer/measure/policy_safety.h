// Which policies may serve a trace: the one rule, shared by the measurement
// (a policy that may not is skipped, never run, so never ranked or
// recommended) and the default set (its thread-safe variants are measured
// instead).
//
// The rule: a policy that is not thread-safe (AllocatorInfo::thread_safe)
// never serves a trace with an arena that several threads allocate or free
// in (inspect/arena_usage.h). In the program that arena is one allocator
// instance used from several threads; a pool without a lock would corrupt
// its free lists there. A captured program (every block in arena 0) run on
// several threads gets only thread-safe policies.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_POLICY_SAFETY_H_
#define ALLOCTRACE_REPLAYER_MEASURE_POLICY_SAFETY_H_

#include <string>
#include <vector>

#include "alloctrace/inspect/arena_usage.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"

namespace alloctrace {

// Why `info` may not serve a trace of this arena usage, as a report says it
// ("not thread-safe: arena 0 is used by threads 1, 2 and 3"), or "" if it may.
std::string UnsafeReason(const allocators::AllocatorInfo& info, const ArenaUsageSummary& usage);

// Why `info` may not serve a trace on `threads` threads whose arenas are
// not shared (UnsafeReason says nothing then): a policy that is not
// thread-safe and keeps one state for every arena (a process-wide pool,
// !state_per_arena) is used by every thread that allocates at all, as the
// program's containers on several threads would share it. "" if it may.
std::string UnsafeSharedStateReason(const allocators::AllocatorInfo& info,
                                    const ArenaUsageSummary& usage, uint64_t threads);

// Why `info`, a policy with a pool per arena (state_per_arena), is not
// worth running on a trace of this arena usage and `allocations` (ALLOC
// and REALLOC ops), or "" if it is. A trace whose one-block arenas (no
// more than one block live at a time) are at least half as many as its
// allocations, and at least kPoolPerArenaMinArenas: every such arena costs
// a pool made and released, and a pool costs two allocations from the
// system allocator or more (the pool itself, its first chunk), so its
// pools alone make at least as many calls to glibc malloc as glibc malloc
// makes for the whole trace: it cannot be faster than glibc malloc there,
// and its runs would only spend the budget (on a 2.8 M-arena trace, 45 s a
// windowed run). Applied to the default set only: a policy the user names
// runs.
inline constexpr uint64_t kPoolPerArenaMinArenas = 1000;
std::string PoolPerArenaReason(const allocators::AllocatorInfo& info,
                               const ArenaUsageSummary& usage, uint64_t allocations);

// Why `info`, a thread-safe policy with a single-threaded twin in the
// catalog (the same name with /st/ for /mt/), is not worth running on a
// trace recorded on `threads` threads, or "" if it is: recorded on one
// thread, the program needs no lock, and the policy is its twin plus a
// lock, never faster. Applied to the default set only.
std::string LockedTwinReason(const allocators::AllocatorInfo& info, uint64_t threads);

// Why `info`, a policy holding a pool per container (a name with
// "/stack"), is not worth running on a trace whose blocks all live in one
// arena, or "" if it is: there its one pool per arena is one pool, the
// same replay as its twin holding one pool per process ("/single"), which
// runs instead (when it may serve the trace: UnsafeReason and
// UnsafeSharedStateReason say nothing of it). The recommendation's rule
// picks the single twin of such a pair (verdict/summary.cc); this spares
// the budget a second measurement of one replay. Applied to the default
// set only.
std::string StackTwinReason(const allocators::AllocatorInfo& info, const ArenaUsageSummary& usage,
                            uint64_t threads);

// `names` (the default set) for a trace of this arena usage: where the trace
// shares an arena, each policy that is not thread-safe is replaced by its
// thread-safe variant if the catalog has one ("slab/st/single" by
// "slab/mt/single"); the others stay, to be skipped with their reason.
std::vector<std::string> SafeVariants(const std::vector<std::string>& names,
                                      const ArenaUsageSummary& usage);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_POLICY_SAFETY_H_
