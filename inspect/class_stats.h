// ClassStats: what a trace says of each class of containers (the class
// table, proto/trace.proto ClassDef; tracer/trace_allocator.h names them),
// computed in the streaming pass of trace_stats.cc and printed by `inspect`.
//
// Per class: its arenas, its memory ops (ALLOC, FREE, REALLOC) and their
// share of the trace's, its block sizes (min, median, max over
// allocations), the most bytes its arenas held live at once, how many of
// its arenas several threads used, interleaved or handed from one thread to
// the next (and which threads use them), and its
// lifetime shape:
//  - an arena is *built once* when at most 10% of its frees come before its
//    last allocation (the rest come after it: the container is cleared or
//    destroyed, or it is never freed);
//  - it is *churned* otherwise: it frees and allocates again while in use.
// A trace without a class table is one class, unnamed (id 0): every arena,
// and arena 0 (the global heap: what `new`, make_shared and a whole-program
// capture record) belongs to it. In a trace with a table, arena 0 and
// arenas created without a class are class 0 too.
//
// Memory: about 40 bytes per arena and a map of block sizes per class.
// Thread-compatible.
#ifndef ALLOCTRACE_INSPECT_CLASS_STATS_H_
#define ALLOCTRACE_INSPECT_CLASS_STATS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "alloctrace/format/trace_format.h"

namespace alloctrace {

// A free counts as during use when its arena allocates again later; an
// arena is built once when at most this share of its frees are during use.
inline constexpr double kBuiltOnceMaxChurn = 0.10;

struct ClassSummary {
  ClassDef def;             // id 0: the unnamed class (name empty)
  uint64_t arenas = 0;      // arenas of the class (created, or used: arena 0)
  uint64_t memory_ops = 0;  // ALLOC, FREE and REALLOC in its arenas
  double share = 0;         // of the trace's memory ops
  uint64_t allocs = 0;      // ALLOC and REALLOC
  uint64_t min_block = 0, median_block = 0, max_block = 0;  // bytes, over allocations
  uint64_t peak_live_bytes = 0;
  // Used by more than one thread with their uses interleaved in the
  // trace's order (a thread back after another); and handed off: used by
  // one thread after another, each thread's uses in one stretch (a
  // container built by a worker and freed by the main thread after join()).
  uint64_t shared_arenas = 0;
  uint64_t handed_off_arenas = 0;
  std::vector<uint32_t> threads;   // that use its arenas, ascending
  uint64_t built_once_arenas = 0;  // see the file comment
  uint64_t churned_arenas = 0;
};

// Fed event by event (with the event's dense arena and thread indexes and
// the block's bytes), then summarized.
class ClassStatsBuilder {
 public:
  // ARENA_CREATE of arena `arena` with class `class_id` (Event::shape).
  void ArenaCreated(uint32_t arena, uint32_t class_id);
  void Alloc(uint32_t arena, uint32_t thread, uint64_t bytes);
  void Free(uint32_t arena, uint32_t thread, uint64_t bytes);
  // A realloc: the old block's free, then the new block's alloc, counted
  // as one memory op.
  void Realloc(uint32_t old_arena, uint64_t old_bytes, uint32_t arena, uint32_t thread,
               uint64_t bytes);

  // One summary per class with a memory op or an arena, by id (class 0
  // first); `table` is the trace's class table.
  std::vector<ClassSummary> Summarize(const absl::flat_hash_map<uint32_t, ClassDef>& table) const;
  // The class of each arena seen (CheckClassTable's argument).
  std::vector<uint32_t> ArenaClasses() const;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Arena {
    uint32_t class_id = 0;
    uint32_t thread = kNone;        // the thread that used it last
    std::vector<uint32_t> earlier;  // the threads that used it before, each once
    bool shared = false;            // a thread of `earlier` came back
    bool used = false;
    uint64_t frees = 0;
    uint64_t frees_since_alloc = 0;  // frees after its latest allocation
  };
  struct Class {
    uint64_t memory_ops = 0;
    uint64_t live_bytes = 0, peak_live_bytes = 0;
    std::map<uint64_t, uint64_t> blocks;  // bytes -> allocations
    std::set<uint32_t> threads;
  };
  Arena& Touch(uint32_t arena, uint32_t thread);
  void AllocIn(Arena& a, uint64_t bytes);
  void FreeIn(Arena& a, uint64_t bytes);

  std::vector<Arena> arenas_;  // by dense arena index
  std::map<uint32_t, Class> classes_;
  uint64_t memory_ops_ = 0;
};

// What a trace's class table holds that a verdict per class cannot use as
// it is: classes no arena uses (left out, no verdict), and classes sharing
// one name (one class for a replay: ALLOCTRACE_POLICY and the alias lines
// name a class by its name, so two classes of one name cannot be given two
// policies the program could take). `arena_classes`: the class of each
// arena created (any order, repeats allowed).
struct ClassTableCheck {
  std::map<uint32_t, ClassDef> kept;         // used, one per name: the lowest id
  std::map<uint32_t, uint32_t> merged_into;  // a used id -> its name's lowest id
  std::vector<std::string> notes;            // one per unused class and per shared name
};
ClassTableCheck CheckClassTable(const absl::flat_hash_map<uint32_t, ClassDef>& table,
                                const std::vector<uint32_t>& arena_classes);

// The columns of the per-class table, and one class's row of it: id, how
// it is named (tag, type, or - for the unnamed class), arenas, memory ops,
// share, blocks (min/median/max bytes, or the one size), peak live bytes,
// threads per arena, lifetime shape, name.
std::vector<std::string> ClassHeaders();
std::vector<std::string> ClassRow(const ClassSummary& c);

// The per-class table for people: one line per class, or "one class
// (unnamed): ..." for a trace without a class table (`captured`: a
// whole-program capture, which is always one class).
std::string FormatClassTable(const std::vector<ClassSummary>& classes, bool has_class_table,
                             bool captured);
// The same as a JSON array.
std::string FormatClassTableJson(const std::vector<ClassSummary>& classes);

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_CLASS_STATS_H_
