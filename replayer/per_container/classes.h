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

// Why `spec` may not serve the program (see above), naming the class and
// the threads, or "" if it may. `infos` has every policy the spec names.
std::string MixUnsafeReason(const MixSpec& spec, const std::vector<ClassSummary>& classes,
                            const std::map<std::string, allocators::AllocatorInfo>& infos);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_PER_CONTAINER_CLASSES_H_
