// TraceStats: what a trace holds, computed in one streaming pass.
// Used by `inspect` and by tests; the replayer computes its ideal (peak live
// bytes) the same way.
#ifndef ALLOCTRACE_INSPECT_TRACE_STATS_H_
#define ALLOCTRACE_INSPECT_TRACE_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/inspect/arena_usage.h"
#include "alloctrace/inspect/class_stats.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace {

struct ArenaStats {
  uint64_t allocs = 0;
  uint64_t frees = 0;
  uint64_t bytes_allocated = 0;
  uint64_t live_bytes = 0;
  uint64_t peak_live_bytes = 0;
  bool destroyed = false;
  // Event indexes (from 0, all events): its creation or first use, and its
  // destruction or last use.
  uint64_t first_event = 0;
  uint64_t last_event = 0;
};

// Live bytes and objects over a span of events: the most at any point in
// it, the span ending just before event `end_event`.
struct LivePoint {
  uint64_t end_event = 0;
  uint64_t live_bytes = 0;
  uint64_t live_objects = 0;
};

struct TraceStats {
  proto::Header header;
  bool has_footer = false;
  std::string cut_short;  // why the trace ends early, if it does
  uint64_t file_bytes = 0;
  uint64_t chunks = 0;
  uint64_t events = 0;
  uint64_t allocs = 0, frees = 0, reallocs = 0;
  uint64_t arenas_created = 0, arenas_destroyed = 0;
  uint64_t threads = 0;
  uint64_t shapes = 0;
  uint64_t bytes_allocated = 0;  // sum over allocations (and realloc targets)
  uint64_t peak_live_bytes = 0;
  uint64_t peak_live_objects = 0;
  uint64_t live_objects_at_end = 0;
  uint64_t live_bytes_at_end = 0;
  // Allocation sizes in power-of-two buckets: [2^k, 2^(k+1)) keyed by 2^k
  // (size 0 counts under 0).
  std::map<uint64_t, uint64_t> size_histogram;
  std::map<uint32_t, ArenaStats> arenas;  // arena 0 = no arena (global heap)
  // Which arenas several threads use; how many hold one block at most.
  ArenaUsageSummary arena_usage;
  // One per class of containers (class_stats.h), class 0 (unnamed) first
  // if it has arenas or ops; has_class_table: the trace defines classes.
  std::vector<ClassSummary> classes;
  // Classes no arena uses, names several classes share (CheckClassTable).
  std::vector<std::string> class_table_notes;
  bool has_class_table = false;
  // Recorded by the whole-program capture (its header's "capture" label).
  bool captured() const { return header.labels().contains("capture"); }
  // The live course: kLiveCoursePoints to 2x as many points of equal spans
  // (each the maximum over its span, so no peak is lost), in event order.
  static constexpr size_t kLiveCoursePoints = 1024;
  std::vector<LivePoint> live_course;
  double bytes_per_event() const { return events == 0 ? 0.0 : double(file_bytes) / events; }
};

// Reads and validates the whole trace at `path`.
absl::StatusOr<TraceStats> ComputeTraceStats(const std::string& path);

// Reads and validates the whole trace at `path` as ComputeTraceStats does
// (every chunk decoded, every checksum checked), but fills only the header,
// how the trace ends, the file's size and the counts of chunks, events by
// kind and threads: for a one-line summary (capture's closing line), at a
// fraction of the cost of the rest (a quarter of a 4-thread capture's CPU
// time went to the full statistics).
absl::StatusOr<TraceStats> CountTraceEvents(const std::string& path);

// "812 B", "34.5 KiB", "12.0 MiB": a byte count for people.
std::string HumanBytes(uint64_t bytes);

// Which parts of the trace carry checksums, each verified as it was read:
// "all" (header, every chunk, footer), "chunks" (every chunk) or "none" (a
// trace written before them); and the same for people.
const char* ChecksumKind(const TraceStats& stats);
std::string ChecksumWords(const TraceStats& stats);

// Renders for people, and as JSON for machines.
std::string FormatTraceStatsText(const TraceStats& stats);
std::string FormatTraceStatsJson(const TraceStats& stats);

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_TRACE_STATS_H_
