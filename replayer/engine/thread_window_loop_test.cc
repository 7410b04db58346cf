#include "alloctrace/replayer/engine/thread_window_loop.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result_wire_testing.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/engine/thread_window_server.h"
#include "alloctrace/replayer/engine/windows.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// glibc malloc that checks every call against the blocks it has handed
// out (from any thread): a free or realloc must name a live block with the
// size and arena it was allocated with. Every instance shares one book, so
// a window's blocks must all be freed (or gone with their arena) before
// the next window's allocator starts.
class CheckedAllocator : public allocators::MallocAllocator {
 public:
  struct Block {
    size_t bytes;
    uint32_t arena;
  };
  static std::mutex mu;
  static std::map<void*, Block> live;
  static std::vector<std::string> errors;
  static void Reset() {
    live.clear();
    errors.clear();
  }

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    void* p = MallocAllocator::Allocate(bytes, align, arena);
    std::lock_guard<std::mutex> l(mu);
    live[p] = Block{bytes, arena};
    return p;
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    Check(p, bytes, arena, "free");
    MallocAllocator::Deallocate(p, bytes, align, arena);
  }
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    Check(p, old_bytes, arena, "realloc");
    void* q = MallocAllocator::Reallocate(p, old_bytes, new_bytes, align, arena);
    std::lock_guard<std::mutex> l(mu);
    live[q] = Block{new_bytes, arena};
    return q;
  }

 private:
  static void Check(void* p, size_t bytes, uint32_t arena, const char* what) {
    std::lock_guard<std::mutex> l(mu);
    auto it = live.find(p);
    if (it == live.end()) {
      errors.push_back(std::string(what) + " of a block not live");
    } else {
      if (it->second.bytes != bytes || it->second.arena != arena) {
        errors.push_back(std::string(what) + " with another size or arena than allocated");
      }
      live.erase(it);
    }
  }
};
std::mutex CheckedAllocator::mu;
std::map<void*, CheckedAllocator::Block> CheckedAllocator::live;
std::vector<std::string> CheckedAllocator::errors;

using MtStackPool = allocators::ArticlePoolAllocator<pool::StorageSimple, pool::GrowthExponential,
                                                     pool::MultiThreaded, pool::HoldingStack, true>;

struct Loaded {
  ReplayProgram program;
  ThreadSchedule schedule;
};

Loaded Load(const char* path) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  EXPECT_EQ(p->op_threads.size(), p->ops.size()) << "not a multi-threaded trace";
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  return Loaded{*std::move(p), *std::move(s)};
}

// The states of `plan` with their per-thread arrays, as a child maps them.
WindowStatesView Shared(const Loaded& l, const std::vector<ReplayWindow>& plan) {
  WindowStates states = StartStates(ViewOf(l.program), plan);
  AddThreadStarts(l.program, l.schedule, plan, &states);
  absl::StatusOr<int> fd = ShareWindowStates(states);
  EXPECT_TRUE(fd.ok()) << fd.status();
  if (!fd.ok()) return {};
  absl::StatusOr<WindowStatesView> view = MapSharedWindowStates(*fd);
  close(*fd);
  EXPECT_TRUE(view.ok()) << view.status();
  return view.ok() ? *view : WindowStatesView{};
}

// Where each window starts and ends in every stream: the ops of each
// stream before the window's bounds in the trace's order, in order; every
// object of the start state rebuilt by the stream that allocated it, into
// the slot its allocation used there.
TEST(AddThreadStartsTest, BoundsAndSlotsFollowTheGlobalOrder) {
  const Loaded l = Load("traces/producer_consumer.trace");
  ASSERT_GT(l.schedule.streams.size(), 1u);
  const uint64_t n = l.program.ops.size();
  const std::vector<ReplayWindow> plan = {{0, 0, n / 4, 1}, {n / 3, n / 2, 2 * n / 3, 1}};
  WindowStates states = StartStates(ViewOf(l.program), plan);
  AddThreadStarts(l.program, l.schedule, plan, &states);
  const uint32_t threads = static_cast<uint32_t>(l.schedule.streams.size());
  ASSERT_EQ(states.threads, threads);
  ASSERT_EQ(states.thread_bounds.size(), 3 * threads * plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const uint64_t points[3] = {plan[i].lead_begin, plan[i].begin, plan[i].end};
    for (int k = 0; k < 3; ++k) {
      std::vector<uint32_t> before(threads, 0);
      for (uint64_t g = 0; g < points[k]; ++g) {
        ++before[l.schedule.stream_of[l.program.op_threads[g]]];
      }
      for (uint32_t t = 0; t < threads; ++t) {
        EXPECT_EQ(states.thread_bounds[(i * threads + t) * 3 + k], before[t]);
      }
    }
  }
  ASSERT_FALSE(states.objects.empty());  // the second window starts with a live heap
  for (size_t k = 0; k < states.objects.size(); ++k) {
    const uint64_t g = states.object_ops[k];
    const uint32_t t = l.schedule.stream_of[l.program.op_threads[g]];
    EXPECT_EQ(states.object_threads[k], t);
    uint32_t local = 0;
    for (uint64_t h = 0; h < g; ++h) local += l.schedule.stream_of[l.program.op_threads[h]] == t;
    EXPECT_EQ(states.object_slots[k], l.schedule.streams[t].ops[local].object);
  }
}

// The schedule's checkpoints (each stream's ops before every
// kStreamCountEvery-th op) are each stream's ops before them, and a walk
// that starts from them finds the bounds and slots a walk from the
// trace's first op finds.
TEST(AddThreadStartsTest, TheCheckpointsGiveWhatAWalkFromTheFirstOpGives) {
  const Loaded l = Load("traces/larson.trace");
  const uint64_t n = l.program.ops.size();
  ASSERT_GT(n, kStreamCountEvery + 10000);
  const uint32_t threads = static_cast<uint32_t>(l.schedule.streams.size());
  ASSERT_GT(threads, 1u);
  ASSERT_EQ(l.schedule.stream_counts.size(), (n / kStreamCountEvery + 1) * threads);
  std::vector<uint32_t> before(threads, 0);
  for (uint64_t g = 0; g < n; ++g) {
    if (g % kStreamCountEvery == 0) {
      for (uint32_t t = 0; t < threads; ++t) {
        EXPECT_EQ(l.schedule.stream_counts[g / kStreamCountEvery * threads + t], before[t]) << g;
      }
    }
    ++before[l.schedule.stream_of[l.program.op_threads[g]]];
  }
  // A window before the checkpoint at kStreamCountEvery, one starting on
  // it, one past it.
  const uint64_t c = kStreamCountEvery;
  const std::vector<ReplayWindow> plan = {{c / 2, c / 2 + 1000, c / 2 + 9000, 1},
                                          {c, c + 100, c + 3000, 1},
                                          {c + 5000, c + 6000, n, 1}};
  WindowStates with = StartStates(ViewOf(l.program), plan);
  WindowStates without = with;
  AddThreadStarts(l.program, l.schedule, plan, &with);
  ThreadSchedule walked = l.schedule;
  walked.stream_counts.clear();
  AddThreadStarts(l.program, walked, plan, &without);
  ASSERT_FALSE(with.objects.empty());
  EXPECT_EQ(with.thread_bounds, without.thread_bounds);
  EXPECT_EQ(with.object_slots, without.object_slots);
  EXPECT_EQ(with.object_threads, without.object_threads);
  ASSERT_EQ(with.leftovers.size(), without.leftovers.size());
  EXPECT_EQ(with.leftover_end, without.leftover_end);
}

// Every window of several plans replayed per thread through the checked
// malloc: no call names a block wrongly, and nothing is left live after a
// run (the leftovers freed with their sizes); then through a thread-safe
// pool. The estimate stands for the whole trace's memory ops (each
// window's weight rounded).
TEST(ReplayPerThreadWindowsWithTest, WindowsOfRealTracesFreeWhatTheyAllocate) {
  for (const char* path : {"traces/producer_consumer.trace", "traces/thread_map_churn.trace",
                           "traces/larson.trace", "traces/migration.trace"}) {
    SCOPED_TRACE(path);
    const Loaded l = Load(path);
    if (l.schedule.streams.size() < 2) continue;
    const ReplayView view = ViewOf(l.program);
    const WindowShape shape = ShapeFor(view.num_ops);  // rebuilt windows
    const std::vector<uint64_t> weights = StratumWeights(view, shape);
    for (int round = 0; round < 3; ++round) {
      const std::vector<ReplayWindow> plan = PlanWindows(view.num_ops, shape, weights, 7, round);
      const WindowStatesView states = Shared(l, plan);
      RunOptions options;
      options.touch = Touch::kProgram;
      CheckedAllocator::Reset();
      const RunResult r = ReplayPerThreadWindowsWith<CheckedAllocator>(view, ViewOf(l.schedule),
                                                                       plan, states, options);
      ASSERT_EQ(r.error, "");
      EXPECT_TRUE(CheckedAllocator::errors.empty()) << CheckedAllocator::errors[0];
      EXPECT_TRUE(CheckedAllocator::live.empty()) << CheckedAllocator::live.size() << " left";
      ASSERT_EQ(r.windows.size(), plan.size());
      // Weights scaled to the trace's memory ops, each rounded.
      EXPECT_NEAR(static_cast<double>(r.ops), static_cast<double>(l.program.memory_ops()),
                  static_cast<double>(plan.size()));
      EXPECT_EQ(r.threads, l.schedule.streams.size());
      const RunResult pool =
          ReplayPerThreadWindowsWith<MtStackPool>(view, ViewOf(l.schedule), plan, states, options);
      EXPECT_EQ(pool.error, "");
    }
  }
}

// One window over the whole trace, from its start, times every memory op.
TEST(ReplayPerThreadWindowsWithTest, OneWindowOverTheWholeTraceTimesEveryMemoryOp) {
  const Loaded l = Load("traces/thread_map_churn.trace");
  const ReplayView view = ViewOf(l.program);
  const std::vector<ReplayWindow> whole = {{0, 0, view.num_ops, l.program.memory_ops()}};
  CheckedAllocator::Reset();
  const RunResult r = ReplayPerThreadWindowsWith<CheckedAllocator>(view, ViewOf(l.schedule), whole,
                                                                   Shared(l, whole), RunOptions());
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(CheckedAllocator::errors.empty());
  EXPECT_TRUE(CheckedAllocator::live.empty());
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].ops, l.program.memory_ops());
  EXPECT_GT(r.passes[0].cpu_seconds, 0);
  EXPECT_GT(r.passes[0].wall_seconds, 0);
}

// In a child about to end (process_ends_after), the last window's heap is
// left to the process's end: every block it left (its leftovers still
// there) is still allocated after the run, where a run that frees it
// leaves none, and the windows are the same. Run in a process of its own
// (the heap is never freed), which reports by its exit status.
TEST(ReplayPerThreadWindowsWithTest, TheLastWindowsHeapIsLeftToAChildsEnd) {
  const Loaded l = Load("traces/thread_map_churn.trace");
  const ReplayView view = ViewOf(l.program);
  const WindowShape shape = ShapeFor(view.num_ops);  // rebuilt windows
  // The first half of a plan, so that the last window ends mid-trace.
  std::vector<ReplayWindow> plan =
      PlanWindows(view.num_ops, shape, StratumWeights(view, shape), 3, 0);
  plan.resize(std::max<size_t>(plan.size() / 2, 1));
  const WindowStatesView states = Shared(l, plan);
  const StateRef last = StateOf(states, plan.size() - 1);
  size_t left = 0;
  for (size_t k = 0; k < last.num_leftovers; ++k) left += last.leftovers[k].gone == 0;
  ASSERT_GT(left, 0u);
  RunOptions options;
  options.touch = Touch::kProgram;
  CheckedAllocator::Reset();
  const RunResult freed =
      ReplayPerThreadWindowsWith<CheckedAllocator>(view, ViewOf(l.schedule), plan, states, options);
  ASSERT_EQ(freed.error, "");
  EXPECT_TRUE(CheckedAllocator::live.empty());
  options.process_ends_after = true;
  EXPECT_EXIT(
      {
        CheckedAllocator::Reset();
        const RunResult kept = ReplayPerThreadWindowsWith<CheckedAllocator>(
            view, ViewOf(l.schedule), plan, states, options);
        bool same = kept.error.empty() && kept.windows.size() == freed.windows.size();
        for (size_t i = 0; same && i < kept.windows.size(); ++i) {
          same = kept.windows[i].ops == freed.windows[i].ops;
        }
        const bool still_allocated =
            CheckedAllocator::errors.empty() && CheckedAllocator::live.size() == left;
        std::_Exit(!same ? 1 : !still_allocated ? 2 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

// A run without the per-thread states (a serialized run's, or none) fails
// with a message, never replays with wrong slots.
TEST(ReplayPerThreadWindowsWithTest, WithoutPerThreadStatesTheRunFails) {
  const Loaded l = Load("traces/producer_consumer.trace");
  const ReplayView view = ViewOf(l.program);
  const std::vector<ReplayWindow> plan = {{0, 0, view.num_ops / 2, 1}};
  const WindowStates serial = StartStates(view, plan);
  const RunResult r = ReplayPerThreadWindowsWith<allocators::MallocAllocator>(
      view, ViewOf(l.schedule), plan, ViewOf(serial), RunOptions());
  EXPECT_EQ(r.error, "a per-thread windowed run needs its windows' per-thread start states");
}

// Each stream's ops before a point of the trace, as a walk of the op
// threads counts them, whatever checkpoint the count starts from.
TEST(StreamOpsBeforeTest, CountsEachStreamsOpsBeforeAPoint) {
  const Loaded l = Load("traces/producer_consumer.trace");
  const uint64_t n = l.program.ops.size();
  const uint32_t threads = static_cast<uint32_t>(l.schedule.streams.size());
  for (uint64_t at : {uint64_t{0}, uint64_t{1}, n / 3, n / 2, n - 1, n, n + 5}) {
    std::vector<uint32_t> before(threads, 0);
    for (uint64_t g = 0; g < std::min(at, n); ++g) {
      ++before[l.schedule.stream_of[l.program.op_threads[g]]];
    }
    EXPECT_EQ(StreamOpsBefore(l.program, l.schedule, at), before) << at;
  }
}

// A cycle of served windows of a per-thread trace (thread_window_server.h),
// in a process of its own (the server leaves its heap to its end), through
// the checked malloc: every free and realloc names a block live with its
// size and arena, so the streams replay the whole trace in order across
// the windows; each window has its figures; a window behind the replay is
// refused.
TEST(ServeThreadWindowsWithTest, ACycleIsServedAndEveryFreeIsOfALiveBlock) {
  const Loaded l = Load("traces/producer_consumer.trace");
  const ReplayView view = ViewOf(l.program);
  const WindowShape shape = ServedShape(view.num_ops);
  const std::vector<uint64_t> weights = StratumWeights(view, shape);
  std::vector<ReplayWindow> windows;
  std::string requests;
  for (int round = 0; round < shape.strata; ++round) {
    const std::vector<ReplayWindow> plan = PlanWindows(view.num_ops, shape, weights, 1, round);
    ASSERT_EQ(plan.size(), 1u);
    windows.push_back(plan[0]);
    const std::vector<uint32_t> begin = StreamOpsBefore(l.program, l.schedule, plan[0].begin);
    const std::vector<uint32_t> end = StreamOpsBefore(l.program, l.schedule, plan[0].end);
    std::string line = WindowsWord(plan);
    for (size_t t = 0; t < begin.size(); ++t) {
      absl::StrAppend(&line, t == 0 ? ";" : ",", begin[t], ",", end[t]);
    }
    absl::StrAppend(&requests, line, "\n");
  }
  absl::StrAppend(&requests, requests.substr(0, requests.find('\n') + 1));  // behind
  int commands[2], results[2];
  ASSERT_EQ(pipe(commands), 0);
  ASSERT_EQ(pipe(results), 0);
  ASSERT_EQ(write(commands[1], requests.data(), requests.size()),
            static_cast<ssize_t>(requests.size()));
  close(commands[1]);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(results[0]);
    CheckedAllocator::Reset();
    RunOptions options;
    options.process_ends_after = true;
    const int status = ServeThreadWindowsWith<CheckedAllocator>(view, ViewOf(l.schedule), options,
                                                                commands[0], results[1]);
    _exit(status != 0 ? 10 : CheckedAllocator::errors.empty() ? 0 : 11);
  }
  close(commands[0]);
  close(results[1]);
  std::string rest;
  std::vector<absl::StatusOr<RunResult>> framed = ReadFramedAnswers(results[0], &rest);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: the server failed; 11: a free of a block not live";
  std::vector<RunResult> answers;
  for (absl::StatusOr<RunResult>& r : framed) {
    ASSERT_TRUE(r.ok()) << r.status();
    answers.push_back(*std::move(r));
  }
  ASSERT_EQ(answers.size(), windows.size() + 1);
  for (size_t i = 0; i < windows.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(answers[i].error.empty()) << answers[i].error;
    ASSERT_EQ(answers[i].windows.size(), 1u);
    EXPECT_EQ(answers[i].windows[0].ops, MemoryOpsIn(view, windows[i].begin, windows[i].end));
    EXPECT_EQ(answers[i].threads, l.schedule.streams.size());
    EXPECT_GT(answers[i].passes[0].cpu_seconds, 0);
  }
  EXPECT_NE(answers.back().error.find("before the replay's position"), std::string::npos)
      << answers.back().error;
}

}  // namespace
}  // namespace alloctrace
