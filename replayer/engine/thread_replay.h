// ReplayPerThreadWith<A>: the per-thread replay of a multi-threaded trace.
// Each stream of a ThreadSchedule (thread_schedule.h) runs on an OS thread
// of its own, all released together by a barrier, through one allocator of
// type A shared by all of them, as the traced program's threads shared
// theirs. Meant to run in a child process of its own, like ReplayWith
// (replay_loop.h); its setup, passes and teardown are replay_setup.h's.
// Over 500 lines, one job: the threads, their waits and their clocks,
// which a per-thread pass needs together.
//
// Timed, per pass (what each figure includes):
//  - PassFigures::wall_seconds: the wall time of the concurrent section,
//    from the moment every thread has passed the barrier to the end of the
//    last thread's stream. It includes everything the program would feel:
//    the allocator's calls, contention in it, threads waiting for one
//    another at sync points, and, whenever threads outnumber the cores free
//    to run them, the time they wait for a core (other processes' work, or
//    the other replay threads'). That part is the scheduler's, not the
//    allocator's: wall time ranks well only when the threads fit in idle
//    cores (--clock=auto ranks a per-thread replay by it only when its
//    threads fit in the cores the process may use: ResolveClock, in
//    replayer/measure/runs.h).
//  - PassFigures::thread_cpu_seconds, one per thread, summed in
//    cpu_seconds: the thread's CPU time (user + system, its page faults
//    included) over its stream, minus the CPU time of its waits and of the
//    wakes it issued. What is left is the allocator's calls and the loop
//    around them; it does not grow while a thread is preempted or asleep,
//    but keeps what sleeping costs after the fact (the CPU clock's readings
//    around a sleep or wake, caches and predictors cold after a context
//    switch): a few microseconds per sleep, which the deferred wakes keep
//    rare.
//    A lock the allocator sleeps on is not in it (it is in the wall time).
//  - PassFigures::wait_seconds: the wall time of the waits at sync points
//    and of the wakes, summed over the threads, measured apart and charged
//    to no allocator. A wait that sleeps includes the time the awaited
//    thread took to run, and on a busy machine the time to get a core back.
// Page faults, context switches and CPU migrations are the threads' own
// (read in each thread, outside the timed stretch): involuntary switches
// count preemptions, voluntary ones mostly waits that slept. RSS: the peak
// (the kernel's mark) and one reading at the end of the cold pass; no
// course.
//
// Synchronization: one counter per thread (its ops done so far, advanced
// only after ops another thread waits for, with release semantics) read by
// the waiters with acquire loads; no lock, no barrier per op. A wait whose
// op is done goes on without a call. Otherwise it spins up to kSpinNs
// (only when the threads fit in the cores the process may use: with more
// threads than cores the awaited thread may need the waiter's core), then
// sleeps on the counter (a futex) until the thread advances it. A thread
// wakes sleepers only when one is registered, so without waiters
// publishing is one atomic add and a load, no system call; with more
// threads than cores it wakes them once it has published kWakeBatch more
// ops (or after kWakeDelayNs), and before it waits or ends, rather than on
// every op (Publisher). A spin's CPU time is its wall time; a sleep's and
// a wake's are read from the thread's CPU clock. A thread that
// fails sets a stop bit on every counter and wakes every sleeper: the
// others stop at once, or at their next wait (they never wait for an op
// that will not come). The start barrier is a counter waited on the same
// way.
//
// Thread-safety: a run starts one thread per stream and joins them all before
// it returns; the allocator is shared by those threads, the pointer table too
// (each slot used by one thread at a time, as the schedule orders).
// PassShared is shared by a pass's threads through the functions below;
// everything else in a ThreadFigures belongs to its one thread.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_THREAD_REPLAY_H_
#define ALLOCTRACE_REPLAYER_ENGINE_THREAD_REPLAY_H_

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/thread_schedule.h"

namespace alloctrace {
namespace thread_replay_internal {

using Clock = std::chrono::steady_clock;

// The words threads wait on (a thread's progress, the start barrier) hold
// a count in their low 31 bits; kStopBit, set on every word by StopAll, says
// that a thread failed and the pass is ending. Counts stay below it (a
// stream of 2^31 ops or more is refused).
inline constexpr uint32_t kStopBit = uint32_t{1} << 31;
inline constexpr uint32_t kCountMask = kStopBit - 1;

// How long a wait spins (checking the word, with a pause between reads)
// before it sleeps on a futex, when the replay threads fit in the cores the
// process may run on. With more threads than cores, a waiter does not spin:
// the thread it waits for may need its core.
inline constexpr int64_t kSpinNs = 2000;
// With more threads than cores, how many ops, or how long, a thread may
// publish before it wakes threads asleep on its counter (Publisher).
inline constexpr uint32_t kWakeBatch = 64;
inline constexpr int64_t kWakeDelayNs = 50000;

// One per thread, on a cache line of its own: its thread advances `done`
// (ops done so far, published only after ops another thread waits for);
// `waiters` counts the threads that are asleep on `done`, or about to be.
struct alignas(64) Progress {
  std::atomic<uint32_t> done{0};
  std::atomic<uint32_t> waiters{0};
};

// What a pass shares between its threads.
struct PassShared {
  PassShared(size_t threads, bool fit)
      : progress(threads), spin_ns(fit ? kSpinNs : 0), wake_batch(fit ? 0 : kWakeBatch) {}
  std::vector<Progress> progress;
  std::atomic<uint32_t> arrived{0};  // at the start barrier (a futex word, as done)
  std::atomic<uint32_t> arrived_waiters{0};
  std::atomic<bool> abort{false};    // a thread failed: the others stop
  std::atomic<int64_t> start_ns{0};  // when the last thread passed the barrier
  const int64_t spin_ns;             // kSpinNs or 0 (more threads than cores)
  const uint32_t wake_batch;         // 0 or kWakeBatch (more threads than cores)
};

struct ThreadFigures {
  double cpu = 0;        // over the stream, waits and wakes included
  double wait_cpu = 0;   // CPU time spent in waits and in waking waiters
  double wait_wall = 0;  // wall time spent in waits and in waking waiters
  int64_t end_ns = 0;    // steady clock at the end of the stream
  UsageCounts usage{};   // over the stream
  int64_t migrations = 0;
  RunError error;
};

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is 32 bits");

// Sleeps while *word == expected (the kernel compares atomically with the
// sleep, so a change made before it is never slept through). May return
// early (a wake, a signal, a changed value): the caller re-checks.
inline void FutexWait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

// Wakes every thread asleep on `word`.
inline void FutexWakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

// Waits until ready(count) holds for `word`'s count, or its kStopBit is set:
// spins up to spin_ns, then registers in `waiters` and sleeps on the word,
// re-reading it after registering and after every wake-up. Returns false if
// stopped. No wake-up is lost: the waker changes the word, then reads
// `waiters`; the waiter registers, then reads the word (both seq_cst), so
// one of them sees the other; and FutexWait does not sleep on a value that
// has changed.
// Adds the wait's wall time to *wall and its CPU time to *cpu: a spin is on
// the CPU, so its CPU time is its wall time (at most spin_ns plus a
// microsecond: a spin preempted midway is not charged the preemption), read
// without a system call; a sleep's is read from the thread's CPU clock,
// whose two readings cost a few microseconds more (only waits that sleep
// pay them).
template <typename Ready>
bool WaitOn(std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiters, int64_t spin_ns,
            Ready ready, double* cpu, double* wall) {
  const int64_t t0 = NowNs();
  uint32_t v = word.load(std::memory_order_acquire);
  int64_t now = t0;
  if (spin_ns > 0) {
    do {
      for (int k = 0; k < 16; ++k) {
        if (ready(v & kCountMask) || (v & kStopBit) != 0) {
          now = NowNs();
          *wall += 1e-9 * static_cast<double>(now - t0);
          *cpu += 1e-9 * static_cast<double>(std::min(now - t0, spin_ns + 1000));
          return ready(v & kCountMask);
        }
        CpuRelax();
        v = word.load(std::memory_order_acquire);
      }
      now = NowNs();
    } while (now - t0 < spin_ns);
  }
  const double c0 = replay_internal::ThreadCpuSeconds();
  waiters.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    v = word.load(std::memory_order_seq_cst);
    if (ready(v & kCountMask) || (v & kStopBit) != 0) break;
    FutexWait(word, v);
  }
  waiters.fetch_sub(1, std::memory_order_relaxed);
  *cpu += replay_internal::ThreadCpuSeconds() - c0 +
          1e-9 * static_cast<double>(std::min(now - t0, spin_ns + 1000));
  *wall += 1e-9 * static_cast<double>(NowNs() - t0);
  return ready(v & kCountMask);
}

// A thread's side of its progress counter. Publish(count): `count` ops
// done (release: the ops before are visible to whoever reads it). The
// common path is one atomic add (it keeps a kStopBit) and one load, no
// system call; the add is a full barrier, which the check of `waiters`
// needs. With sleepers, it wakes them at once when the threads fit in the
// cores (wake_batch 0). With more threads than cores it defers the wake
// until wake_batch more ops are published or kWakeDelayNs have passed, and
// always wakes before its thread waits or ends (Flush), so no sleeper is
// left behind: woken on every op, a consumer that caught up with its
// producer would sleep and wake once per message, each a system call and a
// context switch on both sides that the cores' sharing makes slow. A wake's
// time (the system call, only when a waiter slept) is the replay's, not the
// allocator's: added to the thread's waits, wall and CPU (what the two
// readings of the CPU clock around it cost outside them stays in the
// thread's CPU time).
class Publisher {
 public:
  // `published`: the count already on the counter (a window's streams
  // start part way).
  Publisher(Progress& progress, uint32_t wake_batch, ThreadFigures* f, uint32_t published = 0)
      : p_(progress), batch_(wake_batch), f_(f), published_(published) {}

  void Publish(uint32_t count) {
    p_.done.fetch_add(count - published_, std::memory_order_seq_cst);
    published_ = count;
    if (__builtin_expect(p_.waiters.load(std::memory_order_seq_cst) == 0, 1)) return;
    if (batch_ == 0) return Wake();
    const int64_t now = NowNs();
    if (!deferred_) {
      deferred_ = true;
      deferred_count_ = count;
      deferred_ns_ = now;
    }
    if (count - deferred_count_ >= batch_ || now - deferred_ns_ >= kWakeDelayNs) Wake();
  }
  void Flush() {
    if (deferred_) Wake();
  }

 private:
  void Wake() {
    const double c0 = replay_internal::ThreadCpuSeconds();
    const int64_t t0 = NowNs();
    FutexWakeAll(p_.done);
    f_->wait_wall += 1e-9 * static_cast<double>(NowNs() - t0);
    f_->wait_cpu += replay_internal::ThreadCpuSeconds() - c0;
    deferred_ = false;
  }

  Progress& p_;
  const uint32_t batch_;
  ThreadFigures* const f_;
  uint32_t published_;
  bool deferred_ = false;
  uint32_t deferred_count_ = 0;
  int64_t deferred_ns_ = 0;
};

// Stops the pass: every waiter, asleep or not, returns false from WaitOn
// (at once, or at its next wait). Safe to call from any thread, more than
// once.
inline void StopAll(PassShared& shared) {
  shared.abort.store(true, std::memory_order_seq_cst);
  for (Progress& p : shared.progress) {
    p.done.fetch_or(kStopBit, std::memory_order_seq_cst);
    FutexWakeAll(p.done);
  }
  shared.arrived.fetch_or(kStopBit, std::memory_order_seq_cst);
  FutexWakeAll(shared.arrived);
}

// Runs ops [from, to) of one stream (a whole pass: all of them), its
// counter at `from` when it starts and at `to` when it ends. Returns no
// error, the op that failed (kOpFailed), or kStopped if another thread's
// failure stopped the pass.
template <typename A>
RunError RunStream(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                   uint32_t self, uint32_t from, uint32_t to, void** ptrs, Touch touch,
                   PassShared& shared, ThreadFigures* f) {
  const StreamView& stream = schedule.streams[self];
  const ReplayOp* ops = stream.ops;
  const SyncWait* waits = stream.waits;
  size_t w = static_cast<size_t>(
      std::lower_bound(waits, waits + stream.num_waits, from,
                       [](const SyncWait& a, uint32_t op) { return a.op < op; }) -
      waits);
  uint64_t read_sink = 0;
  Publisher mine(shared.progress[self], shared.wake_batch, f, from);
  for (uint32_t i = from; i < to; ++i) {
    const ReplayOp& op = ops[i];
    const uint8_t kind = static_cast<uint8_t>(op.kind);
    if (__builtin_expect((kind & kWaitFlag) != 0, 0)) {
      for (; w < stream.num_waits && waits[w].op == i; ++w) {
        Progress& theirs = shared.progress[waits[w].thread];
        const uint32_t count = waits[w].count;
        if ((theirs.done.load(std::memory_order_acquire) & kCountMask) >= count) continue;
        mine.Flush();
        if (!WaitOn(
                theirs.done, theirs.waiters, shared.spin_ns,
                [count](uint32_t done) { return done >= count; }, &f->wait_cpu, &f->wait_wall)) {
          return {RunErrorKind::kStopped, "stopped: another thread failed"};
        }
      }
    }
    size_t failed_bytes = 0;
    const replay_internal::OpFailure failure = replay_internal::ApplyOp(
        allocator, program, op, static_cast<ReplayKind>(kind & kKindMask), ptrs, touch, read_sink,
        [&](const ReplayOp& o) {  // o.bytes: the stream's realloc index
          return std::pair<const ReallocInfo*, size_t>(&program.reallocs[o.bytes],
                                                       schedule.realloc_old_slots[o.bytes]);
        },
        &failed_bytes);
    if (__builtin_expect(failure != replay_internal::OpFailure::kNone, 0)) {
      // kOpFailed, as the serialized loop's: the measurement stops such a
      // policy at its first failure (another run would fail too).
      return {RunErrorKind::kOpFailed, replay_internal::OpFailureWords(failure, failed_bytes) +
                                           " at op " + std::to_string(i) + " of thread " +
                                           std::to_string(self) + "'s stream"};
    }
    if (__builtin_expect((kind & kPublishFlag) != 0, 0)) {
      mine.Publish(i + 1);
    }
  }
  // A window's stream goes on from `to` later: its counter must say so.
  if (to < stream.num_ops) mine.Publish(to);
  mine.Flush();
  asm volatile("" : : "r"(read_sink));
  return {};
}

// Waits at a barrier of the pass's threads: until `target` arrivals are
// counted (a pass's k-th barrier: k x threads), the last to arrive
// stamping start_ns. Its time is not the stream's (the caller's clocks
// start after it). Returns false if the pass stopped.
inline bool Arrive(PassShared& shared, uint32_t target) {
  if ((shared.arrived.fetch_add(1, std::memory_order_seq_cst) & kCountMask) + 1 == target) {
    shared.start_ns.store(NowNs(), std::memory_order_relaxed);
    if (shared.arrived_waiters.load(std::memory_order_seq_cst) != 0) {
      FutexWakeAll(shared.arrived);
    }
  }
  double untimed_cpu = 0, untimed_wall = 0;
  return WaitOn(
      shared.arrived, shared.arrived_waiters, shared.spin_ns,
      [target](uint32_t arrived) { return arrived >= target; }, &untimed_cpu, &untimed_wall);
}

// Runs ops [from, to) of stream `self`, timed: *f gets the stream's CPU
// time, its end and its OS counters; the pass stops if it fails.
template <typename A>
void TimedStream(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                 uint32_t self, uint32_t from, uint32_t to, void** ptrs, Touch touch,
                 PassShared& shared, ThreadFigures* f) {
  const int64_t migrations0 = ReadMigrations();
  const UsageCounts u0 = ReadUsageCounts();
  const double c0 = replay_internal::ThreadCpuSeconds();
  f->error = RunStream(allocator, program, schedule, self, from, to, ptrs, touch, shared, f);
  f->end_ns = NowNs();
  f->cpu = replay_internal::ThreadCpuSeconds() - c0;
  if (f->error.failed()) StopAll(shared);
  const UsageCounts u1 = ReadUsageCounts();
  f->usage = UsageCounts{u1.minor_faults - u0.minor_faults, u1.major_faults - u0.major_faults,
                         u1.involuntary_switches - u0.involuntary_switches,
                         u1.voluntary_switches - u0.voluntary_switches};
  f->migrations = ReadMigrations() - migrations0;
}

// One thread of a pass: the barrier, the stream, its figures.
template <typename A>
void ThreadMain(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                uint32_t self, uint32_t threads, void** ptrs, Touch touch, PassShared& shared,
                ThreadFigures* f) {
  if (!Arrive(shared, threads)) {
    f->error.Assign(RunErrorKind::kStopped, "stopped: a thread could not start");
    return;
  }
  TimedStream(allocator, program, schedule, self, 0,
              static_cast<uint32_t>(schedule.streams[self].num_ops), ptrs, touch, shared, f);
}

// Replay threads get small stacks: the loop needs little, and 1024 threads
// at glibc's default 8 MiB would map 8 GiB (and fail under a data limit,
// ulimit -d, which counts thread stacks). ASan's frames are larger.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr size_t kReplayThreadStack = size_t{4} << 20;
#else
inline constexpr size_t kReplayThreadStack = size_t{256} << 10;
#endif

// A joinable thread running `body`, or false (errno-style code in *error).
inline bool StartThread(std::function<void()>* body, pthread_t* thread, int* error) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kReplayThreadStack);
  *error = pthread_create(
      thread, &attr,
      [](void* f) -> void* {
        (*static_cast<std::function<void()>*>(f))();
        return nullptr;
      },
      body);
  pthread_attr_destroy(&attr);
  return *error == 0;
}

// Starts a thread running each of `bodies` (which must outlive them),
// adding each to *threads; on a failure, stops the pass and returns what
// failed (the threads started are left to the caller to join).
inline std::string StartThreads(std::vector<std::function<void()>>& bodies,
                                std::vector<pthread_t>* threads, PassShared& shared) {
  threads->reserve(bodies.size());
  for (size_t t = 0; t < bodies.size(); ++t) {
    pthread_t thread;
    int code = 0;
    if (!StartThread(&bodies[t], &thread, &code)) {
      StopAll(shared);
      return std::string("cannot start replay thread ") + std::to_string(t) + " of " +
             std::to_string(bodies.size()) + ": " + std::strerror(code);
    }
    threads->push_back(thread);
  }
  return "";
}

// body(t, f) for thread t, with a std::bad_alloc caught: it must not leave
// a replay thread, where it would terminate the child (SIGABRT, "crashed
// with signal 6") where the main thread's would fail the run as out of
// memory. Under the child's memory limit even a thread's error message can
// fail to allocate (a waiting thread's "stopped: ..." once another
// thread's allocation failed), so `f`'s message has its room reserved
// before the threads start.
template <typename Body>
void CatchingBadAlloc(const Body& body, PassShared& shared, ThreadFigures* f) {
  try {
    body(f);
  } catch (const std::bad_alloc&) {
    if (shared.abort.load()) {
      f->error.Assign(RunErrorKind::kStopped, "stopped: another thread failed");
    } else {
      f->error.Assign(RunErrorKind::kOutOfMemory, "out of memory (std::bad_alloc)");
    }
    StopAll(shared);
  }
}

// A pass's figures from its threads' (its wall time from `start_ns` to the
// last thread's end). Returns `error` if set, else the first thread's
// error that is not kStopped (a consequence), else any, else none.
inline RunError SumThreadFigures(const std::vector<ThreadFigures>& figures, int64_t start_ns,
                                 RunError error, PassFigures* pass, int64_t* migrations) {
  int64_t end_ns = start_ns;
  for (const ThreadFigures& f : figures) {
    if (!error.failed() && f.error.failed() && f.error.Kind() != RunErrorKind::kStopped) {
      error = f.error;
    }
    end_ns = std::max(end_ns, f.end_ns);
    pass->thread_cpu_seconds.push_back(f.cpu - f.wait_cpu);
    pass->cpu_seconds += f.cpu - f.wait_cpu;
    pass->wait_seconds += f.wait_wall;
    pass->minor_faults += f.usage.minor_faults;
    pass->major_faults += f.usage.major_faults;
    pass->involuntary_switches += f.usage.involuntary_switches;
    pass->voluntary_switches += f.usage.voluntary_switches;
    *migrations += f.migrations;
  }
  if (!error.failed()) {
    for (const ThreadFigures& f : figures) {
      if (f.error.failed()) error = f.error;
    }
  }
  pass->wall_seconds = 1e-9 * static_cast<double>(end_ns - start_ns);
  return error;
}

// Runs body(t, &figures[t]) on a thread of its own for each of the pass's
// threads and joins them; the pass's figures from theirs. Returns the
// first error, if any.
template <typename Body>
RunError RunThreads(PassShared& shared, const Body& body, PassFigures* pass, int64_t* migrations) {
  const uint32_t n = static_cast<uint32_t>(shared.progress.size());
  std::vector<ThreadFigures> figures(n);
  std::vector<std::function<void()>> bodies(n);
  for (uint32_t t = 0; t < n; ++t) {
    figures[t].error.words.reserve(64);
    bodies[t] = [&, t] {
      CatchingBadAlloc([&](ThreadFigures* f) { body(t, f); }, shared, &figures[t]);
    };
  }
  std::vector<pthread_t> threads;
  RunError error;
  if (std::string words = StartThreads(bodies, &threads, shared); !words.empty()) {
    error = {RunErrorKind::kOther, std::move(words)};
  }
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  return SumThreadFigures(figures, shared.start_ns.load(), std::move(error), pass, migrations);
}

// One pass: a thread per stream. Returns the first error, if any.
template <typename A>
RunError ConcurrentPass(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                        void** ptrs, Touch touch, PassFigures* pass, int64_t* migrations) {
  const uint32_t n = static_cast<uint32_t>(schedule.streams.size());
  for (const StreamView& stream : schedule.streams) {
    if (stream.num_ops > kCountMask) {
      return {RunErrorKind::kOther, "a thread's stream holds 2^31 ops or more"};
    }
  }
  PassShared shared(n, /*fit=*/n <= UsableCores());
  return RunThreads(
      shared,
      [&](uint32_t t, ThreadFigures* f) {
        ThreadMain<A>(allocator, program, schedule, t, n, ptrs, touch, shared, f);
      },
      pass, migrations);
}

// Frees what a pass left live (its allocator is then idle) and clears its slots.
template <typename A>
void FreeLeftovers(A& allocator, const ThreadScheduleView& schedule, void** ptrs) {
  for (uint64_t i = 0; i < schedule.num_leftovers; ++i) {
    const LeftoverBlock& b = schedule.leftovers[i];
    if (ptrs[b.slot] == nullptr) continue;
    allocator.Deallocate(ptrs[b.slot], b.bytes, size_t{1} << b.align_log2, b.arena);
    ptrs[b.slot] = nullptr;
  }
}

}  // namespace thread_replay_internal

template <typename A>
RunResult ReplayPerThreadWith(const ReplayView& program, const ThreadScheduleView& schedule,
                              const RunOptions& options) {
  RunResult r;
  r.ops = program.memory_ops;
  r.threads = static_cast<uint32_t>(schedule.streams.size());
  r.sync_points = schedule.sync_points;
  r.cross_thread_frees = schedule.cross_thread_frees;
  auto pass = [&](A& allocator, void** ptrs, bool, const RssReader&, int64_t, PassFigures* f,
                  std::vector<int64_t>*, int64_t* migrations) {
    return thread_replay_internal::ConcurrentPass(allocator, program, schedule, ptrs, options.touch,
                                                  f, migrations);
  };
  auto free_leftovers = [&](A& allocator, void** ptrs) {
    thread_replay_internal::FreeLeftovers(allocator, schedule, ptrs);
  };
  // Slots: the trace's object ids and the fresh slots of ids reused across
  // threads (thread_schedule.h).
  const size_t slots = std::max<size_t>(program.object_limit + 1, schedule.slot_limit);
  return replay_internal::RunPasses<A>(std::move(r), slots, program.arena_limit, options, pass,
                                       free_leftovers);
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_THREAD_REPLAY_H_
