// RingDrainer: the Recorder's consumer side. One per recording, on a thread
// of its own: it takes events out of every recording thread's ring, merges
// them into one global order and feeds them to the TraceWriter
// (format/trace_writer.h), which turns addresses into object ids and writes
// each chunk as it fills. Only tracer/recorder.cc uses it.
//
// The merge (see Recorder's class comment for the protocol): a ring's
// unnumbered events (kUnsequenced, recorded while one thread had ever
// recorded) are written at once, in ring order; once the recorder has
// switched to multi-thread mode (LockedRings::StartMergingNumbered) numbered
// events are staged, sorted and written only as far as the numbers run
// without a gap, since a missing number is an event another thread is still
// writing. Finish writes whatever is staged.
//
// Thread-safety: Wake and LockedRings may be used from any thread;
// StartThread and Finish only by the thread that owns the recording (the
// recorder's start lock serializes them).
#ifndef ALLOCTRACE_TRACER_RING_DRAINER_H_
#define ALLOCTRACE_TRACER_RING_DRAINER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/tracer/module_map.h"
#include "alloctrace/tracer/raw_event.h"
#include "alloctrace/tracer/recorder.h"

namespace alloctrace::recorder_internal {

class RingDrainer {
 public:
  // `merge_numbered_from_start`: every event of this recording is numbered
  // (no membarrier(2), so no single-thread shortcut).
  RingDrainer(std::unique_ptr<TraceWriter> out, const RecordingOptions& options,
              bool merge_numbered_from_start);
  // Frees the rings of exited threads; live threads keep theirs (they
  // re-attach them if they record again). Call Finish first if StartThread
  // was called.
  ~RingDrainer();

  RingDrainer(const RingDrainer&) = delete;
  RingDrainer& operator=(const RingDrainer&) = delete;

  // Starts the draining thread. Its own allocations are never recorded.
  void StartThread();
  // Asks the thread to drain now instead of at its next poll (at most 1 ms).
  void Wake();
  // Stops the thread, drains every ring, writes the footer (with
  // `dropped_events`) and fills `stats` (if not null). Returns the first
  // write error of the recording, if any.
  absl::Status Finish(uint64_t dropped_events, RecordingStats* stats);

 private:
  friend class LockedRings;
  struct Staged {
    uint32_t thread;
    RawEvent event;
  };

  void Run();
  // Returns how many events it took from the rings. `final`: write every
  // staged event, gaps or not (no thread is recording any more).
  size_t Drain(bool final);
  // Drain's steps: one ring's events up to what it published (written if
  // unsequenced, staged if numbered and merge_numbered; with `final`, its
  // stage too), returning how many it took; the staged numbered events
  // merged and written as far as they run without a gap (all if `final`);
  // the rings of exited threads, once empty, freed.
  size_t DrainRing(ThreadRing* r, bool merge_numbered, bool final);
  void EmitNumbered(bool final);
  void FreeExitedRings();
  // `out` is *out_ and `timestamps` options_.timestamps, read once by the
  // caller's loop.
  void Emit(TraceWriter& out, bool timestamps, uint32_t thread, const RawEvent& e);
  void EmitRealloc(uint32_t thread, const RawEvent& e);
  void EmitArenaCreate(TraceWriter& out, uint32_t thread, const RawEvent& e);
  // Defines class `cls` (a registered class id) in the trace.
  void DefineClass(uint32_t cls);
  // Writes call stack `site` (and the modules it names) into the trace the
  // first time an event names it.
  void DefineSite(uint32_t site);

  // The registry of rings; only through LockedRings.
  std::mutex reg_mu_;
  std::vector<ThreadRing*> rings_;  // guarded by reg_mu_
  uint32_t next_thread_id_ = 0;     // guarded by reg_mu_
  bool merge_numbered_;             // guarded by reg_mu_

  std::unique_ptr<TraceWriter> out_;
  const RecordingOptions options_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;  // guarded by mu_
  bool stop_ = false;  // guarded by mu_
  // Owned by the draining thread (by Finish's caller after the join).
  std::vector<Staged> staging_;
  std::vector<size_t> run_starts_;  // Drain's: where each sorted run begins in staging_
  uint64_t next_seq_ = 0;
  bool one_thread_ = true;  // no numbered events yet: one thread records (Drain's)
  uint64_t threads_seen_ = 0;
  double cpu_seconds_ = 0;
  ModuleMap modules_;
  std::vector<uint64_t> site_pcs_;
  std::vector<uint32_t> site_modules_;
  // A hash of each stack written (as truncated) -> its id.
  absl::flat_hash_map<uint64_t, uint32_t> defined_stacks_;
};

// The drainer's set of rings, locked for this object's lifetime: the
// recorder registers and closes rings, and makes the switch to multi-thread
// mode, through it. Holds a mutex the draining thread takes on every drain:
// keep it short.
class LockedRings {
 public:
  explicit LockedRings(RingDrainer& drainer) : d_(drainer), lock_(drainer.reg_mu_) {}

  bool empty() const { return d_.rings_.empty(); }
  // Registers `ring` under the next thread id, reset to empty.
  void Add(ThreadRing* ring);
  // The ring's thread has exited. Returns false if `ring` is not registered
  // (the caller still owns it); else the drainer frees it once drained.
  bool Close(ThreadRing* ring);
  // Yields until no registered ring's thread is inside an event. Pair with
  // a membarrier(2) so every such event is visible.
  void WaitUntilNoEventInProgress() const;
  // The registered rings (to copy their stages at the switch).
  const std::vector<ThreadRing*>& rings() const { return d_.rings_; }
  // From now on numbered events are merged (the recorder has switched to
  // multi-thread mode and every unnumbered event is published).
  void StartMergingNumbered() { d_.merge_numbered_ = true; }

 private:
  RingDrainer& d_;
  std::lock_guard<std::mutex> lock_;
};

}  // namespace alloctrace::recorder_internal

#endif  // ALLOCTRACE_TRACER_RING_DRAINER_H_
