// ReplayProgram: a trace decoded and validated into a compact array of
// operations, ready to be fed to an allocator with nothing left to check.
//
// Every op carries what its allocator call needs (size, alignment, arena),
// so the replay loop touches only the op array and one pointer table indexed
// by the trace's dense object ids. 16 bytes an op. Arenas are dense indexes
// (format/chunk_decoder.h), below arena_limit, whatever ids the trace used,
// so an allocator's table by arena is sized once before the timed loop.
//
// Building is linear in the trace: about 16 bytes an op plus 13 bytes an
// object id (ids are dense, at most one per allocation) in memory, and a
// progress line on stderr while it runs if stderr is a terminal.
//
// Thread-safety: LoadReplayProgram builds on the calling thread; a built
// program, and a view of it, is read-only and may be read from any number of
// threads.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_REPLAY_PROGRAM_H_
#define ALLOCTRACE_REPLAYER_ENGINE_REPLAY_PROGRAM_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/inspect/arena_usage.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace {

enum class ReplayKind : uint8_t {
  kAlloc = 0,
  kAllocZeroed = 5,  // calloc
  kFree = 1,
  kRealloc = 2,       // `object` replaces reallocs[aux]: old object and size
  kArenaCreate = 3,   // arena
  kArenaDestroy = 4,  // arena
};

struct ReplayOp {
  uint32_t object;  // the object allocated or freed
  uint32_t bytes;   // kBigSize: look up big_sizes[aux]
  uint32_t arena;   // the arena the object belongs to
  ReplayKind kind;
  uint8_t align_log2;
  uint16_t aux;  // unused unless bytes == kBigSize or kind == kRealloc
};
static_assert(sizeof(ReplayOp) == 16, "keep ops compact");

inline constexpr uint32_t kBigSize = ~uint32_t{0};

// Side tables for rare ops, consumed in order by the replay loop.
struct ReallocInfo {
  uint32_t old_object;
  uint64_t old_bytes;
  uint64_t new_bytes;
};

struct ReplayProgram {
  std::string path;
  proto::Header header;
  std::vector<ReplayOp> ops;
  std::vector<uint64_t> big_sizes;    // sizes >= 4 GiB - 1, in op order
  std::vector<ReallocInfo> reallocs;  // in op order
  // The dense thread index (format/chunk_decoder.h, Event::thread) of each
  // op, parallel to `ops`; empty while the trace has one thread, so a
  // one-thread trace costs nothing more. Read by the per-thread replay
  // (thread_schedule.h).
  std::vector<uint32_t> op_threads;
  uint32_t object_limit = 0;  // pointer table size
  uint32_t arena_limit = 1;   // arena indexes (op.arena) are below it
  uint64_t allocs = 0, frees = 0, reallocs_count = 0, arena_events = 0;
  uint64_t threads = 0;
  // Which arenas several threads use, and how many blocks arenas hold.
  ArenaUsageSummary arena_usage;
  // The class of containers of each arena index (the trace's class table,
  // tracer/trace_allocator.h), at its first creation: 0 for arena 0, for
  // arenas created without a class and for traces without a table. Sized
  // arena_limit. An index created again with another class counts in
  // arena_class_conflicts (a replay per class then refuses the trace).
  std::vector<uint32_t> arena_classes;
  uint64_t arena_class_conflicts = 0;
  // The trace's class table, by id (empty for a trace without one), less
  // the classes no arena uses; classes of one name are one class, the
  // lowest id (arena_classes says so): ALLOCTRACE_POLICY and the alias
  // lines name a class by its name, so a replay cannot give two classes of
  // one name two policies the program could take.
  std::map<uint32_t, ClassDef> classes;
  // What was merged or left out of `classes`, in words
  // (inspect/class_stats.h CheckClassTable).
  std::vector<std::string> class_table_notes;
  // The ideal: the most bytes ever live at once, as requested.
  uint64_t peak_live_bytes = 0;
  uint64_t peak_live_objects = 0;
  uint64_t live_at_end = 0;  // objects the trace never frees (freed after timing)
  std::string cut_short;     // non-empty if the trace ended early
  // How long the recorded program ran: its CPU time less the recorder's
  // writer thread's (Footer.program_cpu_ns; recorded_cpu true), else the
  // wall time from the recorder's start, at the first traced allocation, to
  // its stop, at exit; the recording threads' own cost of recording
  // included. 0 if the trace does not say (no footer, or no times).
  double recorded_seconds = 0;
  bool recorded_cpu = false;
  uint64_t memory_ops() const { return allocs + frees + reallocs_count; }
};

// What the replay loop reads: the op array and its side tables, by pointer,
// so a re-executed child can replay a program it maps from its parent
// without decoding (or allocating) anything itself.
struct ReplayView {
  const ReplayOp* ops = nullptr;
  size_t num_ops = 0;
  const uint64_t* big_sizes = nullptr;
  const ReallocInfo* reallocs = nullptr;
  uint32_t object_limit = 0;
  uint32_t arena_limit = 1;
  uint64_t memory_ops = 0;
  uint64_t live_at_end = 0;
  // ReplayProgram::arena_classes: arena_limit entries (what a replay per
  // class of containers routes by).
  const uint32_t* arena_classes = nullptr;
};

inline ReplayView ViewOf(const ReplayProgram& p) {
  return ReplayView{p.ops.data(),      p.ops.size(),   p.big_sizes.data(),
                    p.reallocs.data(), p.object_limit, p.arena_limit,
                    p.memory_ops(),    p.live_at_end,  p.arena_classes.data()};
}

// Writes the view's arrays into an anonymous in-memory file (memfd) that a
// child process inherits across exec (not close-on-exec), and returns its
// fd, which the caller closes. Errors: Internal naming the call that failed
// and why ("cannot share the replay program: memfd_create: ..."), with no
// fd left open.
absl::StatusOr<int> ShareReplayView(const ReplayView& view);
// Maps `fd` (from ShareReplayView) read-only; the mapping lives as long as
// the process. Without `populate`, only the side tables are mapped in at
// once: a windowed run maps in the stretches of ops its windows read
// (window_loop.h), not the whole program, in every child.
absl::StatusOr<ReplayView> MapSharedReplayView(int fd, bool populate = true);

// Reads, validates and converts the trace at `path`. Errors carry the
// reader's message (file, byte offset, event index).
absl::StatusOr<ReplayProgram> LoadReplayProgram(const std::string& path);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_REPLAY_PROGRAM_H_
