#include "alloctrace/replayer/engine/window_server.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result_wire.h"
#include "alloctrace/replayer/engine/run_result_wire_testing.h"
#include "alloctrace/replayer/engine/windows.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using SlabSingle = allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>;

// Serves `requests` (one a line) through A on this thread, the pipes
// holding them all; returns the answers and sets *status to the server's.
template <typename A>
std::vector<RunResult> Serve(const ReplayView& program, const std::vector<std::string>& requests,
                             int* status) {
  int commands[2], results[2];
  EXPECT_EQ(pipe2(commands, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(results, O_CLOEXEC), 0);
  for (const std::string& r : requests) {
    const std::string line = r + "\n";
    EXPECT_EQ(write(commands[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  close(commands[1]);
  *status = ServeWindowsWith<A>(program, RunOptions(), commands[0], results[1]);
  close(commands[0]);
  close(results[1]);
  std::string rest;
  std::vector<RunResult> answers;
  for (absl::StatusOr<RunResult>& r : ReadFramedAnswers(results[0], &rest)) {
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) answers.push_back(*std::move(r));
  }
  EXPECT_TRUE(rest.empty()) << "a partial answer: " << rest;
  return answers;
}

// A cycle of rounds over a real trace: each window timed from the heap
// the replay made up to it, its figures standing for the whole trace; a
// window behind the replay's position is refused, and ends the server.
template <typename A>
void ExpectACycleServed(const char* path) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  ASSERT_TRUE(p.ok()) << p.status();
  const ReplayView view = ViewOf(*p);
  const WindowShape shape = ServedShape(view.num_ops);
  ASSERT_TRUE(shape.served);
  const std::vector<uint64_t> weights = StratumWeights(view, shape);
  std::vector<std::string> requests;
  std::vector<ReplayWindow> windows;
  for (int round = 0; round < shape.strata; ++round) {
    const std::vector<ReplayWindow> plan = PlanWindows(view.num_ops, shape, weights, 1, round);
    ASSERT_EQ(plan.size(), 1u);
    windows.push_back(plan[0]);
    requests.push_back(WindowsWord(plan));
  }
  requests.push_back(requests.front());  // behind the replay: refused
  requests.push_back(requests.back());   // never read: the server has ended
  int status = -1;
  const std::vector<RunResult> answers = Serve<A>(view, requests, &status);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(answers.size(), windows.size() + 1);
  for (size_t i = 0; i < windows.size(); ++i) {
    SCOPED_TRACE(i);
    const RunResult& r = answers[i];
    ASSERT_FALSE(r.error.failed()) << r.error.words;
    ASSERT_EQ(r.windows.size(), 1u);
    EXPECT_EQ(r.windows[0].ops, MemoryOpsIn(view, windows[i].begin, windows[i].end));
    EXPECT_EQ(r.ops, p->memory_ops());  // one stratum's window weighs the trace
    ASSERT_EQ(r.passes.size(), 1u);
    EXPECT_GT(r.passes[0].cpu_seconds, 0);
    EXPECT_GE(r.peak_rss, 0);
  }
  EXPECT_TRUE(absl::StrContains(answers.back().error.words, "before the replay's position"))
      << answers.back().error.words;
}

TEST(ServeWindowsWithTest, MallocAndAPoolServeACycleOfRealTraces) {
  for (const char* path : {"traces/simple_map.trace", "traces/random.trace",
                           "traces/swap_splice.trace", "traces/list_churn.trace"}) {
    SCOPED_TRACE(path);
    ExpectACycleServed<allocators::MallocAllocator>(path);
    ExpectACycleServed<SlabSingle>(path);
  }
}

TEST(ServeWindowsWithTest, AMalformedRequestIsAnsweredWithAnError) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/random.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  int status = -1;
  const std::vector<RunResult> answers =
      Serve<SlabSingle>(ViewOf(*p), {"0:10:20:5,20:30:40:5"}, &status);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(absl::StrContains(answers[0].error.words, "is not one window"))
      << answers[0].error.words;
}

TEST(ServeWindowsWithTest, NoRequestsNoAnswers) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/random.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  int status = -1;
  EXPECT_TRUE(Serve<SlabSingle>(ViewOf(*p), {}, &status).empty());
  EXPECT_EQ(status, 0);
}

TEST(FramedRunResultTest, AnAnswerIsTakenOnlyWhenAllOfItIsThere) {
  RunResult r;
  r.error = {RunErrorKind::kOpFailed, "allocation of 8 bytes failed at op 7"};
  const std::string framed = FramedRunResult(r) + FramedRunResult(RunResult());
  std::string words;
  size_t used = 0;
  for (size_t cut = 0; cut < framed.size() / 2; ++cut) {
    if (TakeFramedWords(framed.substr(0, cut), &words, &used)) {
      EXPECT_EQ(words, SerializeRunResult(r));  // complete once its words are
      EXPECT_LE(used, cut);
    }
  }
  ASSERT_TRUE(TakeFramedWords(framed, &words, &used));
  absl::StatusOr<RunResult> back = ParseRunResult(words);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->error.words, r.error.words);
  EXPECT_EQ(back->error.Kind(), RunErrorKind::kOpFailed);
  ASSERT_TRUE(TakeFramedWords(framed.substr(used), &words, &used));
  EXPECT_FALSE(TakeFramedWords("12", &words, &used));
  EXPECT_FALSE(TakeFramedWords("x\nabc", &words, &used));
}

}  // namespace
}  // namespace alloctrace
