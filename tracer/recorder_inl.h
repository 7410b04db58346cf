// The Recorder's hot path, inline. Include tracer/recorder.h, not this file.
#ifndef ALLOCTRACE_TRACER_RECORDER_INL_H_
#define ALLOCTRACE_TRACER_RECORDER_INL_H_

#include <atomic>
#include <cstdint>

#include "absl/base/optimization.h"
#include "alloctrace/tracer/raw_event.h"

namespace alloctrace {
namespace recorder_internal {

inline constexpr uint64_t kRingCapacity = uint64_t{1} << 14;  // events, a power of two
// Each time this many events are published the producer looks whether the
// drainer needs a nudge (Recorder::MaybeWakeDrainer).
inline constexpr uint64_t kWakeEvery = kRingCapacity / 4;

// A single-producer (the owning thread), single-consumer (the drainer) ring.
struct ThreadRing {
  // Producer side.
  uint64_t head = 0;                  // next slot to fill
  uint64_t cached_tail = 0;           // the drainer's tail as last seen
  uint64_t generation = 0;            // the recording this ring belongs to
  std::atomic<uint32_t> in_event{0};  // 1 while an event is being written
  uint32_t thread_id = 0;
  // Consumer side, on their own cache lines.
  alignas(64) std::atomic<uint64_t> published{0};
  alignas(64) std::atomic<uint64_t> tail{0};
  // Registry (under the recorder's lock).
  bool closed = false;  // the owning thread has exited
  RawEvent events[kRingCapacity];
};

// The calling thread's ring, or nullptr. Trivially initialized so reading it
// costs one TLS load.
extern thread_local ThreadRing* tls_ring;

}  // namespace recorder_internal

inline RawEvent* Recorder::BeginEvent() {
  recorder_internal::ThreadRing* r = recorder_internal::tls_ring;
  if (ABSL_PREDICT_FALSE(r == nullptr)) return BeginEventSlow();
  r->in_event.store(1, std::memory_order_relaxed);
  // Orders the store above before the loads below against Stop() and the
  // switch to multi-thread mode, which pair it with membarrier(2).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (ABSL_PREDICT_FALSE(r->generation != generation_.load(std::memory_order_relaxed) ||
                         r->head - r->cached_tail >= recorder_internal::kRingCapacity)) {
    r->in_event.store(0, std::memory_order_release);
    return BeginEventSlow();
  }
  RawEvent* e = &r->events[r->head & (recorder_internal::kRingCapacity - 1)];
  e->seq = ABSL_PREDICT_TRUE(!multi_thread_.load(std::memory_order_relaxed))
               ? kUnsequenced
               : next_seq_.fetch_add(1, std::memory_order_relaxed);
  if (ABSL_PREDICT_FALSE(timestamps_)) e->time_ns = NowNs();
  return e;
}

inline void Recorder::EndEvent() {
  recorder_internal::ThreadRing* r = recorder_internal::tls_ring;
  const uint64_t h = ++r->head;
  r->published.store(h, std::memory_order_release);
  r->in_event.store(0, std::memory_order_release);
  if (ABSL_PREDICT_FALSE((h & (recorder_internal::kWakeEvery - 1)) == 0)) MaybeWakeDrainer(r);
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_RECORDER_INL_H_
