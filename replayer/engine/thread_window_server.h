// ServeThreadWindowsWith<A>: served windows (window_server.h) of a
// multi-threaded trace, replayed per thread (thread_replay.h) through
// allocator type A. The child's replay threads, one per stream, and its one
// allocator live through the trace, as a whole per-thread run's do; each
// request names a window and, for each stream, the ops before the window's
// begin and end (the parent counts them: the child has no op threads).
// For each window the streams replay untimed from where they stopped up to
// the window's begin, meet at a barrier, then replay the window, timed as
// a whole pass's streams are (thread_replay.h: TimedStream). Before that
// the child reads back its private memory (WarmPrivateMemory). The pointer
// table is mapped only where touched (LazyTable), and the replay threads
// each run a step at a time as the main thread releases it
// (ReleasedThreads).
//
// The request: WindowsWord of one window, ';', then 2 numbers per stream,
// comma-separated (its ops before the window's begin, and before its end).
// The answer and the end are window_server.h's.
//
// Thread-safety: starts its threads before its baseline and joins them at
// its end; run it in a process of its own.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_SERVER_H_
#define ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_SERVER_H_

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/run_result_wire.h"
#include "alloctrace/replayer/engine/thread_replay.h"
#include "alloctrace/replayer/engine/window_server.h"
#include "alloctrace/replayer/engine/windows.h"

namespace alloctrace {
namespace thread_window_internal {

using thread_replay_internal::PassShared;
using thread_replay_internal::ThreadFigures;

// A table of `slots` null pointers whose pages are mapped only once
// touched: a per-thread trace's table can hold millions of slots (a fresh
// one for each id reused across threads), of which its windows use few,
// and zeroing all of it would cost a windowed run more than its windows.
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

// Replay threads, one per stream, that each run step k (from 1) once the
// main thread releases it, and the main thread's wait for them: a serving
// child's windows (ServedThreads). `step`(k, t) returns whether
// thread t goes on to the next step; the threads end when stopped.
class ReleasedThreads {
 public:
  using Step = std::function<bool(uint32_t k, uint32_t t)>;
  ReleasedThreads(uint32_t n, PassShared& shared, Step step)
      : n_(n), shared_(shared), step_(std::move(step)) {}
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
    for (uint32_t k = 1;; ++k) {
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
  std::vector<std::function<void()>> bodies_;
  std::vector<pthread_t> threads_;
  // Steps released (their count; kStopBit: the threads are done), and the
  // threads done with one, summed over the steps: futex words, as a
  // pass's progress counters.
  std::atomic<uint32_t> go_{0}, go_waiters_{0};
  std::atomic<uint32_t> finished_{0}, finished_waiters_{0};
};

// The replay threads of a serving child: each window released to them in
// turn, their streams run on from where the last one stopped.
template <typename A>
class ServedThreads {
 public:
  ServedThreads(const ReplayView& program, const ThreadScheduleView& schedule, void** ptrs,
                Touch touch)
      : program_(program),
        schedule_(schedule),
        ptrs_(ptrs),
        touch_(touch),
        n_(static_cast<uint32_t>(schedule.streams.size())),
        shared_(n_, /*fit=*/n_ <= UsableCores()),
        figures_(n_),
        bounds_(2 * size_t{n_}, 0),
        position_(n_, 0),
        threads_(n_, shared_, [this](uint32_t k, uint32_t t) { return Step(k, t); }) {}
  ~ServedThreads() { Stop(); }
  ServedThreads(const ServedThreads&) = delete;
  ServedThreads& operator=(const ServedThreads&) = delete;

  std::string Start() { return threads_.Start(); }

  // Each stream's ops before the next window's begin and end, 2 per
  // stream: "" or why they cannot follow the last window's.
  std::string CheckBounds(const std::vector<uint32_t>& bounds) const {
    if (bounds.size() != 2 * size_t{n_}) return "not two bounds per stream";
    for (uint32_t t = 0; t < n_; ++t) {
      const uint32_t begin = bounds[2 * size_t{t}], end = bounds[2 * size_t{t} + 1];
      if (begin < position_[t] || end < begin || end > schedule_.streams[t].num_ops) {
        return absl::StrCat("stream ", t, "'s bounds ", begin, ", ", end,
                            " do not follow its position ", position_[t]);
      }
    }
    return "";
  }

  // The next window through `allocator` (CheckBounds first): its figures
  // in *pass; what failed, if anything (then the threads are stopped).
  RunError Run(const std::vector<uint32_t>& bounds, A* allocator, PassFigures* pass,
               int64_t* migrations) {
    bounds_ = bounds;
    allocator_ = allocator;
    for (ThreadFigures& f : figures_) {
      f = ThreadFigures();
      f.error.words.reserve(64);
    }
    threads_.RunStep(++windows_);
    RunError error = thread_replay_internal::SumThreadFigures(figures_, shared_.start_ns.load(), {},
                                                              pass, migrations);
    if (error.failed()) Stop();
    for (uint32_t t = 0; t < n_; ++t) position_[t] = bounds_[2 * size_t{t} + 1];
    return error;
  }

  void Stop() { threads_.Stop(); }

 private:
  // Stream t's part of window k (from 1): on untimed to its begin, the
  // barrier, its window timed.
  void Window(uint32_t k, uint32_t t, ThreadFigures* f) {
    const uint32_t begin = bounds_[2 * size_t{t}], end = bounds_[2 * size_t{t} + 1];
    if (!thread_replay_internal::Arrive(shared_, (2 * k - 1) * n_)) {
      f->error.Assign(RunErrorKind::kStopped, "stopped: another thread failed");
      return;
    }
    f->error = thread_replay_internal::RunStream(*allocator_, program_, schedule_, t, position_[t],
                                                 begin, ptrs_, touch_, shared_, f);
    if (f->error.failed()) {
      thread_replay_internal::StopAll(shared_);
      return;
    }
    f->wait_cpu = 0;  // the lead-in's waits are not the window's
    f->wait_wall = 0;
    if (!thread_replay_internal::Arrive(shared_, 2 * k * n_)) {
      f->error.Assign(RunErrorKind::kStopped, "stopped: another thread failed");
      return;
    }
    thread_replay_internal::TimedStream(*allocator_, program_, schedule_, t, begin, end, ptrs_,
                                        touch_, shared_, f);
  }

  // Thread t's part of window k; whether it goes on.
  bool Step(uint32_t k, uint32_t t) {
    ThreadFigures* f = &figures_[t];
    thread_replay_internal::CatchingBadAlloc([&](ThreadFigures* tf) { Window(k, t, tf); }, shared_,
                                             f);
    return !f->error.failed();
  }

  const ReplayView& program_;
  const ThreadScheduleView& schedule_;
  void** const ptrs_;
  const Touch touch_;
  const uint32_t n_;
  PassShared shared_;
  std::vector<ThreadFigures> figures_;  // the window's, by thread
  std::vector<uint32_t> bounds_;        // the window's, 2 per stream
  std::vector<uint32_t> position_;      // each stream's ops done
  A* allocator_ = nullptr;
  uint32_t windows_ = 0;     // released so far
  ReleasedThreads threads_;  // last: its threads use the members above
};

// A request's window and stream bounds; false if malformed.
inline bool ParseThreadRequest(const std::string& line, uint64_t num_ops, ReplayWindow* window,
                               std::vector<uint32_t>* bounds) {
  const std::vector<std::string> parts = absl::StrSplit(line, ';');
  if (parts.size() != 2) return false;
  absl::StatusOr<std::vector<ReplayWindow>> w = ParseWindowsWord(parts[0], num_ops);
  if (!w.ok() || w->size() != 1) return false;
  *window = (*w)[0];
  bounds->clear();
  for (absl::string_view word : absl::StrSplit(parts[1], ',')) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(word, &v)) return false;
    bounds->push_back(v);
  }
  return true;
}

}  // namespace thread_window_internal

template <typename A>
int ServeThreadWindowsWith(const ReplayView& program, const ThreadScheduleView& schedule,
                           const RunOptions& options, int command_fd, int result_fd) {
  using thread_window_internal::ServedThreads;
  const size_t slots = std::max<size_t>(program.object_limit + 1, schedule.slot_limit);
  thread_window_internal::LazyTable table(slots);
  RunResult failed;
  if (table.data() == nullptr) {
    failed.error = {RunErrorKind::kOther,
                    "cannot map a pointer table of " + std::to_string(slots) + " slots"};
    return WriteAll(result_fd, FramedRunResult(failed)) == 0 ? 0 : 1;
  }
  PrefaultSharedMappings();
  ServedThreads<A> threads(program, schedule, table.data(), options.touch);
  if (std::string words = threads.Start(); !words.empty()) {
    failed.error = {RunErrorKind::kOther, std::move(words)};
    return WriteAll(result_fd, FramedRunResult(failed)) == 0 ? 0 : 1;
  }
  const window_internal::ServedMemory memory;
  auto allocator = replay_internal::MakeAllocator<A>(program.arena_limit);
  uint64_t position = 0;
  window_internal::LineReader requests(command_fd);
  std::string line;
  int status = 0;
  while (requests.Next(&line)) {
    RunResult r;
    r.threads = static_cast<uint32_t>(schedule.streams.size());
    r.sync_points = schedule.sync_points;
    r.cross_thread_frees = schedule.cross_thread_frees;
    ReplayWindow w;
    std::vector<uint32_t> bounds;
    std::string malformed;
    if (!thread_window_internal::ParseThreadRequest(line, program.num_ops, &w, &bounds)) {
      malformed = absl::StrCat("a served window's request '", line, "' is not one window and ",
                               "its streams' bounds");
    } else {
      malformed = window_internal::BehindWords(w.begin, position);
      if (malformed.empty()) malformed = threads.CheckBounds(bounds);
    }
    if (!malformed.empty()) {
      r.error = {RunErrorKind::kOther, std::move(malformed)};
    } else {
      WarmPrivateMemory(window_internal::kWarmBytes);
      WindowFigures f;
      f.weight = w.weight;
      r.error = threads.Run(bounds, allocator.get(), &f.figures, &r.migrations);
      if (!r.error.failed()) {
        position = w.end;
        f.ops = MemoryOpsIn(program, w.begin, w.end);
        memory.Fill(&r);
        r.windows.push_back(f);
        WindowedEstimate({w}, &r);
      }
    }
    if (!window_internal::Answer(result_fd, r, &status)) break;
  }
  threads.Stop();
  // The heap, and the allocator, are left to the process's end: its blocks
  // are known only by their slots here (a test runs it in a process of its
  // own).
  allocator.release();
  return status;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_SERVER_H_
