// ReplayPerThreadWindowsWith<A>: a windowed run (windows.h) of a
// multi-threaded trace, each window replayed per thread (thread_replay.h)
// through allocator type A, in a child process of its own.
//
// A window is cut at points of the trace's global order: each stream runs
// its ops from the first at or after the window's lead_begin to the last
// before its end, with the schedule's waits as they are (a wait for an op
// before the window is already met: every counter starts at the ops its
// stream has before the window). For each window, in trace order: a fresh
// allocator; its live arenas created (on the run's main thread); then
// each of the run's replay threads, one per stream, started once for all
// the windows (WindowThreads), which
//  1. allocates and touches the objects live at lead_begin that its own
//     thread allocated in the trace, in their allocation order (so a
//     malloc with per-thread caches or heaps starts with each block where
//     the program's thread put it), and waits for the others at a barrier;
//  2. replays its lead-in ops, untimed, and waits at a second barrier;
//  3. replays its window ops, timed as a whole pass's stream is: its CPU
//     time less its waits, and the wall time of the concurrent section,
//     from the second barrier to the last stream's end.
// Then what the window left live is freed (the parent worked out which
// blocks, WindowStates::leftovers), the allocator destroyed, the heap
// trimmed; after the last window of a child about to end
// (RunOptions::process_ends_after), all of that is left to the process's
// end. No wait can deadlock: each points to an op earlier in the
// global order, which is before the same barrier or is already met.
//
// Thread-safety: starts its threads before the run's baseline and joins
// them after its last window; run it in a process of its own.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_LOOP_H_
#define ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_LOOP_H_

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alloctrace/base/shared_arrays.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/replay_setup.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/thread_replay.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/engine/window_loop.h"
#include "alloctrace/replayer/engine/windows.h"

namespace alloctrace {
namespace thread_window_internal {

using thread_replay_internal::PassShared;
using thread_replay_internal::ThreadFigures;

// Whether window `s`'s per-thread arrays fit `schedule` and a table of
// `slots` pointers: "" or what does not.
inline std::string CheckState(const StateRef& s, const ThreadScheduleView& schedule, size_t slots) {
  const uint32_t n = static_cast<uint32_t>(schedule.streams.size());
  if (s.threads != n) return "the window states are not for this schedule's threads";
  for (uint32_t t = 0; t < n; ++t) {
    if (schedule.streams[t].num_ops > thread_replay_internal::kCountMask) {
      return "a thread's stream holds 2^31 ops or more";
    }
    const uint32_t* b = s.thread_bounds + 3 * size_t{t};
    if (b[0] > b[1] || b[1] > b[2] || b[2] > schedule.streams[t].num_ops) {
      return "a window's stream bounds are out of order";
    }
  }
  for (size_t k = 0; k < s.num_objects; ++k) {
    if (s.object_slots[k] >= slots || s.object_threads[k] >= n) {
      return "a window's start state names a slot or thread out of range";
    }
  }
  for (size_t k = 0; k < s.num_leftovers; ++k) {
    if (s.leftovers[k].slot >= slots) return "a window's leftovers name a slot out of range";
  }
  return "";
}

// A table of `slots` null pointers whose pages are mapped only once
// touched: a per-thread trace's table can hold millions of slots (a fresh
// one for each id reused across threads), of which its windows use few,
// and zeroing all of it cost a windowed run more than its windows.
class LazyTable {
 public:
  explicit LazyTable(size_t slots) : bytes_(std::max<size_t>(slots, 1) * sizeof(void*)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<void**>(p);
  }
  ~LazyTable() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  LazyTable(const LazyTable&) = delete;
  LazyTable& operator=(const LazyTable&) = delete;
  void** data() const { return data_; }

 private:
  size_t bytes_;
  void** data_;
};

// Maps in, before the run's baseline, what window `s` reads and writes:
// its streams' ops and waits, the side tables they index and the table
// slots they use (a child maps the shared program and schedule without
// populating them, and PrefaultSharedMappings(false) leaves them so).
inline void PrefaultWindow(const ReplayView& program, const ThreadScheduleView& schedule,
                           const StateRef& s, void** ptrs) {
  uint64_t sink = 0;
  for (uint32_t t = 0; t < s.threads; ++t) {
    const StreamView& stream = schedule.streams[t];
    const uint32_t from = s.thread_bounds[3 * size_t{t}];
    const uint32_t to = s.thread_bounds[3 * size_t{t} + 2];
    PopulateRange(stream.ops + from, size_t{to - from} * sizeof(ReplayOp));
    auto by_op = [](const SyncWait& a, uint32_t op) { return a.op < op; };
    const SyncWait* w0 =
        std::lower_bound(stream.waits, stream.waits + stream.num_waits, from, by_op);
    const SyncWait* w1 = std::lower_bound(w0, stream.waits + stream.num_waits, to, by_op);
    PopulateRange(w0, static_cast<size_t>(w1 - w0) * sizeof(SyncWait));
    for (uint32_t i = from; i < to; ++i) {
      const ReplayOp& op = stream.ops[i];
      const ReplayKind kind = static_cast<ReplayKind>(static_cast<uint8_t>(op.kind) & kKindMask);
      if (kind == ReplayKind::kArenaCreate || kind == ReplayKind::kArenaDestroy) continue;
      ptrs[op.object] = nullptr;
      if (kind == ReplayKind::kRealloc) {
        ptrs[schedule.realloc_old_slots[op.bytes]] = nullptr;
        sink += program.reallocs[op.bytes].new_bytes;
      } else if ((kind == ReplayKind::kAlloc || kind == ReplayKind::kAllocZeroed) &&
                 op.bytes == kBigSize) {
        sink += program.big_sizes[op.aux];
      }
    }
  }
  for (size_t k = 0; k < s.num_objects; ++k) ptrs[s.object_slots[k]] = nullptr;
  for (size_t k = 0; k < s.num_leftovers; ++k) ptrs[s.leftovers[k].slot] = nullptr;
  asm volatile("" : : "r"(sink));
}

// Thread `self`'s part of window `state`: its objects rebuilt, its
// lead-in, its window ops timed (*f). `barriers`: the barriers the run's
// threads passed before this window (2 per window).
template <typename A>
void WindowThread(A& allocator, const ReplayView& program, const ThreadScheduleView& schedule,
                  const StateRef& start, uint32_t self, uint32_t barriers, void** ptrs, Touch touch,
                  PassShared& shared, ThreadFigures* f) {
  const uint32_t n = static_cast<uint32_t>(schedule.streams.size());
  const uint32_t* bounds = start.thread_bounds + 3 * size_t{self};
  for (size_t k = 0; k < start.num_objects; ++k) {
    if (start.object_threads[k] != self) continue;
    const LiveObject& o = start.objects[k];
    void* p = allocator.Allocate(o.bytes, size_t{1} << o.align_log2, o.arena);
    if (p == nullptr && o.bytes > 0) {
      f->error = replay_internal::OpFailureWords(replay_internal::OpFailure::kAlloc, o.bytes) +
                 " rebuilding a window's heap";
      thread_replay_internal::StopAll(shared);
      return;
    }
    replay_internal::TouchBlock(p, o.bytes, touch, o.object);
    ptrs[start.object_slots[k]] = p;
  }
  if (!thread_replay_internal::Arrive(shared, (barriers + 1) * n)) {
    f->error = "stopped: another thread failed";
    return;
  }
  f->error = thread_replay_internal::RunStream(allocator, program, schedule, self, bounds[0],
                                               bounds[1], ptrs, touch, shared, f);
  if (!f->error.empty()) {
    thread_replay_internal::StopAll(shared);
    return;
  }
  // The lead-in's waits are not the window's.
  f->wait_cpu = 0;
  f->wait_wall = 0;
  if (!thread_replay_internal::Arrive(shared, (barriers + 2) * n)) {
    f->error = "stopped: another thread failed";
    return;
  }
  thread_replay_internal::TimedStream(allocator, program, schedule, self, bounds[1], bounds[2],
                                      ptrs, touch, shared, f);
}

// Replay threads, one per stream, that each run step k (from 1) once the
// main thread releases it, and the main thread's wait for them: a run's
// windows (WindowThreads) or a serving child's (thread_window_server.h).
// `step`(k, t, &figures[t]) returns whether thread t goes on to the next
// step; the threads end after `steps` steps (0: until stopped).
class ReleasedThreads {
 public:
  using Step = std::function<bool(uint32_t k, uint32_t t)>;
  ReleasedThreads(uint32_t n, PassShared& shared, Step step, uint32_t steps = 0)
      : n_(n), shared_(shared), step_(std::move(step)), steps_(steps) {}
  ~ReleasedThreads() { Stop(); }
  ReleasedThreads(const ReleasedThreads&) = delete;
  ReleasedThreads& operator=(const ReleasedThreads&) = delete;

  // Starts the threads (they wait for step 1): "" or what failed.
  std::string Start() {
    bodies_.resize(n_);
    for (uint32_t t = 0; t < n_; ++t) bodies_[t] = [this, t] { Body(t); };
    return thread_replay_internal::StartThreads(bodies_, &threads_, shared_);
  }

  // Releases step k (steps are released in order) and waits until every
  // thread is done with it.
  void RunStep(uint32_t k) {
    Release(k);
    double cpu = 0, wall = 0;
    const uint32_t all = k * n_;
    thread_replay_internal::WaitOn(
        finished_, finished_waiters_, 0, [all](uint32_t done) { return done >= all; }, &cpu, &wall);
  }

  // Ends the threads (after the last step, or on a failure) and joins them.
  void Stop() {
    if (threads_.empty()) return;
    Release(thread_replay_internal::kStopBit);
    thread_replay_internal::StopAll(shared_);
    for (pthread_t thread : threads_) pthread_join(thread, nullptr);
    threads_.clear();
  }

 private:
  // Sets `go_` to a step's number, or sets its kStopBit, and wakes the
  // threads waiting on it.
  void Release(uint32_t value) {
    if (value == thread_replay_internal::kStopBit) {
      go_.fetch_or(value, std::memory_order_seq_cst);
    } else {
      go_.store(value, std::memory_order_seq_cst);
    }
    if (go_waiters_.load(std::memory_order_seq_cst) != 0) thread_replay_internal::FutexWakeAll(go_);
  }

  void Body(uint32_t t) {
    for (uint32_t k = 1; steps_ == 0 || k <= steps_; ++k) {
      double cpu = 0, wall = 0;
      if (!thread_replay_internal::WaitOn(
              go_, go_waiters_, shared_.spin_ns, [k](uint32_t go) { return go >= k; }, &cpu,
              &wall)) {
        return;
      }
      const bool go_on = step_(k, t);
      finished_.fetch_add(1, std::memory_order_seq_cst);
      if (finished_waiters_.load(std::memory_order_seq_cst) != 0) {
        thread_replay_internal::FutexWakeAll(finished_);
      }
      if (!go_on) return;
    }
  }

  const uint32_t n_;
  PassShared& shared_;
  const Step step_;
  const uint32_t steps_;
  std::vector<std::function<void()>> bodies_;
  std::vector<pthread_t> threads_;
  // Steps released (their count; kStopBit: the threads are done), and the
  // threads done with one, summed over the steps: futex words, as a
  // pass's progress counters.
  std::atomic<uint32_t> go_{0}, go_waiters_{0};
  std::atomic<uint32_t> finished_{0}, finished_waiters_{0};
};

// The replay threads of a run, one per stream, which replay its windows
// one after another as the run's main thread releases them: the program's
// threads live through the program, and so do these through the run, so a
// malloc's per-thread caches and its choice of arena for each thread carry
// from window to window as they do through a whole run (with a thread
// per window, each window started on cold caches and a new choice of
// arenas: on a captured 5-thread trace, windows read jemalloc's lead over
// glibc malloc a fifth smaller than whole runs did). Between windows the
// main thread frees what the window left, destroys its allocator, trims
// the heap and makes the next window's allocator, while the threads wait.
template <typename A>
class WindowThreads {
 public:
  WindowThreads(const ReplayView& program, const ThreadScheduleView& schedule,
                const WindowStatesView& states, void** ptrs, Touch touch)
      : program_(program),
        schedule_(schedule),
        states_(states),
        ptrs_(ptrs),
        touch_(touch),
        n_(static_cast<uint32_t>(schedule.streams.size())),
        shared_(n_, /*fit=*/n_ <= UsableCores()),
        figures_(states.windows, std::vector<ThreadFigures>(n_)),
        threads_(
            n_, shared_, [this](uint32_t k, uint32_t t) { return Step(k, t); },
            static_cast<uint32_t>(states.windows)) {
    for (auto& window : figures_) {
      for (ThreadFigures& f : window) f.error.reserve(64);
    }
  }
  ~WindowThreads() { Stop(); }
  WindowThreads(const WindowThreads&) = delete;
  WindowThreads& operator=(const WindowThreads&) = delete;

  // Starts the threads (they wait for the first window): "" or what failed.
  std::string Start() { return threads_.Start(); }

  // Window i (after window i - 1) through a fresh allocator: its figures
  // in *f; "" or what failed (then the threads are stopped). `leave_heap`:
  // what the window left live, and its allocator, are left for the
  // process's end (the run's last window in a child about to exit, as
  // window_loop.h's RunWindow does).
  std::string Run(size_t i, const ReplayWindow& w, WindowFigures* f, int64_t* migrations,
                  bool leave_heap = false) {
    const StateRef start = StateOf(states_, i);
    auto allocator = replay_internal::MakeAllocator<A>(program_.arena_limit);
    for (size_t k = 0; k < start.num_arenas; ++k) allocator->ArenaCreated(start.arenas[k]);
    for (uint32_t t = 0; t < n_; ++t) {
      shared_.progress[t].done.store(start.thread_bounds[3 * size_t{t}], std::memory_order_relaxed);
    }
    allocator_ = allocator.get();
    threads_.RunStep(static_cast<uint32_t>(i + 1));
    const std::string error = thread_replay_internal::SumThreadFigures(
        figures_[i], shared_.start_ns.load(), "", &f->figures, migrations);
    if (!error.empty()) {
      Stop();  // then the allocator goes, as a failed whole run's does
      return error;
    }
    f->ops = MemoryOpsIn(program_, w.begin, w.end);
    allocator_ = nullptr;
    if (leave_heap) {
      allocator.release();  // the process ends next, without freeing
      return "";
    }
    for (size_t k = 0; k < start.num_leftovers; ++k) {
      const WindowLeftover& b = start.leftovers[k];
      if (b.gone == 0 && ptrs_[b.slot] != nullptr) {
        allocator->Deallocate(ptrs_[b.slot], b.bytes, size_t{1} << b.align_log2, b.arena);
      }
      ptrs_[b.slot] = nullptr;
    }
    allocator.reset();
    return "";
  }

  // Ends the threads (after the last window, or on a failure) and joins
  // them.
  void Stop() { threads_.Stop(); }

 private:
  // Thread t's part of window k - 1; whether it goes on.
  bool Step(uint32_t k, uint32_t t) {
    const uint32_t i = k - 1;
    ThreadFigures* f = &figures_[i][t];
    thread_replay_internal::CatchingBadAlloc(
        [&](ThreadFigures* tf) {
          WindowThread<A>(*allocator_, program_, schedule_, StateOf(states_, i), t, 2 * i, ptrs_,
                          touch_, shared_, tf);
        },
        shared_, f);
    return f->error.empty();
  }

  const ReplayView& program_;
  const ThreadScheduleView& schedule_;
  const WindowStatesView& states_;
  void** const ptrs_;
  const Touch touch_;
  const uint32_t n_;
  PassShared shared_;
  std::vector<std::vector<ThreadFigures>> figures_;  // by window, by thread
  A* allocator_ = nullptr;                           // the window's, while its threads run
  ReleasedThreads threads_;                          // last: its threads use the members above
};

}  // namespace thread_window_internal

// `states`: the windows' start states as the parent shared them, with the
// per-thread arrays (AddThreadStarts); a child cannot work those out (it
// has no op threads).
template <typename A>
RunResult ReplayPerThreadWindowsWith(const ReplayView& program, const ThreadScheduleView& schedule,
                                     const std::vector<ReplayWindow>& windows,
                                     const WindowStatesView& states, const RunOptions& options) {
  RunResult r;
  r.threads = static_cast<uint32_t>(schedule.streams.size());
  r.sync_points = schedule.sync_points;
  r.cross_thread_frees = schedule.cross_thread_frees;
  if (states.windows != windows.size() || states.threads == 0) {
    r.error = "a per-thread windowed run needs its windows' per-thread start states";
    return r;
  }
  const size_t slots = std::max<size_t>(program.object_limit + 1, schedule.slot_limit);
  for (size_t i = 0; i < windows.size(); ++i) {
    r.error = thread_window_internal::CheckState(StateOf(states, i), schedule, slots);
    if (!r.error.empty()) return r;
  }
  thread_window_internal::LazyTable table(slots);
  void** ptrs = table.data();
  if (ptrs == nullptr) {
    r.error = "cannot map a pointer table of " + std::to_string(slots) + " slots";
    return r;
  }
  PrefaultSharedMappings(/*memfds=*/false);
  for (size_t i = 0; i < windows.size(); ++i) {
    thread_window_internal::PrefaultWindow(program, schedule, StateOf(states, i), ptrs);
  }
  // The threads start before the baseline: their stacks are the run's, as
  // the pointer table is.
  thread_window_internal::WindowThreads<A> threads(program, schedule, states, ptrs, options.touch);
  r.error = threads.Start();
  if (!r.error.empty()) return r;
  window_internal::RunWindowsFromBaseline(
      windows, &r,
      [&](size_t i, WindowFigures* f) {
        const bool last = i + 1 == windows.size();
        return threads.Run(i, windows[i], f, &r.migrations, options.process_ends_after && last);
      },
      options.process_ends_after);
  threads.Stop();
  return r;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_LOOP_H_
