#include "tracer/recorder.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/trace_writer.h"

namespace alloctrace {
namespace recorder_internal {

thread_local ThreadRing* tls_ring = nullptr;
thread_local bool tls_excluded = false;
// Set once this thread's ring owner is destroyed: later events are dropped.
thread_local bool tls_dead = false;

// Destroys the thread's ring when the thread exits.
struct RingOwner {
  ThreadRing* ring = nullptr;
  ~RingOwner() {
    // exit() destroys the main thread's thread-locals before it runs atexit
    // handlers and static destructors: keep the main thread's ring so their
    // events are still recorded (it is drained by Stop, like any live ring).
    if (getpid() == static_cast<pid_t>(syscall(SYS_gettid))) return;
    tls_dead = true;
    tls_ring = nullptr;
    if (ring != nullptr) Recorder::Global().DetachThread(ring);
  }
};
thread_local RingOwner tls_owner;

bool Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0) == 0; }

namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

// Drains the rings into a TraceWriter on its own thread.
class Writer {
 public:
  Writer(Recorder* recorder, std::unique_ptr<TraceWriter> out, const RecordingOptions& options)
      : recorder_(recorder), out_(std::move(out)), options_(options) {}

  void StartThread() {
    thread_ = std::thread([this] {
      tls_excluded = true;  // the writer's own allocations are never recorded
      Run();
    });
  }

  void Wake() {
    std::lock_guard<std::mutex> l(mu_);
    wake_ = true;
    cv_.notify_one();
  }

  // Stops the thread, drains everything, writes the footer.
  absl::Status Finish(RecordingStats* stats) {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
      cv_.notify_one();
    }
    thread_.join();
    Drain(/*final=*/true);
    proto::Footer footer;
    footer.set_dropped_events(recorder_->dropped_.load());
    absl::Status s = out_->Finish(footer);
    if (stats != nullptr) {
      stats->events = out_->events();
      stats->chunks = out_->chunks();
      stats->bytes = out_->bytes_written();
      stats->dropped_events = recorder_->dropped_.load();
      stats->unmatched_frees = out_->unmatched_frees();
      stats->threads = threads_seen_;
      stats->writer_cpu_seconds = cpu_seconds_;
    }
    return s;
  }

  // Registry: guarded by reg_mu_.
  std::mutex reg_mu_;
  std::vector<ThreadRing*> rings_;
  uint32_t next_thread_id_ = 0;

 private:
  void Run() {
    const double cpu0 = ThreadCpuSeconds();
    auto last_flush = std::chrono::steady_clock::now();
    const auto flush_every = std::chrono::milliseconds(options_.flush_ms);
    while (true) {
      // Sleep only when there was nothing to do: under load the writer
      // drains back to back.
      const size_t drained = Drain(/*final=*/false);
      {
        std::unique_lock<std::mutex> l(mu_);
        if (stop_) break;
        if (drained == 0) {
          cv_.wait_for(l, std::chrono::milliseconds(1), [this] { return wake_ || stop_; });
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

  void Emit(uint32_t thread, const RawEvent& e) {
    if (options_.timestamps) out_->Timestamp(e.time_ns);
    switch (e.kind) {
      case RawKind::kAlloc:
        out_->Alloc(thread, e.arena, e.ptr,
                    Shape{e.elem_size, e.count, uint64_t{1} << e.align_log2, e.zeroed});
        break;
      case RawKind::kFree:
        out_->Free(thread, e.arena, e.ptr);
        break;
      case RawKind::kRealloc:
        out_->Realloc(thread, e.arena, e.aux, e.ptr,
                      Shape{e.elem_size, e.count, uint64_t{1} << e.align_log2});
        break;
      case RawKind::kArenaCreate:
        out_->ArenaCreate(thread, e.arena);
        break;
      case RawKind::kArenaDestroy:
        out_->ArenaDestroy(thread, e.arena);
        break;
    }
  }

  // Returns how many events it took from the rings.
  size_t Drain(bool final) {
    size_t taken = 0;
    std::vector<ThreadRing*> rings;
    bool switched;
    {
      std::lock_guard<std::mutex> l(reg_mu_);
      rings = rings_;
      threads_seen_ = next_thread_id_;
      // Read under the lock that EnterMultiThreadMode holds while it sets it.
      switched = recorder_->switch_done_.load(std::memory_order_acquire);
    }
    for (ThreadRing* r : rings) {
      const uint64_t published = r->published.load(std::memory_order_acquire);
      uint64_t t = r->tail.load(std::memory_order_relaxed);
      // Unsequenced events come first in the global order.
      while (t < published) {
        const RawEvent& e = r->events[t & (kRingCapacity - 1)];
        if (e.seq != kUnsequenced) break;
        Emit(r->thread_id, e);
        ++t;
      }
      if (switched) {
        for (; t < published; ++t) {
          staging_.push_back({r->thread_id, r->events[t & (kRingCapacity - 1)]});
        }
      }
      taken += t - r->tail.load(std::memory_order_relaxed);
      r->tail.store(t, std::memory_order_release);
    }
    if (!staging_.empty()) {
      std::sort(staging_.begin(), staging_.end(),
                [](const Staged& a, const Staged& b) { return a.event.seq < b.event.seq; });
      size_t i = 0;
      // Write only the gap-free run: a missing number is an event another
      // thread is still writing.
      while (i < staging_.size() && (final || staging_[i].event.seq == next_seq_)) {
        Emit(staging_[i].thread, staging_[i].event);
        next_seq_ = staging_[i].event.seq + 1;
        ++i;
      }
      staging_.erase(staging_.begin(), staging_.begin() + i);
    }
    // Rings of exited threads, now empty, are ours to free.
    std::lock_guard<std::mutex> l(reg_mu_);
    for (auto it = rings_.begin(); it != rings_.end();) {
      ThreadRing* r = *it;
      if (r->closed && r->tail.load(std::memory_order_relaxed) ==
                           r->published.load(std::memory_order_acquire)) {
        delete r;
        it = rings_.erase(it);
      } else {
        ++it;
      }
    }
    return taken;
  }

  struct Staged {
    uint32_t thread;
    RawEvent event;
  };

  Recorder* const recorder_;
  std::unique_ptr<TraceWriter> out_;
  const RecordingOptions options_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;
  bool stop_ = false;
  std::vector<Staged> staging_;
  uint64_t next_seq_ = 0;
  uint64_t threads_seen_ = 0;
  double cpu_seconds_ = 0;
};

}  // namespace recorder_internal

using recorder_internal::ThreadRing;
using recorder_internal::Membarrier;

namespace {
std::mutex& StartMutex() {
  static std::mutex* const mu = new std::mutex;
  return *mu;
}
}  // namespace

Recorder& Recorder::Global() {
  static Recorder* const recorder = new Recorder();  // never destroyed
  return *recorder;
}

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
  switch_done_.store(!have_membarrier_);
  writer_ = std::make_unique<recorder_internal::Writer>(this, *std::move(out), options);
  writer_->StartThread();
  generation_.fetch_add(1);
  active_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status Recorder::Stop(RecordingStats* stats) {
  std::lock_guard<std::mutex> l(StartMutex());
  if (!active_.load()) return absl::OkStatus();
  active_.store(false);
  generation_.fetch_add(1);
  // Every thread now either is inside an event (in_event == 1 is visible
  // after the fence) or will see the new generation and record nothing.
  if (have_membarrier_) Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  {
    std::lock_guard<std::mutex> rl(writer_->reg_mu_);
    for (ThreadRing* r : writer_->rings_) {
      while (r->in_event.load(std::memory_order_acquire) != 0) sched_yield();
    }
  }
  absl::Status s = writer_->Finish(stats);
  {
    std::lock_guard<std::mutex> rl(writer_->reg_mu_);
    for (ThreadRing* r : writer_->rings_) {
      // A live thread keeps its ring and re-attaches it if it records again.
      if (r->closed) delete r;
    }
    writer_->rings_.clear();
  }
  writer_.reset();
  return s;
}

void Recorder::AutoStart() {
  if (ever_started_.load()) return;
  RecordingOptions options;
  const char* out = std::getenv("ALLOCTRACE_OUT");
  options.path = (out != nullptr && *out != '\0') ? out : absl::StrCat("alloctrace.", getpid(), ".trace");
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
    if (r->head - r->cached_tail >= kRingCapacity) {
      r->cached_tail = r->tail.load(std::memory_order_acquire);
      if (r->head - r->cached_tail >= kRingCapacity) WaitForRoom(r);
    }
    r->in_event.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (r->generation != generation_.load(std::memory_order_relaxed) ||
        r->head - r->cached_tail >= kRingCapacity) {
      r->in_event.store(0, std::memory_order_release);
      continue;
    }
    RawEvent* e = &r->events[r->head & (kRingCapacity - 1)];
    e->seq = !multi_thread_.load(std::memory_order_relaxed)
                 ? kUnsequenced
                 : next_seq_.fetch_add(1, std::memory_order_relaxed);
    if (timestamps_) e->time_ns = NowNs();
    return e;
  }
}

void Recorder::WaitForRoom(ThreadRing* r) {
  using recorder_internal::kRingCapacity;
  WakeWriter();
  for (int spins = 0; r->head - r->cached_tail >= kRingCapacity; ++spins) {
    if (r->generation != generation_.load(std::memory_order_acquire)) return;
    if (spins % 64 == 63) WakeWriter();  // in case the writer was asleep
    sched_yield();
    r->cached_tail = r->tail.load(std::memory_order_acquire);
  }
}

void Recorder::WakeWriter() {
  std::lock_guard<std::mutex> l(StartMutex());
  if (writer_ != nullptr) writer_->Wake();
}

ThreadRing* Recorder::AttachThread() {
  std::lock_guard<std::mutex> sl(StartMutex());
  if (!active_.load() || writer_ == nullptr) return nullptr;
  ThreadRing* r = recorder_internal::tls_ring;
  if (r == nullptr) {
    r = new ThreadRing;
    recorder_internal::tls_owner.ring = r;
    recorder_internal::tls_ring = r;
  }
  std::lock_guard<std::mutex> l(writer_->reg_mu_);
  r->head = 0;
  r->cached_tail = 0;
  r->published.store(0);
  r->tail.store(0);
  r->closed = false;
  r->thread_id = writer_->next_thread_id_++;
  if (!writer_->rings_.empty() && !multi_thread_.load()) EnterMultiThreadMode();
  writer_->rings_.push_back(r);
  r->generation = generation_.load();
  return r;
}

void Recorder::EnterMultiThreadMode() {
  multi_thread_.store(true);
  // Every recording thread is now either inside an event that may have read
  // multi_thread_ == false (its in_event == 1 is visible to us), or will see
  // true on its next event.
  Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  for (ThreadRing* r : writer_->rings_) {
    while (r->in_event.load(std::memory_order_acquire) != 0) sched_yield();
  }
  switch_done_.store(true, std::memory_order_release);
}

void Recorder::DetachThread(ThreadRing* ring) {
  std::lock_guard<std::mutex> sl(StartMutex());
  if (writer_ != nullptr) {
    std::lock_guard<std::mutex> l(writer_->reg_mu_);
    auto& rings = writer_->rings_;
    if (std::find(rings.begin(), rings.end(), ring) != rings.end()) {
      ring->closed = true;  // the writer frees it once drained
      return;
    }
  }
  delete ring;
}

uint32_t Recorder::CreateArena() {
  const uint32_t id = next_arena_.fetch_add(1, std::memory_order_relaxed);
  RawEvent* e = BeginEvent();
  if (e != nullptr) {
    e->kind = RawKind::kArenaCreate;
    e->arena = id;
    EndEvent();
  }
  return id;
}

void Recorder::DestroyArena(uint32_t arena) {
  RawEvent* e = BeginEvent();
  if (e == nullptr) return;
  e->kind = RawKind::kArenaDestroy;
  e->arena = arena;
  EndEvent();
}

void Recorder::AbandonAfterFork() {
  // The writer thread does not exist in the child: leak it and its rings
  // (other threads' rings may be mid-event; nothing reads them again). The
  // forking thread keeps its own ring: the generation change below makes it
  // re-attach, which resets the ring, on its next event.
  (void)writer_.release();
  active_.store(false);
  ever_started_.store(false);
  generation_.fetch_add(1);
  new (&StartMutex()) std::mutex();
}

}  // namespace alloctrace
