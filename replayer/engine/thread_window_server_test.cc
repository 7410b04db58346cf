#include "alloctrace/replayer/engine/thread_window_server.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result_wire_testing.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/engine/windows.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// glibc malloc that checks every call against the blocks it has handed
// out (from any thread): a free or realloc must name a live block with the
// size and arena it was allocated with.
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
    ASSERT_FALSE(answers[i].error.failed()) << answers[i].error.words;
    ASSERT_EQ(answers[i].windows.size(), 1u);
    EXPECT_EQ(answers[i].windows[0].ops, MemoryOpsIn(view, windows[i].begin, windows[i].end));
    EXPECT_EQ(answers[i].threads, l.schedule.streams.size());
    EXPECT_GT(answers[i].passes[0].cpu_seconds, 0);
  }
  EXPECT_NE(answers.back().error.words.find("before the replay's position"), std::string::npos)
      << answers.back().error.words;
}

}  // namespace
}  // namespace alloctrace
