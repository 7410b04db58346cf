// The Recorder's hot path, inline. Include tracer/recorder.h, not this file.
#ifndef ALLOCTRACE_TRACER_RECORDER_INL_H_
#define ALLOCTRACE_TRACER_RECORDER_INL_H_

#include <atomic>
#include <cstdint>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/tracer/raw_event.h"

namespace alloctrace {
namespace recorder_internal {

inline constexpr uint64_t kRingCapacity = uint64_t{1} << 14;  // events, a power of two
// While one thread alone records, its events are written to a stage of this
// many events, which stays in its core's cache, and copied into the ring a
// stage at a time. Writing each event into the ring directly stored into
// lines the drainer's core had read a lap before, so every event waited on
// a line coming back from the other core; a copy of whole stages makes that
// traffic a burst the core overlaps (lru_cache recorded: 0.81x the wall time
// of the direct writes, 7 paired runs).
inline constexpr uint32_t kStageEvents = 64;
static_assert(kRingCapacity % kStageEvents == 0);
// Arena ids a thread takes from the shared counter at once: one locked
// increment per this many arenas, not one per arena.
inline constexpr uint32_t kArenaIdBlock = 64;
// Each time this many events are published the producer looks whether the
// drainer needs a nudge (Recorder::MaybeWakeDrainer).
inline constexpr uint64_t kWakeEvery = kRingCapacity / 4;

// A single-producer (the owning thread), single-consumer (the drainer) ring.
struct ThreadRing {
  ThreadRing() {
    for (RawEvent& e : stage) e.seq = kUnsequenced;
  }
  // Producer side.
  // Next slot to fill. Written by the owning thread, and by the thread
  // that switches the recording to multi-thread mode while it copies the
  // owner's stage; the owner may read it meanwhile outside an event (its
  // check for room before it waits, done again inside the event), so it is
  // atomic, all accesses relaxed (plain moves on x86-64).
  std::atomic<uint64_t> head{0};
  uint64_t cached_tail = 0;           // the drainer's tail as last seen
  uint64_t generation = 0;            // the recording this ring belongs to
  std::atomic<uint32_t> in_event{0};  // 1 while an event is being written
  // Events in `stage` not yet copied into the ring. Written by the owning
  // thread, and by the thread that switches the recording to multi-thread
  // mode, which copies them while the owner waits (Recorder::FlushStage).
  std::atomic<uint32_t> staged{0};
  bool event_staged = false;  // the event being written is in `stage`
  // Arena ids this thread hands out before taking the next block from the
  // recorder's counter (Recorder::CreateArena).
  uint32_t arena_next = 0;
  uint32_t arena_end = 0;
  // Consumer side, on their own cache lines.
  alignas(64) std::atomic<uint64_t> published{0};
  alignas(64) std::atomic<uint64_t> tail{0};
  // Registry (under the recorder's lock).
  bool closed = false;  // the owning thread has exited
  // The trace's thread id, read by the drainer. Off the producer's line:
  // the drainer read it there for every event, and each read took the line
  // away from the recording thread, which writes it for every event.
  uint32_t thread_id = 0;
  // Every event here is unsequenced (only one-thread mode stages), so
  // each slot's seq is set once, here, not by every event.
  alignas(64) RawEvent stage[kStageEvents];
  alignas(64) RawEvent events[kRingCapacity];
};

// The calling thread's ring, or nullptr. Defined here with its constant
// initializer, so reading it is one TLS load: declared extern, every read
// first checked for a TLS init function.
inline thread_local ThreadRing* tls_ring = nullptr;

}  // namespace recorder_internal

template <typename Fill, typename Merge>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool Recorder::TryStage(const Fill& fill, const Merge& merge) {
  using recorder_internal::kRingCapacity;
  using recorder_internal::kStageEvents;
  recorder_internal::ThreadRing* r = recorder_internal::tls_ring;
  if (ABSL_PREDICT_FALSE(r == nullptr)) return false;
  r->in_event.store(1, std::memory_order_relaxed);
  // Orders the store above before the loads below (see BeginEvent).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // Another recording's ring, or timestamps (fast_generation_).
  if (ABSL_PREDICT_FALSE(r->generation != fast_generation_.load(std::memory_order_relaxed))) {
    r->in_event.store(0, std::memory_order_release);
    return false;
  }
  if (ABSL_PREDICT_TRUE(!multi_thread_.load(std::memory_order_relaxed))) {
    // Room for a whole stage, so copying it never waits (FlushStage):
    // looked at as a stage begins. Until the stage is copied the head
    // stays and the cached tail only grows, so the room stays.
    const uint32_t staged = r->staged.load(std::memory_order_relaxed);
    if (staged == 0) {
      if (ABSL_PREDICT_FALSE(r->head.load(std::memory_order_relaxed) + kStageEvents -
                                 r->cached_tail >
                             kRingCapacity)) {
        r->in_event.store(0, std::memory_order_release);
        return false;
      }
    } else if (merge(&r->stage[staged - 1])) {
      // This thread's last event, still in the stage, holds this one too.
      r->in_event.store(0, std::memory_order_release);
      return true;
    }
    RawEvent* e = &r->stage[staged];
    fill(e);
    r->staged.store(staged + 1, std::memory_order_relaxed);
    if (ABSL_PREDICT_FALSE(staged + 1 == kStageEvents)) {
      EndStage(r);
      return true;
    }
    r->in_event.store(0, std::memory_order_release);
    return true;
  }
  // Threads recording at once: a numbered event straight into the ring,
  // unless a stage left from one-thread mode is still being copied.
  const uint64_t h = r->head.load(std::memory_order_relaxed);
  if (ABSL_PREDICT_FALSE(r->staged.load(std::memory_order_acquire) != 0 ||
                         h - r->cached_tail >= kRingCapacity)) {
    r->in_event.store(0, std::memory_order_release);
    return false;
  }
  RawEvent* e = &r->events[h & (kRingCapacity - 1)];
  e->seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  fill(e);
  r->head.store(h + 1, std::memory_order_relaxed);
  r->published.store(h + 1, std::memory_order_release);
  r->in_event.store(0, std::memory_order_release);
  if (ABSL_PREDICT_FALSE(((h + 1) & (recorder_internal::kWakeEvery - 1)) == 0)) {
    MaybeWakeDrainer(r);
  }
  return true;
}

template <typename Fill>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool Recorder::TryStage(const Fill& fill) {
  return TryStage(fill, [](RawEvent*) ABSL_ATTRIBUTE_ALWAYS_INLINE { return false; });
}

inline uint32_t Recorder::CreateArena(uint32_t class_id) {
  recorder_internal::ThreadRing* r = recorder_internal::tls_ring;
  // Ids come from the thread's block of them; a new block is the slow path's.
  if (ABSL_PREDICT_TRUE(r != nullptr && r->arena_next != r->arena_end)) {
    const uint32_t id = r->arena_next;
    if (TryStage([&](RawEvent* e) ABSL_ATTRIBUTE_ALWAYS_INLINE {
          e->kind = RawKind::kArenaCreate;
          e->arena = id;
          e->aux = class_id;
        })) {
      r->arena_next = id + 1;
      return id;
    }
  }
  return CreateArenaSlow(class_id);
}

inline void Recorder::DestroyArena(uint32_t arena) {
  if (!TryStage(
          [&](RawEvent* e) ABSL_ATTRIBUTE_ALWAYS_INLINE {
            e->kind = RawKind::kArenaDestroy;
            e->arena = arena;
          },
          [&](RawEvent* last) ABSL_ATTRIBUTE_ALWAYS_INLINE {
            // The arena's last free, just recorded (a container's
            // destructor frees, then its allocator goes).
            if (last->kind != RawKind::kFree || last->arena != arena) return false;
            last->kind = RawKind::kFreeArenaDestroy;
            return true;
          })) {
    DestroyArenaSlow(arena);
  }
}

// The general path of an event (TryStage's exceptions: another thread
// records, timestamps, a full ring, the first event of a thread or a
// recording) and of every realloc.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline RawEvent* Recorder::BeginEvent() {
  using recorder_internal::kRingCapacity;
  using recorder_internal::kStageEvents;
  recorder_internal::ThreadRing* r = recorder_internal::tls_ring;
  if (ABSL_PREDICT_FALSE(r == nullptr)) return BeginEventSlow();
  r->in_event.store(1, std::memory_order_relaxed);
  // Orders the store above before the loads below against Stop() and the
  // switch to multi-thread mode, which pair it with membarrier(2).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  RawEvent* e;
  if (ABSL_PREDICT_TRUE(!multi_thread_.load(std::memory_order_relaxed))) {
    // Room for a whole stage, so copying it never waits (FlushStage).
    if (ABSL_PREDICT_FALSE(r->generation != generation_.load(std::memory_order_relaxed) ||
                           r->head.load(std::memory_order_relaxed) + kStageEvents - r->cached_tail >
                               kRingCapacity)) {
      r->in_event.store(0, std::memory_order_release);
      return BeginEventSlow();
    }
    e = &r->stage[r->staged.load(std::memory_order_relaxed)];
    r->event_staged = true;
  } else {
    // A stage left from single-thread mode is being copied by the switching
    // thread: wait for it in the slow path.
    if (ABSL_PREDICT_FALSE(r->generation != generation_.load(std::memory_order_relaxed) ||
                           r->staged.load(std::memory_order_acquire) != 0 ||
                           r->head.load(std::memory_order_relaxed) - r->cached_tail >=
                               kRingCapacity)) {
      r->in_event.store(0, std::memory_order_release);
      return BeginEventSlow();
    }
    e = &r->events[r->head.load(std::memory_order_relaxed) & (kRingCapacity - 1)];
    r->event_staged = false;
    e->seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  }
  if (ABSL_PREDICT_FALSE(timestamps_)) e->time_ns = NowNs();
  return e;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Recorder::EndEvent() {
  recorder_internal::ThreadRing* r = recorder_internal::tls_ring;
  if (ABSL_PREDICT_TRUE(r->event_staged)) {
    const uint32_t n = r->staged.load(std::memory_order_relaxed) + 1;
    r->staged.store(n, std::memory_order_relaxed);
    if (ABSL_PREDICT_FALSE(n == recorder_internal::kStageEvents)) {
      const bool look = FlushStage(r);
      r->in_event.store(0, std::memory_order_release);
      if (look) MaybeWakeDrainer(r);
      return;
    }
    r->in_event.store(0, std::memory_order_release);
    return;
  }
  const uint64_t h = r->head.load(std::memory_order_relaxed) + 1;
  r->head.store(h, std::memory_order_relaxed);
  r->published.store(h, std::memory_order_release);
  r->in_event.store(0, std::memory_order_release);
  if (ABSL_PREDICT_FALSE((h & (recorder_internal::kWakeEvery - 1)) == 0)) MaybeWakeDrainer(r);
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_RECORDER_INL_H_
