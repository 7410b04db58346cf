#include "alloctrace/tracer/ring_drainer.h"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/base/attributes.h"
#include "alloctrace/tracer/call_sites.h"
#include "alloctrace/tracer/recorder_inl.h"

namespace alloctrace::recorder_internal {
namespace {

// The writer looks this many events ahead of the one it writes: a free's
// lookups in the writer's maps wait for lines last touched when the block
// or its arena was made (in a recorded lru_cache, half the writer's time),
// and this many events give the lines time to arrive.
constexpr size_t kLookAhead = 16;

// Starts loading what writing `e` will look up and is likely cold: for a
// free, the address map's slot of the block and its arena's entry; for an
// arena's end, its entry. An allocation's lookups (a slot just freed, the
// arena in use) are warm already, and on a trace whose lookups all hit,
// the look-ahead costs the writer 1 to 2 ns an event (tracer_benchmark's
// BM_HotPath). Always inline, as the hints it calls.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void LookAhead(const TraceWriter& out, const RawEvent& e) {
  if (e.kind == RawKind::kFree || e.kind == RawKind::kFreeArenaDestroy) {
    out.PrefetchAddress(e.ptr);
    if (e.arena != 0) out.PrefetchArena(e.arena);
  } else if (e.kind == RawKind::kArenaDestroy) {
    out.PrefetchArena(e.arena);
  }
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

RingDrainer::RingDrainer(std::unique_ptr<TraceWriter> out, const RecordingOptions& options,
                         bool merge_numbered_from_start)
    : merge_numbered_(merge_numbered_from_start), out_(std::move(out)), options_(options) {}

RingDrainer::~RingDrainer() {
  std::lock_guard<std::mutex> l(reg_mu_);
  for (ThreadRing* r : rings_) {
    if (r->closed) delete r;
  }
}

void RingDrainer::StartThread() {
  thread_ = std::thread([this] {
    tls_excluded = true;  // the drainer's own allocations are never recorded
    Run();
  });
}

void RingDrainer::Wake() {
  std::lock_guard<std::mutex> l(mu_);
  wake_ = true;
  cv_.notify_one();
}

absl::Status RingDrainer::Finish(uint64_t dropped_events, RecordingStats* stats) {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_one();
  }
  thread_.join();
  Drain(/*final=*/true);
  proto::Footer footer;
  footer.set_dropped_events(dropped_events);
  // The program's CPU time, less the writer thread's (joined: cpu_seconds_
  // is final).
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    const double process = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                           1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    const double program = process - cpu_seconds_;
    if (program > 0) footer.set_program_cpu_ns(static_cast<uint64_t>(program * 1e9));
  }
  absl::Status s = out_->Finish(footer);
  if (stats != nullptr) {
    stats->events = out_->events();
    stats->chunks = out_->chunks();
    stats->bytes = out_->bytes_written();
    stats->dropped_events = dropped_events;
    stats->unmatched_frees = out_->unmatched_frees();
    stats->threads = threads_seen_;
    stats->writer_cpu_seconds = cpu_seconds_;
  }
  return s;
}

void RingDrainer::Run() {
  const double cpu0 = ThreadCpuSeconds();
  auto last_flush = std::chrono::steady_clock::now();
  const auto flush_every = std::chrono::milliseconds(options_.flush_ms);
  // The events drained since the drainer last went to sleep, and when that
  // was: the rate the rings fill at.
  uint64_t drained_since = 0;
  auto slept_at = last_flush;
  while (true) {
    // Sleep only when there was nothing to do: under load the drainer
    // drains back to back.
    const size_t drained = Drain(/*final=*/false);
    drained_since += drained;
    {
      std::unique_lock<std::mutex> l(mu_);
      if (stop_) break;
      if (drained == 0) {
        // Wake again when the rings hold about an eighth of a ring at the
        // rate they filled since the last sleep, so that a recording
        // thread need not wake the drainer: its wake is a system call,
        // and on a virtual machine an idle CPU is halted and takes long
        // to resume (the thread then waits for room). While one thread
        // records, three eighths: each of the drainer's wakes costs CPU
        // time (a context switch), and the recording thread wakes it only
        // at three quarters (Recorder::MaybeWakeDrainer). Threads recording
        // at once fill their rings in turn and the numbered events wait to
        // be merged: there the longer sleep cost 1.05x the CPU time.
        const auto now = std::chrono::steady_clock::now();
        auto sleep = std::chrono::microseconds(1000);
        if (drained_since > 0) {
          const double ns_per_event =
              std::chrono::duration<double, std::nano>(now - slept_at).count() /
              static_cast<double>(drained_since);
          const double ns =
              ns_per_event * static_cast<double>(kRingCapacity * (one_thread_ ? 3 : 1) / 8);
          sleep = std::chrono::microseconds(
              std::clamp<int64_t>(static_cast<int64_t>(ns / 1000), 50, 1000));
        }
        drained_since = 0;
        slept_at = now;
        cv_.wait_for(l, sleep, [this] { return wake_ || stop_; });
      }
      wake_ = false;
      if (stop_) break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush >= flush_every) {
      out_->FlushChunk().IgnoreError();  // the status stays in out_
      last_flush = now;
    }
  }
  cpu_seconds_ = ThreadCpuSeconds() - cpu0;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RingDrainer::EmitArenaCreate(TraceWriter& out,
                                                                      uint32_t thread,
                                                                      const RawEvent& e) {
  const uint32_t cls = static_cast<uint32_t>(e.aux);
  // First arena of its class in this recording: define the class.
  if (cls != 0 && !out.class_defined(cls)) DefineClass(cls);
  out.ArenaCreate(thread, e.arena, cls);
}

// Inline in the drain loops, with the rare steps out of line (DefineSite,
// DefineClass, EmitRealloc): a call per event, saving the registers that
// every branch needed, was a seventh of the writer's instructions.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RingDrainer::Emit(TraceWriter& out, bool timestamps,
                                                           uint32_t thread, const RawEvent& e) {
  if (ABSL_PREDICT_FALSE(timestamps)) out.Timestamp(e.time_ns);
  switch (e.kind) {
    case RawKind::kArenaCreateAlloc:
      EmitArenaCreate(out, thread, e);
      [[fallthrough]];
    case RawKind::kAlloc:
      if (ABSL_PREDICT_FALSE(e.site != 0) && !out.stack_defined(e.site)) DefineSite(e.site);
      out.Alloc(thread, e.arena, e.ptr,
                Shape{e.elem_size, e.count, uint64_t{1} << e.align_log2, e.zeroed}, e.site);
      break;
    case RawKind::kFree:
      out.Free(thread, e.arena, e.ptr);
      break;
    case RawKind::kFreeArenaDestroy:
      out.Free(thread, e.arena, e.ptr);
      out.ArenaDestroy(thread, e.arena);
      break;
    case RawKind::kRealloc:
      EmitRealloc(thread, e);
      break;
    case RawKind::kArenaCreate:
      EmitArenaCreate(out, thread, e);
      break;
    case RawKind::kArenaDestroy:
      out.ArenaDestroy(thread, e.arena);
      break;
  }
}

void RingDrainer::EmitRealloc(uint32_t thread, const RawEvent& e) {
  if (e.site != 0 && !out_->stack_defined(e.site)) DefineSite(e.site);
  out_->Realloc(thread, e.arena, e.aux, e.ptr,
                Shape{e.elem_size, e.count, uint64_t{1} << e.align_log2}, e.site);
}

void RingDrainer::DefineClass(uint32_t cls) {
  if (const RecordedClass* c = Recorder::RegisteredClass(cls)) {
    out_->DefineClass(ClassDef{cls, c->name, c->elem_size, c->tagged});
  }
}

void RingDrainer::DefineSite(uint32_t site) {
  if (!StackFrames(site, &site_pcs_)) return;
  site_modules_.clear();
  for (size_t i = 0; i < site_pcs_.size(); ++i) {
    // A return address: the call is the byte before it.
    const uint32_t m = modules_.Find(site_pcs_[i] - 1);
    // Past the first frame (always a real caller), a pc in no file's code
    // is where a frame-pointer walk left the chain (tracer/call_sites.h):
    // the stack ends before it.
    if (m == 0 && i > 0) {
      site_pcs_.resize(i);
      break;
    }
    if (m != 0 && !out_->module_defined(m)) out_->DefineModule(m, modules_.module(m));
    site_modules_.push_back(m);
  }
  // Stacks that differed only past where the walk left the chain are one
  // stack now: defined once, the others aliases of it.
  uint64_t h = site_pcs_.size();
  for (uint64_t pc : site_pcs_) h = (h ^ pc) * 0x9e3779b97f4a7c15u;
  auto [it, inserted] = defined_stacks_.try_emplace(h, site);
  if (!inserted) {
    out_->AliasStack(site, it->second);
    return;
  }
  out_->DefineStack(site, site_pcs_, site_modules_);
}

size_t RingDrainer::Drain(bool final) {
  modules_.AllowRefresh();  // a library loaded since the last drain
  size_t taken = 0;
  std::vector<ThreadRing*> rings;
  bool merge_numbered;
  {
    std::lock_guard<std::mutex> l(reg_mu_);
    rings = rings_;
    threads_seen_ = next_thread_id_;
    merge_numbered = merge_numbered_;
    one_thread_ = !merge_numbered_;
  }
  // staging_ is sorted (what an earlier drain left), and each ring adds a
  // run in its thread's order, which is the order of the numbers.
  run_starts_.assign(1, 0);
  for (ThreadRing* r : rings) {
    run_starts_.push_back(staging_.size());
    taken += DrainRing(r, merge_numbered, final);
  }
  if (!staging_.empty()) EmitNumbered(final);
  FreeExitedRings();
  return taken;
}

size_t RingDrainer::DrainRing(ThreadRing* r, bool merge_numbered, bool final) {
  const uint64_t published = r->published.load(std::memory_order_acquire);
  const uint64_t tail = r->tail.load(std::memory_order_relaxed);
  uint64_t t = tail;
  // Read once: the writer's byte stores may alias any field, so a field
  // read in the loop is read again for every event.
  const uint32_t thread = r->thread_id;
  TraceWriter& out = *out_;
  const bool timestamps = options_.timestamps;
  // Unsequenced events come first in the global order. Two loops: the
  // events with kLookAhead more behind them, and the last few.
  const uint64_t ahead_end = published > kLookAhead ? published - kLookAhead : 0;
  for (; t < ahead_end; ++t) {
    const RawEvent& e = r->events[t & (kRingCapacity - 1)];
    if (e.seq != kUnsequenced) break;
    LookAhead(out, r->events[(t + kLookAhead) & (kRingCapacity - 1)]);
    Emit(out, timestamps, thread, e);
  }
  for (; t < published; ++t) {
    const RawEvent& e = r->events[t & (kRingCapacity - 1)];
    if (e.seq != kUnsequenced) break;
    Emit(out, timestamps, thread, e);
  }
  if (merge_numbered) {
    for (; t < published; ++t) staging_.push_back({thread, r->events[t & (kRingCapacity - 1)]});
  }
  size_t taken = t - tail;
  // The last events of a thread that recorded alone, still in its stage:
  // the recording has stopped, so nothing writes there any more.
  if (final && t == published) {
    const uint32_t staged = r->staged.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < staged; ++i) Emit(out, timestamps, thread, r->stage[i]);
    taken += staged;
  }
  r->tail.store(t, std::memory_order_release);
  return taken;
}

void RingDrainer::EmitNumbered(bool final) {
  // The rings' runs are merged in pairs level by level (log2 of the runs,
  // where sorting the whole cost log2 of the events).
  const auto by_seq = [](const Staged& a, const Staged& b) { return a.event.seq < b.event.seq; };
  run_starts_.push_back(staging_.size());
  const size_t runs = run_starts_.size() - 1;
  const auto at = [&](size_t run) { return staging_.begin() + run_starts_[std::min(run, runs)]; };
  for (size_t width = 1; width < runs; width *= 2) {
    for (size_t k = 0; k + width < runs; k += 2 * width) {
      std::inplace_merge(at(k), at(k + width), at(k + 2 * width), by_seq);
    }
  }
  size_t i = 0;
  TraceWriter& out = *out_;
  const bool timestamps = options_.timestamps;
  // Write only the gap-free run: a missing number is an event another
  // thread is still writing.
  while (i < staging_.size() && (final || staging_[i].event.seq == next_seq_)) {
    if (i + kLookAhead < staging_.size()) LookAhead(out, staging_[i + kLookAhead].event);
    Emit(out, timestamps, staging_[i].thread, staging_[i].event);
    next_seq_ = staging_[i].event.seq + 1;
    ++i;
  }
  staging_.erase(staging_.begin(), staging_.begin() + i);
}

void RingDrainer::FreeExitedRings() {
  // Rings of exited threads, now empty, are ours to free.
  std::lock_guard<std::mutex> l(reg_mu_);
  for (auto it = rings_.begin(); it != rings_.end();) {
    ThreadRing* r = *it;
    if (r->closed &&
        r->tail.load(std::memory_order_relaxed) == r->published.load(std::memory_order_acquire)) {
      delete r;
      it = rings_.erase(it);
    } else {
      ++it;
    }
  }
}

void LockedRings::Add(ThreadRing* ring) {
  ring->head.store(0, std::memory_order_relaxed);
  ring->cached_tail = 0;
  ring->staged.store(0);
  ring->published.store(0);
  ring->tail.store(0);
  ring->closed = false;
  ring->thread_id = d_.next_thread_id_++;
  d_.rings_.push_back(ring);
}

bool LockedRings::Close(ThreadRing* ring) {
  if (std::find(d_.rings_.begin(), d_.rings_.end(), ring) == d_.rings_.end()) return false;
  ring->closed = true;
  return true;
}

void LockedRings::WaitUntilNoEventInProgress() const {
  for (const ThreadRing* r : d_.rings_) {
    while (r->in_event.load(std::memory_order_acquire) != 0) sched_yield();
  }
}

}  // namespace alloctrace::recorder_internal
