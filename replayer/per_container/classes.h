// What the per-container search needs to know of each class of containers
// in a replay program (ClassesOf), a mix's name in the trace's words
// (MixName), and the safety rule per class (MixUnsafeReason).
//
// The safety rule, per class, in the terms of the adopted types:
//  - a policy that is not thread-safe serves a class only if every arena
//    of the class is used by one thread (a container that several threads
//    use is one allocator instance used from several threads);
//  - a policy that is not thread-safe and keeps one pool for the process
//    (a `single` holding: HoldingSingleton serves every container of that
//    pool type, whatever its class) serves its classes only if one thread,
//    the same one, uses all their arenas: two threads must not reach the
//    one pool through any class.
// The heap (the process's malloc) serves any class.
// An arena handed off (inspect/class_stats.h: one thread after another,
// their uses never interleaved, as a map a worker fills and the main
// thread frees after join()) is safe for a not thread-safe policy with a
// pool per arena in the program, where the hand-off orders the threads
// (HandOffs::kSequential: the in-program search), but not in a per-thread
// replay, whose threads the trace orders only at each block's free
// (HandOffs::kShared).
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_PER_CONTAINER_CLASSES_H_
#define ALLOCTRACE_REPLAYER_PER_CONTAINER_CLASSES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "alloctrace/format/trace_format.h"
#include "alloctrace/inspect/class_stats.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/engine/mix_spec.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {

// Each class's summary as `inspect` gives it (inspect/class_stats.h: its
// arenas, memory ops and share, shared arenas, the threads that use them),
// from the program's ops: the classes with a memory op or an arena, by
// share (largest first), the rest (id 0) last if it has memory ops.
std::vector<ClassSummary> ClassesOf(const ReplayProgram& program);

// "OrderIndex=slab/st/stack;PriceLevels=heap" (the classes' short names,
// AliasName without "Alloc", in `classes` order; classes not in the spec
// are the heap's and not named): a mix as a report names it. A spec with
// no class is "heap".
std::string MixName(const MixSpec& spec, const std::vector<ClassSummary>& classes);

enum class HandOffs { kShared, kSequential };

// A row per class, before a search: its facts, whether it is searched
// (`search`, a named class, at least `min_share` of the memory ops), and
// why not.
std::vector<ClassVerdict> ClassRows(const std::vector<ClassSummary>& classes, bool search,
                                    double min_share);

// The policy `spec` gives class `class_id` (kHeapPolicy if none).
std::string PolicyOf(const MixSpec& spec, uint32_t class_id);

// ALLOCTRACE_POLICY for `spec` in the trace's class names: each class on a
// pool named with it, a class on the heap named `std` only where the rest
// is a pool, then `*=` the rest (`std` for the heap, a malloc preloaded).
std::string AssignmentFor(const MixSpec& spec, const std::vector<ClassSummary>& classes,
                          const std::map<std::string, allocators::AllocatorInfo>& infos);

// The rows completed with `mix`: each class's policy, its Adoption and
// alias line; returns AssignmentFor(mix).
std::string AdoptMix(const MixSpec& mix,
                     const std::map<std::string, allocators::AllocatorInfo>& infos,
                     const std::vector<ClassSummary>& classes, std::vector<ClassVerdict>& rows);

// Why `spec` may not serve the program (see above), naming the class and
// the threads, or "" if it may. `infos` has every policy the spec names.
std::string MixUnsafeReason(const MixSpec& spec, const std::vector<ClassSummary>& classes,
                            const std::map<std::string, allocators::AllocatorInfo>& infos,
                            HandOffs hand_offs = HandOffs::kShared);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_PER_CONTAINER_CLASSES_H_
