#include "alloctrace/tracer/recorder.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/tracer/ring_drainer.h"

// Defined by the capture library (tracer/capture/capture_session.cc) and
// exported by it alone: non-null when it is preloaded into this process.
extern "C" __attribute__((weak)) const int alloctrace_capture_preloaded;

namespace alloctrace {
namespace recorder_internal {

thread_local bool tls_excluded = false;
// Set once this thread's ring is detached at thread exit: later events are
// dropped (and counted).
thread_local bool tls_dead = false;

// Detaches the exiting thread's ring. A pthread key destructor, not a C++
// thread_local destructor: glibc runs every thread_local destructor of the
// thread first, so containers in thread_local storage (a lazily made
// per-thread cache, say) still record their frees and arena destructions,
// which a thread_local owner destroyed before them would drop. Never runs
// for the main thread on exit(): its ring stays attached for atexit
// handlers and static destructors, and Stop drains it like any live ring.
void DetachAtThreadExit(void* ring) {
  Recorder::Global().FlushOwnStage(static_cast<ThreadRing*>(ring));
  tls_dead = true;
  tls_ring = nullptr;
  Recorder::Global().DetachThread(static_cast<ThreadRing*>(ring));
}

pthread_key_t RingKey() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    if (pthread_key_create(&k, &DetachAtThreadExit) != 0) {
      std::fprintf(stderr, "alloctrace: pthread_key_create failed\n");
      std::abort();
    }
    return k;
  }();
  return key;
}

bool Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0) == 0; }

}  // namespace recorder_internal

using recorder_internal::LockedRings;
using recorder_internal::Membarrier;
using recorder_internal::RingDrainer;
using recorder_internal::ThreadRing;

namespace {
std::mutex& StartMutex() {
  static std::mutex* const mu = new std::mutex;
  return *mu;
}
}  // namespace

uint64_t Recorder::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status Recorder::Start(const RecordingOptions& options) {
  std::lock_guard<std::mutex> l(StartMutex());
  ever_started_.store(true);
  if (active_.load()) return absl::FailedPreconditionError("a recording is already running");
  proto::Header header;
  header.set_workload(options.workload);
  header.set_program(options.program);
  header.set_clock(options.timestamps ? proto::CLOCK_STEADY_NS : proto::CLOCK_NONE);
  for (const auto& [k, v] : options.labels) (*header.mutable_labels())[k] = v;
  auto out = TraceWriter::Create(options.path, std::move(header), options.chunk_events);
  if (!out.ok()) return out.status();

  static const bool membarrier_ok = Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  have_membarrier_ = membarrier_ok;
  timestamps_ = options.timestamps;
  dropped_.store(0);
  next_seq_.store(0);
  // Without membarrier the single-thread shortcut is not safe: number all.
  multi_thread_.store(!have_membarrier_);
  // Without membarrier every event is numbered: merge them from the start.
  drainer_ = new RingDrainer(*std::move(out), options,
                             /*merge_numbered_from_start=*/!have_membarrier_);
  drainer_->StartThread();
  const uint64_t generation = generation_.fetch_add(1) + 1;
  fast_generation_.store(timestamps_ ? kNoFastGeneration : generation);
  active_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status Recorder::Stop(RecordingStats* stats) {
  std::lock_guard<std::mutex> l(StartMutex());
  if (!active_.load()) return absl::OkStatus();
  active_.store(false);
  fast_generation_.store(kNoFastGeneration);
  generation_.fetch_add(1);
  // Every thread now either is inside an event (in_event == 1 is visible
  // after the fence) or will see the new generation and record nothing.
  if (have_membarrier_) Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  LockedRings(*drainer_).WaitUntilNoEventInProgress();
  // No event is recorded from here on, so dropped_ is final.
  absl::Status s = drainer_->Finish(dropped_.load(), stats);
  delete drainer_;  // a live thread keeps its ring and re-attaches it if it records again
  drainer_ = nullptr;
  return s;
}

void Recorder::AutoStart() {
  if (ever_started_.load()) return;
  // Under the capture library every allocation of the program, its
  // containers' included, is recorded at malloc level into the file
  // ALLOCTRACE_OUT names: a recording of the containers there too would
  // overwrite it. The containers are then served by operator new, unrecorded.
  if (&alloctrace_capture_preloaded != nullptr) {
    ever_started_.store(true);
    return;
  }
  RecordingOptions options;
  const char* out = std::getenv("ALLOCTRACE_OUT");
  options.path =
      (out != nullptr && *out != '\0') ? out : absl::StrCat("alloctrace.", getpid(), ".trace");
  std::string comm;
  std::ifstream("/proc/self/comm") >> comm;
  options.program = comm;
  const char* workload = std::getenv("ALLOCTRACE_WORKLOAD");
  options.workload = workload != nullptr ? workload : comm;
  absl::Status s = Start(options);
  if (s.ok()) {
    std::atexit([] {
      absl::Status st = Recorder::Global().Stop();
      if (!st.ok()) std::fprintf(stderr, "alloctrace: %s\n", std::string(st.message()).c_str());
    });
  } else if (!absl::IsFailedPrecondition(s)) {
    std::fprintf(stderr, "alloctrace: not recording: %s\n", std::string(s.message()).c_str());
  }
}

RawEvent* Recorder::BeginEventSlow() {
  using recorder_internal::kRingCapacity;
  using recorder_internal::kStageEvents;
  using recorder_internal::tls_ring;
  while (true) {
    if (!active_.load(std::memory_order_acquire)) {
      if (ever_started_.load(std::memory_order_relaxed)) return nullptr;
      AutoStart();
      continue;
    }
    if (recorder_internal::tls_dead) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    ThreadRing* r = tls_ring;
    if (r == nullptr || r->generation != generation_.load(std::memory_order_acquire)) {
      r = AttachThread();
      if (r == nullptr) continue;  // the recording stopped meanwhile
    }
    // The switch to multi-thread mode copies this thread's stage: wait.
    while (r->staged.load(std::memory_order_acquire) != 0 &&
           multi_thread_.load(std::memory_order_acquire)) {
      sched_yield();
    }
    // Single-thread mode needs room for a whole stage (BeginEvent).
    const uint64_t needed = multi_thread_.load(std::memory_order_relaxed) ? 1 : kStageEvents;
    if (r->head.load(std::memory_order_relaxed) + needed - r->cached_tail > kRingCapacity) {
      r->cached_tail = r->tail.load(std::memory_order_acquire);
      if (r->head.load(std::memory_order_relaxed) + needed - r->cached_tail > kRingCapacity) {
        WaitForRoom(r, needed);
      }
    }
    r->in_event.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const bool single = !multi_thread_.load(std::memory_order_relaxed);
    if (r->generation != generation_.load(std::memory_order_relaxed) ||
        r->head.load(std::memory_order_relaxed) + (single ? kStageEvents : 1) - r->cached_tail >
            kRingCapacity ||
        (!single && r->staged.load(std::memory_order_acquire) != 0)) {
      r->in_event.store(0, std::memory_order_release);
      continue;
    }
    RawEvent* e;
    if (single) {
      e = &r->stage[r->staged.load(std::memory_order_relaxed)];
      r->event_staged = true;
    } else {
      e = &r->events[r->head.load(std::memory_order_relaxed) & (kRingCapacity - 1)];
      r->event_staged = false;
      e->seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
    }
    if (timestamps_) e->time_ns = NowNs();
    return e;
  }
}

void Recorder::WaitForRoom(ThreadRing* r, uint64_t events) {
  using recorder_internal::kRingCapacity;
  WakeDrainer();
  for (int spins = 0;
       r->head.load(std::memory_order_relaxed) + events - r->cached_tail > kRingCapacity; ++spins) {
    if (r->generation != generation_.load(std::memory_order_acquire)) return;
    if (spins % 64 == 63) WakeDrainer();  // in case the drainer was asleep
    sched_yield();
    r->cached_tail = r->tail.load(std::memory_order_acquire);
  }
}

void Recorder::FlushOwnStage(ThreadRing* r) {
  r->in_event.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // Under a stopped recording the stage is the final drain's; in
  // multi-thread mode the switch copies it.
  const bool mine = r->generation == generation_.load(std::memory_order_relaxed) &&
                    !multi_thread_.load(std::memory_order_relaxed);
  const bool look = mine && FlushStage(r);
  r->in_event.store(0, std::memory_order_release);
  if (look) MaybeWakeDrainer(r);
  while (!mine && r->generation == generation_.load(std::memory_order_acquire) &&
         r->staged.load(std::memory_order_acquire) != 0) {
    sched_yield();
  }
}

bool Recorder::FlushStage(ThreadRing* r) {
  using recorder_internal::kRingCapacity;
  using recorder_internal::kWakeEvery;
  const uint32_t n = r->staged.load(std::memory_order_relaxed);
  if (n == 0) return false;
  const uint64_t h = r->head.load(std::memory_order_relaxed);
  const uint64_t at = h & (kRingCapacity - 1);
  const uint64_t first = std::min<uint64_t>(n, kRingCapacity - at);
  std::memcpy(&r->events[at], r->stage, first * sizeof(RawEvent));
  std::memcpy(&r->events[0], r->stage + first, (n - first) * sizeof(RawEvent));
  r->head.store(h + n, std::memory_order_relaxed);
  r->published.store(h + n, std::memory_order_release);
  r->staged.store(0, std::memory_order_release);
  return h / kWakeEvery != (h + n) / kWakeEvery;
}

void Recorder::MaybeWakeDrainer(ThreadRing* r) {
  using recorder_internal::kRingCapacity;
  r->cached_tail = r->tail.load(std::memory_order_acquire);
  // The drainer sleeps for 3/8 of a ring while one thread records, 1/8
  // while several do (RingDrainer::Run).
  const uint64_t full =
      multi_thread_.load(std::memory_order_relaxed) ? kRingCapacity / 2 : kRingCapacity * 3 / 4;
  if (r->head.load(std::memory_order_relaxed) - r->cached_tail >= full) {
    WakeDrainer();
  }
}

void Recorder::WakeDrainer() {
  std::lock_guard<std::mutex> l(StartMutex());
  if (drainer_ != nullptr) drainer_->Wake();
}

ThreadRing* Recorder::AttachThread() {
  std::lock_guard<std::mutex> sl(StartMutex());
  if (!active_.load() || drainer_ == nullptr) return nullptr;
  ThreadRing* r = recorder_internal::tls_ring;
  if (r == nullptr) {
    r = new ThreadRing;
    recorder_internal::tls_ring = r;
    // The value is what DetachAtThreadExit gets when the thread exits.
    pthread_setspecific(recorder_internal::RingKey(), r);
  }
  LockedRings rings(*drainer_);
  if (!rings.empty() && !multi_thread_.load()) EnterMultiThreadMode(rings);
  rings.Add(r);
  r->generation = generation_.load();
  return r;
}

void Recorder::EnterMultiThreadMode(LockedRings& rings) {
  multi_thread_.store(true);
  // Every recording thread is now either inside an event that may have read
  // multi_thread_ == false (its in_event == 1 is visible to us), or will see
  // true on its next event.
  Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  rings.WaitUntilNoEventInProgress();
  // The first thread's staged events precede every numbered one: copy them
  // into its ring now (it waits for that before its next event), so an idle
  // thread cannot hold the numbered events back.
  for (ThreadRing* r : rings.rings()) FlushStage(r);
  // Under the same lock as the drainer reads it: it merges numbered events
  // only once every unnumbered one is published.
  rings.StartMergingNumbered();
}

void Recorder::DetachThread(ThreadRing* ring) {
  std::lock_guard<std::mutex> sl(StartMutex());
  // A registered ring is the drainer's to free once drained.
  if (drainer_ != nullptr && LockedRings(*drainer_).Close(ring)) return;
  delete ring;
}

namespace {

// The process's classes, never destroyed (static destructors may still
// create arenas). A deque, so a RecordedClass never moves.
struct ClassRegistry {
  std::mutex mu;
  std::deque<RecordedClass> classes;  // id - 1 -> class
};

ClassRegistry& Classes() {
  static ClassRegistry* const registry = new ClassRegistry;
  return *registry;
}

}  // namespace

uint32_t Recorder::RegisterClass(std::string_view name, uint64_t elem_size, bool tagged) {
  ClassRegistry& r = Classes();
  std::lock_guard<std::mutex> l(r.mu);
  for (size_t i = 0; i < r.classes.size(); ++i) {
    const RecordedClass& c = r.classes[i];
    if (c.name == name && c.elem_size == elem_size && c.tagged == tagged) {
      return static_cast<uint32_t>(i + 1);
    }
  }
  r.classes.push_back(RecordedClass{std::string(name), elem_size, tagged});
  return static_cast<uint32_t>(r.classes.size());
}

const RecordedClass* Recorder::RegisteredClass(uint32_t id) {
  ClassRegistry& r = Classes();
  std::lock_guard<std::mutex> l(r.mu);
  return id == 0 || id > r.classes.size() ? nullptr : &r.classes[id - 1];
}

uint32_t Recorder::CreateArenaSlow(uint32_t class_id) {
  RawEvent* e = BeginEvent();
  if (e == nullptr) return next_arena_.fetch_add(1, std::memory_order_relaxed);
  // Raw ids need only be unique: the writer numbers arenas in the trace in
  // the order their creations reach it.
  ThreadRing* r = recorder_internal::tls_ring;
  if (r->arena_next == r->arena_end) {
    r->arena_next =
        next_arena_.fetch_add(recorder_internal::kArenaIdBlock, std::memory_order_relaxed);
    r->arena_end = r->arena_next + recorder_internal::kArenaIdBlock;
  }
  const uint32_t id = r->arena_next++;
  e->kind = RawKind::kArenaCreate;
  e->arena = id;
  e->aux = class_id;
  EndEvent();
  return id;
}

void Recorder::DestroyArenaSlow(uint32_t arena) {
  RawEvent* e = BeginEvent();
  if (e == nullptr) return;
  e->kind = RawKind::kArenaDestroy;
  e->arena = arena;
  EndEvent();
}

void Recorder::RecordAllocationSlow(const void* p, uint32_t arena, uint32_t elem_size,
                                    uint64_t count, uint8_t align_log2, bool zeroed,
                                    uint32_t site) {
  RawEvent* e = BeginEvent();
  if (e == nullptr) return;
  FillAllocation(e, p, arena, elem_size, count, align_log2, zeroed, site);
  EndEvent();
}

void Recorder::RecordFreeSlow(const void* p, uint32_t arena) {
  RawEvent* e = BeginEvent();
  if (e == nullptr) return;
  FillFree(e, p, arena);
  EndEvent();
}

void Recorder::EndStage(ThreadRing* r) {
  const bool look = FlushStage(r);
  r->in_event.store(0, std::memory_order_release);
  if (look) MaybeWakeDrainer(r);
}

void Recorder::AbandonAfterFork() {
  // The drainer thread does not exist in the child: leak it and its rings
  // (other threads' rings may be mid-event; nothing reads them again). The
  // forking thread keeps its own ring: the generation change below makes it
  // re-attach, which resets the ring, on its next event.
  drainer_ = nullptr;
  active_.store(false);
  ever_started_.store(false);
  fast_generation_.store(kNoFastGeneration);
  generation_.fetch_add(1);
  new (&StartMutex()) std::mutex();
}

}  // namespace alloctrace
