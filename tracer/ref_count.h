// RefCount: a reference count that takes no locked instruction while a
// single thread uses such counts, and atomic read-modify-writes after a
// second thread first does.
//
// Why: a locked read-modify-write waits until every store issued before it
// has reached the cache. While recording, those stores are the ring's
// events, whose cache lines the drainer's core read last, so each locked
// count waited for lines to come back from the other core. TraceAllocator's
// arena handles are counted this way, and containers copy allocators often
// (a string made from a temporary allocator copies it and drops the
// temporary; an element moved into a map copies its allocator): in a
// profile of a recorded single-threaded program the two locked operations
// of each copy took about a seventh of all samples.
//
// How: every RefCount of the process is in one mode.
// - sole: the first thread to touch a count owns them all and uses plain
//   loads and stores;
// - shared: every thread uses atomic read-modify-writes.
// The first other thread to touch a count switches the process to shared
// for good: it publishes the mode, fences the sole thread with
// membarrier(2) and waits until that thread is outside any count operation
// (the Recorder switches to numbered events the same way). Without
// membarrier the mode is shared from the start. A fork child's only thread
// becomes the sole one; a count that another thread was changing at the
// fork is then as undefined as a mutex it held.
#ifndef ALLOCTRACE_TRACER_REF_COUNT_H_
#define ALLOCTRACE_TRACER_REF_COUNT_H_

#include <atomic>
#include <cstdint>

#include "absl/base/optimization.h"

namespace alloctrace {
namespace ref_count_internal {

// A thread's mark is the address of its own copy of this byte.
inline thread_local char tls_mark = 0;
// The mark of the mode: after the switch, no thread's.
inline const char kSharedMode = 0;
// The sole thread's mark; nullptr before any count was touched, &kSharedMode
// after the switch.
inline std::atomic<const void*> sole{nullptr};
// 1 while the sole thread is inside an operation (written by it alone).
inline std::atomic<uint32_t> sole_busy{0};

// Called by a thread that is not the sole one while the mode is not
// shared: claims sole mode for the caller when no thread has, or switches
// the process to shared. Returns whether the caller is now the sole thread.
bool ClaimOrShare();

// Whether the calling thread may change a count with plain loads and
// stores; if so it must call LeaveSole() after.
inline bool EnterSole() {
  const void* me = &tls_mark;
  const void* s = sole.load(std::memory_order_relaxed);
  if (ABSL_PREDICT_FALSE(s != me) && (s == &kSharedMode || !ClaimOrShare())) return false;
  sole_busy.store(1, std::memory_order_relaxed);
  // Orders the store above before the load below against the switch, which
  // pairs it with membarrier(2).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (ABSL_PREDICT_FALSE(sole.load(std::memory_order_relaxed) != me)) {
    sole_busy.store(0, std::memory_order_release);
    return false;
  }
  return true;
}
inline void LeaveSole() { sole_busy.store(0, std::memory_order_release); }

}  // namespace ref_count_internal

class RefCount {
 public:
  RefCount() = default;  // one reference
  RefCount(const RefCount&) = delete;
  RefCount& operator=(const RefCount&) = delete;

  void Ref() {
    if (ref_count_internal::EnterSole()) {
      n_.store(n_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ref_count_internal::LeaveSole();
    } else {
      n_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Drops one reference; true when it was the last.
  bool Unref() {
    if (ref_count_internal::EnterSole()) {
      const uint32_t left = n_.load(std::memory_order_relaxed) - 1;
      n_.store(left, std::memory_order_relaxed);
      ref_count_internal::LeaveSole();
      return left == 0;
    }
    return n_.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }

 private:
  std::atomic<uint32_t> n_{1};
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_REF_COUNT_H_
