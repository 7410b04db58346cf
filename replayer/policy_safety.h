// Which policies may serve a trace: the one rule, shared by the measurement
// (a policy that may not is skipped, never run, so never ranked or
// recommended) and the default set (its thread-safe variants are measured
// instead).
//
// The rule: a policy that is not thread-safe (AllocatorInfo::thread_safe)
// never serves a trace with an arena that several threads allocate or free
// in (format/arena_usage.h). In the program that arena is one allocator
// instance used from several threads; a pool without a lock would corrupt
// its free lists there. A captured program (every block in arena 0) run on
// several threads gets only thread-safe policies.
#ifndef ALLOCTRACE_REPLAYER_POLICY_SAFETY_H_
#define ALLOCTRACE_REPLAYER_POLICY_SAFETY_H_

#include <string>
#include <vector>

#include "format/arena_usage.h"
#include "replayer/allocators/allocator_concept.h"

namespace alloctrace {

// Why `info` may not serve a trace of this arena usage, as a report says it
// ("not thread-safe: arena 0 is used by threads 1, 2 and 3"), or "" if it may.
std::string UnsafeReason(const allocators::AllocatorInfo& info, const ArenaUsageSummary& usage);

// `names` (the default set) for a trace of this arena usage: where the trace
// shares an arena, each policy that is not thread-safe is replaced by its
// thread-safe variant if the catalog has one ("slab/st/single" by
// "slab/mt/single"); the others stay, to be skipped with their reason.
std::vector<std::string> SafeVariants(const std::vector<std::string>& names,
                                      const ArenaUsageSummary& usage);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_POLICY_SAFETY_H_
