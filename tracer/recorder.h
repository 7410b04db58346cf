// Recorder: turns allocation events from any number of threads into a trace
// file, with as little work as possible on the recording thread.
//
// Design. Each recording thread owns a ring of RawEvents. Recording an event
// is: check the ring has room, store the event, publish it with a release
// store. While only one thread has ever recorded, events are stored in a
// small stage that stays in the core's cache and copied into the ring a
// stage at a time (recorder_inl.h, kStageEvents). No lock, no atomic
// read-modify-write, no allocation, while only one thread has ever
// recorded. A drainer thread (tracer/ring_drainer.h) empties
// the rings into a TraceWriter (format/trace_writer.h), which turns addresses
// into dense object ids, interns allocation shapes, encodes columnar chunks
// and writes each chunk to the file as it is full.
//
// Global order across threads. Once a second thread records, every event
// takes a number from one global counter (an atomic fetch_add), and the
// drainer merges the rings in that order, writing only gap-free runs, so the
// trace holds one order consistent with what each thread saw. The switch is
// made safe without slowing the single-thread path by an asymmetric fence
// (membarrier(2)): the registering thread fences every thread and waits until
// the first thread is between events; events before that point are ordered
// before all numbered ones. Without membarrier every event is numbered.
//
// Thread-safety: all methods may be called from any thread. Start and Stop
// must not race with each other; events recorded by other threads while Stop
// runs may be dropped (they are counted). The recorder never records its own
// allocations: only TraceAllocator (and, for whole-program capture, the
// preload library) call Record*.
//
// Failure: Start returns an error if the file cannot be created. A write error
// later stops the recording; Stop returns it. A program that dies leaves
// every chunk already written readable (the footer is missing).
#ifndef ALLOCTRACE_TRACER_RECORDER_H_
#define ALLOCTRACE_TRACER_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "alloctrace/tracer/raw_event.h"

namespace alloctrace {

struct RecordingOptions {
  std::string path;      // the trace file to create (truncated if present)
  std::string workload;  // stored in the header
  std::string program;   // stored in the header
  std::map<std::string, std::string> labels;
  bool timestamps = false;          // add a steady-clock timestamp to every event
  uint32_t chunk_events = 1 << 16;  // events per chunk (the unit that survives a crash)
  uint32_t flush_ms = 100;          // write a partial chunk at least this often
};

// A class of containers as registered (see Recorder::RegisterClass).
struct RecordedClass {
  std::string name;
  uint64_t elem_size = 0;
  bool tagged = false;
};

// What a finished recording did; filled in by Stop.
struct RecordingStats {
  uint64_t events = 0;
  uint64_t chunks = 0;
  uint64_t bytes = 0;            // file size
  uint64_t dropped_events = 0;   // recorded while stopping, or after a thread's exit
  uint64_t unmatched_frees = 0;  // frees of addresses never seen allocated
  uint64_t threads = 0;
  double writer_cpu_seconds = 0;  // CPU time of the drainer thread (it runs the TraceWriter)
};

namespace recorder_internal {
struct ThreadRing;
union GlobalStorage;
void DetachAtThreadExit(void* ring);
class RingDrainer;
class LockedRings;
// See Recorder::ThreadExcluded.
extern thread_local bool tls_excluded;
}  // namespace recorder_internal

class Recorder {
 public:
  // The process-wide recorder that TraceAllocator records into. Inline and
  // constant-initialized: no call and no guard on each event, and usable
  // from any static initializer.
  static Recorder& Global();

  // Starts a recording into options.path. Fails if one is running.
  absl::Status Start(const RecordingOptions& options);
  // Drains every thread's events, writes the footer and closes the file.
  // Returns the first write error, if any. No-op if not recording.
  absl::Status Stop(RecordingStats* stats = nullptr);
  bool recording() const { return active_.load(std::memory_order_acquire); }

  // Arena (allocator instance) lifetime. Ids are dense from 1 within a
  // process; 0 means "no arena" (a global allocator). `class_id` is the
  // arena's class from RegisterClass (0: unnamed); the recording defines the
  // class in the trace the first time one of its arenas is created.
  // Always inline (in the arena handle's own paths, which are calls).
  ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CreateArena(uint32_t class_id = 0);
  ABSL_ATTRIBUTE_ALWAYS_INLINE inline void DestroyArena(uint32_t arena);

  // The hot path, inline in the caller (TryStage says why). elem_size *
  // count is the allocation's size in bytes.
  // `site` is the allocation's call stack (tracer/call_sites.h), 0: none.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void RecordAlloc(const void* p, uint32_t arena, uint32_t elem_size,
                                                uint64_t count, uint8_t align_log2,
                                                uint32_t site = 0) {
    RecordAllocation(p, arena, elem_size, count, align_log2, /*zeroed=*/false, site);
  }
  // calloc(count, elem_size): an allocation of zeroed memory.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void RecordCalloc(const void* p, uint32_t arena, uint32_t elem_size,
                                                 uint64_t count, uint8_t align_log2,
                                                 uint32_t site = 0) {
    RecordAllocation(p, arena, elem_size, count, align_log2, /*zeroed=*/true, site);
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE void RecordFree(const void* p, uint32_t arena) {
    if (!TryStage([&](RawEvent* e) ABSL_ATTRIBUTE_ALWAYS_INLINE { FillFree(e, p, arena); }))
      RecordFreeSlow(p, arena);
  }
  // realloc: `old_p` (which may equal `new_p`) is replaced by `new_p`.
  void RecordRealloc(const void* old_p, const void* new_p, uint32_t arena, uint64_t bytes,
                     uint8_t align_log2, uint32_t site = 0) {
    RawEvent* e = BeginEvent();
    if (e == nullptr) return;
    e->kind = RawKind::kRealloc;
    e->ptr = reinterpret_cast<uintptr_t>(new_p);
    e->aux = reinterpret_cast<uintptr_t>(old_p);
    e->arena = arena;
    e->elem_size = 1;
    e->count = bytes;
    e->align_log2 = align_log2;
    e->site = site;
    EndEvent();
  }

  // Classes of containers (tracer/trace_allocator.h). Returns the class's
  // id, dense from 1 in order of registration within the process; the same
  // name, size and tag flag always give the same id. Takes a lock: call it
  // once per class (TraceAllocator does, per instantiation), not per event.
  // Works whether or not a recording is running.
  static uint32_t RegisterClass(std::string_view name, uint64_t elem_size, bool tagged);
  // The class registered as `id`; nullptr for 0 or an id never registered.
  // The pointer stays valid for the life of the process.
  static const RecordedClass* RegisteredClass(uint32_t id);

  // Threads marked excluded record nothing through the preload hooks: the
  // drainer thread marks itself, and a hook marks the thread while it is
  // inside the recorder so the recorder's own allocations are not recorded.
  static bool ThreadExcluded() { return recorder_internal::tls_excluded; }
  static void SetThreadExcluded(bool excluded) { recorder_internal::tls_excluded = excluded; }

  // For whole-program capture after fork(): forget the parent's recording in
  // the child (its drainer thread does not exist there) without writing to the
  // parent's file, so the child can Start its own.
  void AbandonAfterFork();

  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

 private:
  Recorder() = default;

  ABSL_ATTRIBUTE_ALWAYS_INLINE void RecordAllocation(const void* p, uint32_t arena,
                                                     uint32_t elem_size, uint64_t count,
                                                     uint8_t align_log2, bool zeroed,
                                                     uint32_t site) {
    if (!TryStage(
            [&](RawEvent* e) ABSL_ATTRIBUTE_ALWAYS_INLINE {
              FillAllocation(e, p, arena, elem_size, count, align_log2, zeroed, site);
            },
            [&](RawEvent* last) ABSL_ATTRIBUTE_ALWAYS_INLINE {
              // The arena's creation, just recorded (a container that
              // allocates as it is made): one slot for both, its class
              // kept in aux. Arena 0 (a capture's every malloc) is never
              // created: no need to read the last slot.
              if (arena == 0 || last->kind != RawKind::kArenaCreate || last->arena != arena) {
                return false;
              }
              FillAllocation(last, p, arena, elem_size, count, align_log2, zeroed, site);
              last->kind = RawKind::kArenaCreateAlloc;
              return true;
            })) {
      RecordAllocationSlow(p, arena, elem_size, count, align_log2, zeroed, site);
    }
  }
  // An allocation's and a free's fields, for the inline and general paths.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void FillAllocation(RawEvent* e, const void* p,
                                                          uint32_t arena, uint32_t elem_size,
                                                          uint64_t count, uint8_t align_log2,
                                                          bool zeroed, uint32_t site) {
    e->kind = RawKind::kAlloc;
    e->ptr = reinterpret_cast<uintptr_t>(p);
    e->arena = arena;
    e->elem_size = elem_size;
    e->count = count;
    e->align_log2 = align_log2;
    e->zeroed = zeroed;
    e->site = site;
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void FillFree(RawEvent* e, const void* p, uint32_t arena) {
    e->kind = RawKind::kFree;
    e->ptr = reinterpret_cast<uintptr_t>(p);
    e->arena = arena;
  }

  // The common cases of every event, inline: a thread recording alone
  // with room in its stage, or threads recording at once with room in the
  // ring; no timestamps. Records the event `fill` writes and returns true;
  // else writes nothing and returns false, and the caller takes the general
  // path (BeginEvent, EndEvent) out of line. Nothing on its path but a full
  // stage's flush and a wake of the drainer is a call, so a caller saves
  // no registers for it.
  template <typename Fill>
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool TryStage(const Fill& fill);
  // The same, but first, while one thread records and its stage holds its
  // last event, `merge` may write this event into that one's slot (a
  // kArenaCreateAlloc or kFreeArenaDestroy) and return true: nothing more
  // is stored. Both lambdas are always inline too: the compiler may
  // otherwise leave one out of line in a program with many allocator
  // types, and a call costs the caller its registers on every event.
  template <typename Fill, typename Merge>
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool TryStage(const Fill& fill, const Merge& merge);
  // The stage is full: copies it into the ring and ends the event.
  void EndStage(recorder_internal::ThreadRing* ring);
  void RecordAllocationSlow(const void* p, uint32_t arena, uint32_t elem_size, uint64_t count,
                            uint8_t align_log2, bool zeroed, uint32_t site);
  void RecordFreeSlow(const void* p, uint32_t arena);
  uint32_t CreateArenaSlow(uint32_t class_id);
  void DestroyArenaSlow(uint32_t arena);

  // Returns the slot for the next event of this thread, or nullptr if not
  // recording. Must be followed by EndEvent() when non-null.
  RawEvent* BeginEvent();
  void EndEvent();
  RawEvent* BeginEventSlow();
  void WakeDrainer();
  // Every kWakeEvery events: wakes the drainer only if `ring` is three
  // quarters full while one thread records, half full while several do
  // (it also drains on its own, at least every millisecond).
  void MaybeWakeDrainer(recorder_internal::ThreadRing* ring);
  static uint64_t NowNs();
  // Waits until `ring` has room for `events` more (or the recording stops).
  void WaitForRoom(recorder_internal::ThreadRing* ring, uint64_t events);
  // Copies `ring`'s staged events into it and publishes them. By the owning
  // thread inside an event, or while it waits (the switch to multi-thread
  // mode, its exit). Never waits for room: a staged event is begun only with
  // room for a whole stage. Returns whether the copy crossed a multiple of
  // kWakeEvery: the owner then calls MaybeWakeDrainer once outside the event
  // (it takes the start lock, which Stop holds while waiting for events).
  bool FlushStage(recorder_internal::ThreadRing* ring);
  // At thread exit, by the owner: its stage into its ring.
  void FlushOwnStage(recorder_internal::ThreadRing* ring);
  recorder_internal::ThreadRing* AttachThread();
  void EnterMultiThreadMode(recorder_internal::LockedRings& rings);
  void AutoStart();
  void DetachThread(recorder_internal::ThreadRing* ring);
  friend void recorder_internal::DetachAtThreadExit(void* ring);

  std::atomic<bool> active_{false};
  std::atomic<bool> ever_started_{false};
  std::atomic<uint64_t> generation_{1};  // changes on every Start and Stop
  // The generation whose rings TryStage's inline path serves: generation_
  // while recording without timestamps, else kNoFastGeneration (no ring's
  // generation), so that path checks both with one compare.
  static constexpr uint64_t kNoFastGeneration = ~uint64_t{0};
  std::atomic<uint64_t> fast_generation_{kNoFastGeneration};
  std::atomic<bool> multi_thread_{false};
  bool have_membarrier_ = false;
  std::atomic<uint64_t> next_seq_{0};
  std::atomic<uint32_t> next_arena_{1};
  std::atomic<uint64_t> dropped_{0};
  bool timestamps_ = false;
  // The consumer side of the current recording (tracer/ring_drainer.h).
  // Owned; a plain pointer, so that Recorder's constructor is constexpr
  // where RingDrainer is incomplete (Global()).
  recorder_internal::RingDrainer* drainer_ = nullptr;

  friend union recorder_internal::GlobalStorage;
  static recorder_internal::GlobalStorage global_;
};

namespace recorder_internal {
// The Recorder of Global(), never destroyed: threads may record while the
// process exits.
union GlobalStorage {
  constexpr GlobalStorage() : recorder() {}
  ~GlobalStorage() {}
  Recorder recorder;
};
}  // namespace recorder_internal

inline recorder_internal::GlobalStorage Recorder::global_;
inline Recorder& Recorder::Global() { return global_.recorder; }

}  // namespace alloctrace

#include "alloctrace/tracer/recorder_inl.h"  // IWYU pragma: export

#endif  // ALLOCTRACE_TRACER_RECORDER_H_
