// What a per-thread windowed replay's child (thread_window_server.h)
// stands on: a pointer table mapped only where touched (LazyTable), and
// replay threads, one per stream, that each run a step at a time as the
// main thread releases it (ReleasedThreads).
//
// Thread-safety: ReleasedThreads starts its threads in Start and joins
// them in Stop; run it in a process of its own.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_LOOP_H_
#define ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_LOOP_H_

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "alloctrace/replayer/engine/thread_replay.h"

namespace alloctrace {
namespace thread_window_internal {

using thread_replay_internal::PassShared;
using thread_replay_internal::ThreadFigures;

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

// Replay threads, one per stream, that each run step k (from 1) once the
// main thread releases it, and the main thread's wait for them: a serving
// child's windows (thread_window_server.h). `step`(k, t) returns whether
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

}  // namespace thread_window_internal
}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_THREAD_WINDOW_LOOP_H_
