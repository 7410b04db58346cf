// CallSiteStats: a captured trace's allocations grouped by where they were
// made (`inspect --sites`): the step from a capture to the containers worth
// giving a pool.
//
// The group of an allocation is its *allocating function*: the first
// function, from the allocating call outwards (inlined calls included),
// that is not an allocation wrapper. A wrapper is a function of the
// standard library (std::, __gnu_cxx::, or code from its headers under an
// include/c++/ directory), operator new, or one whose name
// holds "alloc" in any case, its template arguments and parameters left
// out (malloc, realloc, PyObject_Malloc, an
// allocator's allocate): the code that decides to allocate is above them.
// A stack of wrappers only is grouped by its outermost frame; a frame that
// cannot be named (symbolizer.h) is not a wrapper.
//
// Per group: memory ops (ALLOC, FREE, REALLOC of its blocks) and their
// share of the trace's, allocations, bytes allocated, the most bytes its
// blocks held live at once, the median block size, the lifetime shape (the
// median lifetime of its freed blocks, in memory ops of the whole trace,
// and the share of its blocks still live at the end), its distinct stacks,
// and its most frequent stack. Two passes over the trace: the first reads
// the stack table, the second counts by group.
#ifndef ALLOCTRACE_INSPECT_CALL_SITE_STATS_H_
#define ALLOCTRACE_INSPECT_CALL_SITE_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/inspect/symbolizer.h"

namespace alloctrace {

struct SiteGroup {
  std::string function;  // the allocating function (or the fallback name)
  std::string location;  // its file:line in the most frequent stack, "" if unknown
  std::string module;    // file name of its module
  uint64_t memory_ops = 0;
  double share = 0;  // of the trace's memory ops
  uint64_t allocs = 0;
  uint64_t bytes = 0;
  uint64_t peak_live_bytes = 0;
  uint64_t median_block = 0;
  uint64_t median_lifetime_ops = 0;  // of freed blocks; 0 if none was freed
  double live_at_end = 0;            // share of its allocations never freed
  uint64_t stacks = 0;
  // The most frequent stack, as "function (file:line)" per frame, the
  // allocating call first.
  std::vector<std::string> top_stack;
};

struct CallSiteReport {
  bool has_sites = false;  // the trace was recorded with call sites
  uint64_t memory_ops = 0;
  uint64_t allocations = 0;
  uint64_t allocations_without_site = 0;
  uint64_t stacks = 0;
  uint64_t max_depth = 0;
  std::vector<SiteGroup> groups;   // by memory ops, most first
  std::vector<std::string> notes;  // the symbolizer's
  // By stack id: the index in `groups` of its allocating function (the
  // group of allocations without a site for 0 and unnamed stacks).
  std::vector<uint32_t> group_of_stack;
};

// The allocating function's index in `chain` (frames outwards, inlined
// functions innermost first): see the file comment.
size_t AllocatingFrame(const std::vector<FrameName>& chain);

absl::StatusOr<CallSiteReport> ComputeCallSites(const std::string& path,
                                                const std::string& addr2line = "addr2line");

// The top `limit` groups as text.
std::string FormatCallSitesText(const CallSiteReport& report, size_t limit);

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_CALL_SITE_STATS_H_
