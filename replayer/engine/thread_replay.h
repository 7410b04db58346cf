// ReplayPerThreadWith<A>: the per-thread replay of a multi-threaded trace.
// Each stream of a ThreadSchedule (thread_schedule.h) runs on an OS thread
// of its own, all released together by a barrier, through one allocator of
// type A shared by all of them, as the traced program's threads shared
// theirs. Meant to run in a child process of its own, like ReplayWith
// (replay_loop.h); its setup, passes and teardown are replay_setup.h's.
//
// Timed, per pass: the wall time of the concurrent section, from the moment
// every thread has passed the barrier to the end of the last thread's
// stream (PassFigures::wall_seconds: what the program would feel, and what
// ranks multi-threaded traces); each thread's CPU time over its stream
// minus what it spent waiting (PassFigures::thread_cpu_seconds, summed in
// cpu_seconds); the time spent waiting at sync points, summed over the
// threads (wait_seconds), measured apart and not charged to the allocator.
// Page faults, context switches and CPU migrations are the threads' own
// (read in each thread, outside the timed stretch). RSS: the peak (the
// kernel's mark) and one reading at the end of the cold pass; no course.
//
// Synchronization: one release counter per thread (its ops done so far,
// stored only after ops another thread waits for) and acquire loads by the
// waiters, spinning briefly and then yielding (there may be more threads
// than cores). No lock, no barrier per op. A thread that fails stops the
// others at their next wait (they never wait for an op that will not come).
//
// Thread-safety: a run starts one thread per stream and joins them all before
// it returns; the allocator is shared by those threads, the pointer table too
// (each slot used by one thread at a time, as the schedule orders).
#ifndef ALLOCTRACE_REPLAYER_ENGINE_THREAD_REPLAY_H_
#define ALLOCTRACE_REPLAYER_ENGINE_THREAD_REPLAY_H_

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

// One per thread, on a cache line of its own: waiters read it, its thread
// writes it.
struct alignas(64) Progress {
  std::atomic<uint32_t> done{0};
};

// What a pass shares between its threads.
struct PassShared {
  explicit PassShared(size_t threads) : progress(threads) {}
  std::vector<Progress> progress;
  std::atomic<uint32_t> arrived{0};  // at the start barrier
  std::atomic<bool> abort{false};    // a thread failed: the others stop
  std::atomic<int64_t> start_ns{0};  // when the last thread passed the barrier
};

struct ThreadFigures {
  double cpu = 0;        // over the stream, waits included
  double wait_cpu = 0;   // CPU time spent in waits
  double wait_wall = 0;  // wall time spent in waits
  int64_t end_ns = 0;    // steady clock at the end of the stream
  UsageCounts usage{};   // over the stream
  int64_t migrations = 0;
  std::string error;
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

// Spins briefly, then yields, until pred() or an abort. Returns false on abort.
template <typename Pred>
bool SpinUntil(const PassShared& shared, Pred pred) {
  for (int spins = 0; !pred(); ++spins) {
    if (shared.abort.load(std::memory_order_relaxed)) return false;
    if (spins < 100) {
      CpuRelax();
    } else {
      sched_yield();
    }
  }
  return true;
}

// Runs one stream. Returns "" or an error message.
template <typename A>
std::string RunStream(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                      uint32_t self, void** ptrs, Touch touch, PassShared& shared,
                      ThreadFigures* f) {
  const StreamView& stream = schedule.streams[self];
  const ReplayOp* ops = stream.ops;
  const SyncWait* waits = stream.waits;
  size_t w = 0;
  uint64_t read_sink = 0;
  std::atomic<uint32_t>& mine = shared.progress[self].done;
  for (uint32_t i = 0; i < stream.num_ops; ++i) {
    const ReplayOp& op = ops[i];
    const uint8_t kind = static_cast<uint8_t>(op.kind);
    if (__builtin_expect((kind & kWaitFlag) != 0, 0)) {
      for (; w < stream.num_waits && waits[w].op == i; ++w) {
        const std::atomic<uint32_t>& theirs = shared.progress[waits[w].thread].done;
        const uint32_t count = waits[w].count;
        if (theirs.load(std::memory_order_acquire) >= count) continue;
        const double c0 = replay_internal::ThreadCpuSeconds();
        const int64_t t0 = NowNs();
        const bool ok =
            SpinUntil(shared, [&] { return theirs.load(std::memory_order_acquire) >= count; });
        f->wait_wall += 1e-9 * static_cast<double>(NowNs() - t0);
        f->wait_cpu += replay_internal::ThreadCpuSeconds() - c0;
        if (!ok) return "stopped: another thread failed";
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
      return replay_internal::OpFailureWords(failure, failed_bytes);
    }
    if (__builtin_expect((kind & kPublishFlag) != 0, 0)) {
      mine.store(i + 1, std::memory_order_release);
    }
  }
  asm volatile("" : : "r"(read_sink));
  return "";
}

// One thread of a pass: the barrier, the stream, its figures.
template <typename A>
void ThreadMain(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                uint32_t self, uint32_t threads, void** ptrs, Touch touch, PassShared& shared,
                ThreadFigures* f) {
  const int64_t migrations0 = ReadMigrations();
  const UsageCounts u0 = ReadUsageCounts();
  if (shared.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == threads) {
    shared.start_ns.store(NowNs(), std::memory_order_relaxed);
  }
  if (!SpinUntil(shared,
                 [&] { return shared.arrived.load(std::memory_order_acquire) == threads; })) {
    f->error = "stopped: a thread could not start";
    return;
  }
  const double c0 = replay_internal::ThreadCpuSeconds();
  f->error = RunStream(allocator, program, schedule, self, ptrs, touch, shared, f);
  f->end_ns = NowNs();
  f->cpu = replay_internal::ThreadCpuSeconds() - c0;
  if (!f->error.empty()) shared.abort.store(true, std::memory_order_relaxed);
  const UsageCounts u1 = ReadUsageCounts();
  f->usage = UsageCounts{u1.minor_faults - u0.minor_faults, u1.major_faults - u0.major_faults,
                         u1.involuntary_switches - u0.involuntary_switches,
                         u1.voluntary_switches - u0.voluntary_switches};
  f->migrations = ReadMigrations() - migrations0;
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

// One pass: a thread per stream. Returns "" or the first error.
template <typename A>
std::string ConcurrentPass(A& allocator, const ReplayView& program,
                           const ThreadScheduleView& schedule, void** ptrs, Touch touch,
                           PassFigures* pass, int64_t* migrations) {
  const uint32_t n = static_cast<uint32_t>(schedule.streams.size());
  PassShared shared(n);
  std::vector<ThreadFigures> figures(n);
  std::vector<std::function<void()>> bodies(n);
  std::vector<pthread_t> threads;
  threads.reserve(n);
  std::string error;
  for (uint32_t t = 0; t < n; ++t) {
    // A std::bad_alloc must not leave a replay thread: it would terminate the
    // child (SIGABRT, "crashed with signal 6") where the main thread's would
    // fail the run as out of memory. Under the child's memory limit even a
    // thread's error message can fail to allocate (a waiting thread's
    // "stopped: ..." once another thread's allocation failed), so the
    // message's room is reserved here, before the threads start.
    figures[t].error.reserve(64);
    bodies[t] = [&, t] {
      try {
        ThreadMain<A>(allocator, program, schedule, t, n, ptrs, touch, shared, &figures[t]);
      } catch (const std::bad_alloc&) {
        figures[t].error.assign(shared.abort.load() ? "stopped: another thread failed"
                                                    : "out of memory (std::bad_alloc)");
        shared.abort.store(true);
      }
    };
    pthread_t thread;
    int code = 0;
    if (!StartThread(&bodies[t], &thread, &code)) {
      error = std::string("cannot start replay thread ") + std::to_string(t) + " of " +
              std::to_string(n) + ": " + std::strerror(code);
      shared.abort.store(true);
      break;
    }
    threads.push_back(thread);
  }
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  int64_t end_ns = shared.start_ns.load();
  for (const ThreadFigures& f : figures) {
    if (error.empty() && !f.error.empty() && f.error.rfind("stopped:", 0) != 0) error = f.error;
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
  if (error.empty()) {
    for (const ThreadFigures& f : figures) {
      if (!f.error.empty()) error = f.error;
    }
  }
  pass->wall_seconds = 1e-9 * static_cast<double>(end_ns - shared.start_ns.load());
  return error;
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
