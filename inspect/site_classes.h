// WriteSiteClasses: a captured trace rewritten with its top allocating
// functions (call_site_stats.h) as classes of containers, so the
// per-container verdict (`replayer --per_container`) can say which call
// sites would gain from a pool of their own: the step from a capture of an
// unmodified program to the containers worth instrumenting.
//
// Each of the `top` groups with the most memory ops becomes one arena of a
// class named after its allocating function ("site: FUNCTION", its element
// size the group's median block); every other allocation stays in arena 0,
// the global heap. A REALLOC becomes a FREE of the old block and an ALLOC
// of the new one (in the new block's class): the replayer's pools have no
// realloc, and the bytes moved are the same. The events keep their order,
// threads, shapes and timestamps; the footer keeps the program's CPU time.
#ifndef ALLOCTRACE_INSPECT_SITE_CLASSES_H_
#define ALLOCTRACE_INSPECT_SITE_CLASSES_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "alloctrace/inspect/call_site_stats.h"

namespace alloctrace {

// Writes `out` from `in` and its report (ComputeCallSites of `in`). Fails
// for a trace without call sites, or one whose allocations are not all in
// arena 0 (a trace of instrumented containers has classes already).
absl::Status WriteSiteClasses(const std::string& in, const CallSiteReport& report, size_t top,
                              const std::string& out);

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_SITE_CLASSES_H_
