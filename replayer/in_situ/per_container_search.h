// The per-container search in the program itself (replayer --per_container
// TRACE -- PROGRAM): which policy each class of containers should use,
// decided by the program's own runs under ALLOCTRACE_POLICY assignments,
// not by a replay. The replay times the allocator calls alone; the program
// also walks its containers, and a pool per role can win there what the
// replay reads as a tie (a 2-thread service ran 1.20x faster with a pool
// per role than with the best single choice, which its replay had kept).
//
// The search, on in situ's rounds (in_situ.h, with the race):
//  1. Start from the program's best single choice (the search's
//     recommendation): a pool on every class, or every class on the heap
//     (that malloc preloaded, or glibc malloc for std).
//  2. For each class with at least `min_share` of the trace's memory ops,
//     largest first: race its candidates in the program, the other classes
//     held: the heap and each of our pools the safety rule allows the class
//     (per_container/classes.h, hand-offs counted as the program orders
//     them), the held assignment the race's reference. The class moves only
//     to a policy shown faster (DecideClassRace).
//  3. Sweep again while a class moved, at most kMaxSweeps times.
//  4. Race the final mix against the best single choice and std; the mix
//     is the answer only if it is shown faster than the best single choice.
// Each race gets half the search's budgets (InSituSettings: seconds and
// runs), so the search costs at most (classes searched x sweeps + 1) x half
// of them, and says what it cost.
//
// Thread-safety: single-threaded; forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_IN_SITU_PER_CONTAINER_SEARCH_H_
#define ALLOCTRACE_REPLAYER_IN_SITU_PER_CONTAINER_SEARCH_H_

#include <string>
#include <vector>

#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/in_situ/in_situ.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {

inline constexpr int kMaxSweepsInProgram = 2;

// The per-container verdict of `argv` (the program of `program`'s trace),
// from `single`, the search's summary of the program under single
// choices. Never fails: why there is none is PerContainerVerdict::why_not.
PerContainerVerdict SearchPerContainerInProgram(const ReplayProgram& program,
                                                const InSituSummary& single,
                                                const std::vector<std::string>& argv,
                                                const InSituSettings& settings, double min_share);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_IN_SITU_PER_CONTAINER_SEARCH_H_
