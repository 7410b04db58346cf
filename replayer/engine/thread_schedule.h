// ThreadSchedule: a multi-threaded trace's replay program split, once, into
// one stream of ops per traced thread, with the few waits that keep the
// replay valid when the streams run concurrently (replayer/engine/thread_replay.h).
//
// A wait makes an op of thread B wait (acquire) until thread A has done a
// given op (release). Waits are added only where the trace makes them
// necessary:
//  - a free or realloc on B of an object last touched (allocated, freed,
//    reallocated) on A: its block and pointer must exist first;
//  - an allocation on B of an object id last freed on A (glibc's trace_run
//    calls these inversions) takes a fresh pointer table slot (the id's
//    may still be A's to free). If B allocated what A freed there (a
//    hand-off from B to A), it also waits for A's free kReuseWindow frees
//    before that one: waiting for that very free would hold B in
//    lock-step with A, since the trace reuses the last freed id first (on
//    a producer/consumer trace, 750,000 waits for 1,000,000 ops and the
//    run all handoffs); not waiting at all lets a producer run thousands
//    of messages ahead of its consumer (peak RSS 0.2 -> 23 MiB). The
//    window bounds how far the replay's live set can exceed the trace's.
//    An id that A allocated and freed itself is no hand-off: B takes it
//    without a wait (threads that share nothing never wait for each
//    other, though the trace's dense ids pass between them). Fresh slots
//    are bounded (kMaxExtraSlots); past that, such an allocation waits
//    for the free itself;
//  - an arena event (create, destroy) on B waits for every other thread's
//    last op in that arena since its previous arena event, and any op on B
//    in an arena whose last arena event (or, for an arena never created,
//    first use) was on A waits for that event.
// Nothing else is serialized. A wait that thread B already knows is
// satisfied (it waited for as far or further on A before) is not added.
//
// No deadlock is possible: every wait points to an op earlier in the
// trace's global order, and each stream runs its ops in that order, so the
// earliest op not yet done can always run (its own thread's earlier ops
// and everything it waits for come before it). A "cycle" of waits cannot be
// written in a trace; the unit test checks the invariant on every schedule.
//
// Thread-safety: built once by the parent, read-only afterwards (a view is
// read by every replay thread).
#ifndef ALLOCTRACE_REPLAYER_ENGINE_THREAD_SCHEDULE_H_
#define ALLOCTRACE_REPLAYER_ENGINE_THREAD_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/replay_program.h"

namespace alloctrace {

// The most traced threads a per-thread replay runs (one OS thread each).
// A trace with more is refused with a message that says so; --threads=one
// replays it serialized. Never unbounded thread creation.
inline constexpr uint32_t kMaxReplayThreads = 1024;

// See above: how many of the freeing thread's frees an allocation of a
// reused id may run ahead of, and how many pointer slots that may add.
inline constexpr uint32_t kReuseWindow = 64;
inline constexpr uint32_t kMaxExtraSlots = uint32_t{1} << 24;  // 128 MiB of pointers

// Flags in the high bits of ReplayOp::kind, in schedule streams only (the
// kinds themselves are below 8).
inline constexpr uint8_t kKindMask = 0x3f;
inline constexpr uint8_t kWaitFlag = 0x80;     // waits[] holds entries for this op
inline constexpr uint8_t kPublishFlag = 0x40;  // another thread waits for this op

// Before local op `op`, wait until thread `thread` has done `count` ops.
struct SyncWait {
  uint32_t op;
  uint32_t thread;
  uint32_t count;
};

// In a stream, an op's `object` is its pointer table slot (the trace's
// object id, or a fresh slot, see above), and a realloc op's `bytes` holds its index into the
// program's realloc table (unused there in the global array, which is
// consumed in order) and into ThreadSchedule::realloc_old_slots.
struct ThreadStream {
  std::vector<ReplayOp> ops;    // in global order; kind may carry the flags
  std::vector<SyncWait> waits;  // by op, in order
};

// An object the trace leaves live: freed after a pass, untimed.
struct LeftoverBlock {
  uint32_t slot;
  uint32_t arena;
  uint64_t bytes;
  uint32_t align_log2;
  uint32_t unused = 0;  // no padding of unknown value in the shared file
};

// How a trace recorded on several threads is replayed (--threads): kEach,
// one OS thread per traced thread (a ThreadSchedule); kOne, one thread in
// the recorded global order; kAuto, as ReplaysPerThread decides. One-thread
// traces always replay on one thread.
enum class ReplayThreads { kAuto, kOne, kEach };
inline constexpr EnumWord<ReplayThreads> kReplayThreadsWords[] = {
    {ReplayThreads::kAuto, "auto"}, {ReplayThreads::kOne, "one"}, {ReplayThreads::kEach, "each"}};

// Whether a trace recorded on `threads` threads with `arena_events` arena
// events replays per thread under `mode`. kAuto: per thread only where the
// trace has container arenas. Without them (a captured program, or one
// whose every block is in the global heap) only a malloc can be adopted,
// and a per-thread replay of threads that hand blocks to each other spends
// its time in waits: on such traces the one-thread replay's pick was the
// program's best far more often, and held under load, while a pool that
// the threads share needs the contention only a per-thread replay has
// (docs/fidelity.md, "Per thread or on one thread").
inline bool ReplaysPerThread(ReplayThreads mode, uint64_t threads, uint64_t arena_events) {
  if (threads <= 1 || mode == ReplayThreads::kOne) return false;
  return mode == ReplayThreads::kEach || arena_events > 0;
}

struct ThreadSchedule {
  // One per thread that made a memory op, in order of its first op (the
  // decoder's dense thread indexes may also count threads that made none).
  std::vector<ThreadStream> streams;
  uint32_t slot_limit = 0;                  // pointer table size
  std::vector<uint32_t> realloc_old_slots;  // by realloc index: the slot it frees
  std::vector<LeftoverBlock> leftovers;
  uint64_t sync_points = 0;         // waits, all streams
  uint64_t cross_thread_frees = 0;  // frees and reallocs of another thread's object
  // By the program's dense thread index (op_threads), its stream (not
  // shared with children).
  std::vector<uint32_t> stream_of;
  // Each stream's ops before op k * kStreamCountEvery, for k = 0, 1, ...
  // while that is at most the program's ops (streams.size() counts each;
  // not shared with children): a walk to a point of the global order
  // (StreamOpsBefore, each round of a windowed replay) starts from the
  // checkpoint before it instead of from the trace's first op.
  std::vector<uint32_t> stream_counts;
};
inline constexpr uint64_t kStreamCountEvery = 65536;

// Splits `program` (with op_threads filled, i.e. more than one thread).
// Refuses more than kMaxReplayThreads threads.
absl::StatusOr<ThreadSchedule> BuildThreadSchedule(const ReplayProgram& program);

// What a child reads: the streams by pointer, as mapped from the parent.
struct StreamView {
  const ReplayOp* ops = nullptr;
  uint64_t num_ops = 0;
  const SyncWait* waits = nullptr;
  uint64_t num_waits = 0;
};
struct ThreadScheduleView {
  std::vector<StreamView> streams;
  uint32_t slot_limit = 0;
  const uint32_t* realloc_old_slots = nullptr;
  const LeftoverBlock* leftovers = nullptr;
  uint64_t num_leftovers = 0;
  uint64_t sync_points = 0;
  uint64_t cross_thread_frees = 0;
};
ThreadScheduleView ViewOf(const ThreadSchedule& s);

// As ShareReplayView (replay_program.h): a memfd a re-executed child
// inherits, and its mapping. InternalError naming the failed call if the
// memfd cannot be made or written; the caller closes the fd.
absl::StatusOr<int> ShareThreadSchedule(const ThreadSchedule& s);
absl::StatusOr<ThreadScheduleView> MapSharedThreadSchedule(int fd);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_THREAD_SCHEDULE_H_
