#include "alloctrace/replayer/engine/windows.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/window_loop.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using SlabSingle = allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>;

TEST(WindowShapeTest, AWindowIsAnEighthOfTheTraceOverItsStrataWithinBounds) {
  EXPECT_EQ(ShapeFor(100'000).window_ops, 4096u);  // never shorter
  EXPECT_EQ(ShapeFor(1'000'000).window_ops, 1'000'000u / 128);
  EXPECT_EQ(ShapeFor(100'000'000).window_ops, 65536u);  // never longer
  EXPECT_EQ(ShapeFor(1'000'000).lead_ops, ShapeFor(1'000'000).window_ops / 4);
  EXPECT_EQ(ShapeFor(1'000'000).strata, 16);
  EXPECT_FALSE(ShapeFor(1'000'000).served);
}

// A large live heap beside the window (rebuilding it would cost more than
// half the ops a window times), and a per-thread replay of any number of
// threads: served windows.
TEST(WindowShapeTest, ALargeLiveHeapAndAPerThreadReplayAreServed) {
  // 17 M ops, 100,000 objects and 100,000 arenas live, beside windows of
  // 65536 ops.
  const WindowShape big = ShapeFor(17'000'000, 200'000);
  EXPECT_TRUE(big.served);
  EXPECT_EQ(big.strata, ServedShape(17'000'000).strata);
  EXPECT_EQ(big.window_ops, ServedShape(17'000'000).window_ops);
  // A heap under half a window changes nothing.
  EXPECT_FALSE(ShapeFor(17'000'000, 32'768).served);
  EXPECT_EQ(ShapeFor(17'000'000, 32'768).window_ops, 65536u);
  EXPECT_EQ(ShapeFor(17'000'000, 32'768).strata, 16);
  EXPECT_TRUE(ShapeFor(17'000'000, 32'769).served);
  // Per thread, whatever the heap.
  for (const uint64_t n : {uint64_t{100'000}, uint64_t{1'000'000}, uint64_t{17'000'000}}) {
    const WindowShape per_thread = ShapeFor(n, 0, /*per_thread=*/true);
    EXPECT_TRUE(per_thread.served);
    EXPECT_EQ(per_thread.strata, ServedShape(n).strata);
    EXPECT_EQ(per_thread.lead_ops, ServedShape(n).lead_ops);
  }
}

// Served windows: strata of a quarter million ops or more, 4 to 32 of
// them, each timed after its first quarter.
TEST(WindowShapeTest, ServedWindowsAreThreeQuartersOfTheirStrata) {
  const WindowShape big = ServedShape(17'000'000);
  EXPECT_TRUE(big.served);
  EXPECT_EQ(big.strata, 32);  // not 64: a cycle of rounds is one replay
  EXPECT_EQ(big.lead_ops, 17'000'000u / 32 / 4);
  EXPECT_EQ(big.lead_ops + big.window_ops, 17'000'000u / 32);
  EXPECT_EQ(ServedShape(4'000'000).strata, 15);
  EXPECT_EQ(ServedShape(60'000).strata, 4);  // never fewer
  // A served round replays a stratum, rebuilding nothing.
  EXPECT_EQ(WindowedRunOps(big, 5'000'000), 17'000'000u / 32);
}

// A rebuilt run replays a window of every stratum, every round.
TEST(StrataOfRoundTest, RebuiltWindowsTakeEveryStratumEveryRound) {
  WindowShape shape = ShapeFor(1'000'000);
  shape.strata = 7;
  for (int round : {-1, 0, 3}) {
    EXPECT_EQ(StrataOfRound(shape, round), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  }
  EXPECT_EQ(WindowedRunOps(shape, 100), 7 * (100 + shape.lead_ops + shape.window_ops));
}

// A served replay only runs forward: the rounds take the strata in trace
// order, a cycle of rounds at a time.
TEST(StrataOfRoundTest, ServedWindowsTakeTheStrataInTraceOrder) {
  WindowShape shape = ServedShape(17'000'000);
  shape.strata = 5;
  std::vector<int> order;
  for (int round = 0; round < 11; ++round) order.push_back(StrataOfRound(shape, round)[0]);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0}));
  EXPECT_EQ(StrataOfRound(shape, -1), std::vector<int>{4});  // a screen's rounds
}

// A served window is its stratum after the stratum's first quarter, and
// stands for the whole trace.
TEST(PlanWindowsTest, AServedWindowIsItsStratumAfterItsFirstQuarter) {
  const uint64_t n = 17'000'003;
  const WindowShape shape = ServedShape(n);
  std::vector<uint64_t> weights(shape.strata, 1000);
  weights[3] = 4000;
  const uint64_t total = 1000 * (shape.strata - 1) + 4000;
  for (int round = 0; round < shape.strata; ++round) {
    const std::vector<ReplayWindow> plan = PlanWindows(n, shape, weights, 5, round);
    ASSERT_EQ(plan.size(), 1u);
    const uint64_t from = n * round / shape.strata, to = n * (round + 1) / shape.strata;
    EXPECT_EQ(plan[0].lead_begin, from);
    EXPECT_EQ(plan[0].begin, from + (to - from) / 4);
    EXPECT_EQ(plan[0].end, to);
    EXPECT_EQ(plan[0].weight, total);
    // The same for every seed: nothing is drawn.
    EXPECT_EQ(WindowsWord(PlanWindows(n, shape, weights, 6, round)), WindowsWord(plan));
  }
}

TEST(PlanWindowsTest, OneWindowPerStratumInsideIt) {
  const uint64_t n = 1'000'000;
  const WindowShape shape = ShapeFor(n);
  const std::vector<uint64_t> weights(shape.strata, n / shape.strata);
  const std::vector<ReplayWindow> plan = PlanWindows(n, shape, weights, 7, 3);
  ASSERT_EQ(plan.size(), 16u);
  uint64_t previous_end = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const ReplayWindow& w = plan[i];
    EXPECT_GE(w.begin, n * i / 16);
    EXPECT_LE(w.end, n * (i + 1) / 16);
    EXPECT_EQ(w.end - w.begin, shape.window_ops);
    EXPECT_GE(w.lead_begin, previous_end);  // no lead-in reaches the window before
    EXPECT_LE(w.begin - w.lead_begin, shape.lead_ops);
    EXPECT_EQ(w.weight, weights[i]);
    previous_end = w.end;
  }
}

TEST(PlanWindowsTest, TheSamePlanForEveryContenderOfARoundAndANewOneEachRound) {
  const uint64_t n = 2'000'000;
  const WindowShape shape = ShapeFor(n);
  const std::vector<uint64_t> weights(shape.strata, 1);
  const auto begins = [&](uint64_t seed, int round) {
    std::vector<uint64_t> b;
    for (const ReplayWindow& w : PlanWindows(n, shape, weights, seed, round)) b.push_back(w.begin);
    return b;
  };
  EXPECT_EQ(begins(1, 4), begins(1, 4));
  EXPECT_NE(begins(1, 4), begins(1, 5));
  EXPECT_NE(begins(1, 4), begins(2, 4));
}

TEST(PlanWindowsTest, AStratumShorterThanAWindowIsTimedWhole) {
  const WindowShape shape = ShapeFor(16 * 1000);  // 4096-op windows, 1000-op strata
  const std::vector<ReplayWindow> plan =
      PlanWindows(16 * 1000, shape, std::vector<uint64_t>(16, 900), 1, 1);
  ASSERT_EQ(plan.size(), 16u);
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i].begin, i * 1000);
    EXPECT_EQ(plan[i].end, (i + 1) * 1000);
    EXPECT_EQ(plan[i].lead_begin, plan[i].begin);  // the previous window ends there
  }
}

TEST(WindowsWordTest, ReadsBackAndRefusesWhatIsNotAPlan) {
  const std::vector<ReplayWindow> plan = {{0, 10, 20, 15}, {25, 30, 40, 16}};
  absl::StatusOr<std::vector<ReplayWindow>> back = ParseWindowsWord(WindowsWord(plan), 40);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].lead_begin, 25u);
  EXPECT_EQ((*back)[1].weight, 16u);
  EXPECT_FALSE(ParseWindowsWord(WindowsWord(plan), 39).ok());         // past the trace's end
  EXPECT_FALSE(ParseWindowsWord("0:10:20:15,15:30:40:16", 40).ok());  // overlaps
  EXPECT_FALSE(ParseWindowsWord("0:20:10:15", 40).ok());              // ends before it begins
  EXPECT_FALSE(ParseWindowsWord("0:10:20", 40).ok());
  EXPECT_FALSE(ParseWindowsWord("", 40).ok());
}

// The state at `at` computed the slow way: every op up to it applied to maps.
TraceState NaiveStateAt(const ReplayProgram& p, uint64_t at) {
  std::map<uint32_t, std::pair<uint64_t, LiveObject>> live;  // by id: (allocated at, object)
  std::map<uint32_t, uint64_t> arenas;                       // by id: created at
  size_t realloc_index = 0;
  auto size_of = [&](const ReplayOp& o) -> uint64_t {
    return o.bytes != kBigSize ? o.bytes : p.big_sizes[o.aux];
  };
  for (uint64_t i = 0; i < at; ++i) {
    const ReplayOp& op = p.ops[i];
    switch (op.kind) {
      case ReplayKind::kAlloc:
      case ReplayKind::kAllocZeroed:
        live[op.object] = {i, LiveObject{op.object, op.arena, size_of(op), op.align_log2}};
        break;
      case ReplayKind::kFree:
        live.erase(op.object);
        break;
      case ReplayKind::kRealloc: {
        const ReallocInfo& info = p.reallocs[realloc_index++];
        live.erase(info.old_object);
        live[op.object] = {i, LiveObject{op.object, op.arena, info.new_bytes, op.align_log2}};
        break;
      }
      case ReplayKind::kArenaCreate:
        arenas.emplace(op.arena, i);
        break;
      case ReplayKind::kArenaDestroy:
        arenas.erase(op.arena);
        break;
    }
  }
  TraceState s;
  s.realloc_index = realloc_index;
  std::vector<std::pair<uint64_t, LiveObject>> objects;
  for (const auto& [id, entry] : live) objects.push_back(entry);
  std::sort(objects.begin(), objects.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [at_op, o] : objects) s.objects.push_back(o);
  std::vector<std::pair<uint64_t, uint32_t>> created;
  for (const auto& [id, at_op] : arenas) created.emplace_back(at_op, id);
  std::sort(created.begin(), created.end());
  for (const auto& [at_op, id] : created) s.arenas.push_back(id);
  return s;
}

// The arenas a window leaves, worked out from its start state and its ops,
// are the trace's at its end; the shared start states are the scanner's.
TEST(WindowStatesTest, StartStatesAndArenasAfterAreTheTraces) {
  for (const char* path :
       {"traces/swap_splice.trace", "traces/random.trace", "traces/records_pod_vector.trace"}) {
    SCOPED_TRACE(path);
    absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
    ASSERT_TRUE(p.ok()) << p.status();
    const ReplayView view = ViewOf(*p);
    const std::vector<ReplayWindow> plan = PlanWindows(
        view.num_ops, ShapeFor(view.num_ops), StratumWeights(view, ShapeFor(view.num_ops)), 3, 1);
    const WindowStates states = StartStates(view, plan);
    ASSERT_EQ(ViewOf(states).windows, plan.size());
    for (size_t i = 0; i < plan.size(); ++i) {
      const StateRef start = StateOf(ViewOf(states), i);
      const TraceState naive = NaiveStateAt(*p, plan[i].lead_begin);
      ASSERT_EQ(start.num_objects, naive.objects.size());
      for (size_t k = 0; k < start.num_objects; ++k) {
        EXPECT_EQ(start.objects[k].object, naive.objects[k].object);
      }
      EXPECT_EQ(std::vector<uint32_t>(start.arenas, start.arenas + start.num_arenas), naive.arenas);
      EXPECT_EQ(start.realloc_index, naive.realloc_index);
      std::vector<uint32_t> after = ArenasAfter(view, start, plan[i].lead_begin, plan[i].end);
      std::vector<uint32_t> expected = NaiveStateAt(*p, plan[i].end).arenas;
      std::sort(after.begin(), after.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(after, expected);
    }
  }
}

TEST(WindowStatesTest, AMalformedSharingIsRefused) {
  absl::StatusOr<int> fd = ShareReplayView(ReplayView());
  ASSERT_TRUE(fd.ok());
  EXPECT_FALSE(MapSharedWindowStates(*fd).ok());
  close(*fd);
}

class StateScannerTest : public testing::TestWithParam<const char*> {};

TEST_P(StateScannerTest, TheStateAtAnyPointIsWhatTheOpsBeforeItLeft) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(GetParam());
  ASSERT_TRUE(p.ok()) << p.status();
  const ReplayView view = ViewOf(*p);
  StateScanner scanner(view);
  for (uint64_t at : {uint64_t{0}, p->ops.size() / 7, p->ops.size() / 3, p->ops.size() / 2,
                      p->ops.size() - 1, p->ops.size()}) {
    const TraceState fast = scanner.StateAt(at);
    const TraceState slow = NaiveStateAt(*p, at);
    EXPECT_EQ(fast.realloc_index, slow.realloc_index) << at;
    EXPECT_EQ(fast.arenas, slow.arenas) << at;
    ASSERT_EQ(fast.objects.size(), slow.objects.size()) << at;
    for (size_t i = 0; i < fast.objects.size(); ++i) {
      EXPECT_EQ(fast.objects[i].object, slow.objects[i].object) << at << " #" << i;
      EXPECT_EQ(fast.objects[i].arena, slow.objects[i].arena);
      EXPECT_EQ(fast.objects[i].bytes, slow.objects[i].bytes);
      EXPECT_EQ(fast.objects[i].align_log2, slow.objects[i].align_log2);
    }
  }
}

// One arena; many arenas made and destroyed; reallocs (the records
// workloads grow vectors).
INSTANTIATE_TEST_SUITE_P(Traces, StateScannerTest,
                         testing::Values("traces/random.trace", "traces/swap_splice.trace",
                                         "traces/records_pod_vector.trace",
                                         "traces/array_butterfly.trace"));

TEST(StratumWeightsTest, TheStrataHoldEveryMemoryOpOnce) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/swap_splice.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<uint64_t> w = StratumWeights(ViewOf(*p), ShapeFor(p->ops.size()));
  EXPECT_EQ(std::accumulate(w.begin(), w.end(), uint64_t{0}), p->memory_ops());
}

// A windowed run through a real allocator: every window replayed from its
// rebuilt state without a failure, the estimate standing for the whole
// trace's memory ops.
template <typename A>
void ExpectWindowedRunOf(const char* path) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  ASSERT_TRUE(p.ok()) << p.status();
  const ReplayView view = ViewOf(*p);
  const WindowShape shape = ShapeFor(view.num_ops);
  const std::vector<uint64_t> weights = StratumWeights(view, shape);
  const std::vector<ReplayWindow> plan = PlanWindows(view.num_ops, shape, weights, 1, 2);
  RunOptions options;
  options.touch = Touch::kFirst;
  // The states as a child maps them from the parent's memfd.
  absl::StatusOr<int> fd = ShareWindowStates(StartStates(view, plan));
  ASSERT_TRUE(fd.ok()) << fd.status();
  absl::StatusOr<WindowStatesView> shared = MapSharedWindowStates(*fd);
  close(*fd);
  ASSERT_TRUE(shared.ok()) << shared.status();
  const RunResult own = ReplayWindowsWith<A>(view, plan, nullptr, options);
  ASSERT_FALSE(own.error.failed()) << own.error.words;
  const RunResult r = ReplayWindowsWith<A>(view, plan, &*shared, options);
  ASSERT_FALSE(r.error.failed()) << r.error.words;
  ASSERT_EQ(own.windows.size(), r.windows.size());
  for (size_t i = 0; i < r.windows.size(); ++i) EXPECT_EQ(own.windows[i].ops, r.windows[i].ops);
  ASSERT_TRUE(r.windowed());
  ASSERT_EQ(r.windows.size(), plan.size());
  EXPECT_EQ(r.ops, p->memory_ops());
  ASSERT_EQ(r.passes.size(), 1u);
  EXPECT_GT(r.passes[0].cpu_seconds, 0);
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_GT(r.windows[i].ops, 0u);
    EXPECT_LE(r.windows[i].ops, plan[i].end - plan[i].begin);
  }
}

TEST(ReplayWindowsWithTest, MallocAndAPoolReplayWindowsOfRealTraces) {
  for (const char* path : {"traces/random.trace", "traces/swap_splice.trace",
                           "traces/records_pod_vector.trace", "traces/array_butterfly.trace"}) {
    SCOPED_TRACE(path);
    ExpectWindowedRunOf<allocators::MallocAllocator>(path);
    ExpectWindowedRunOf<SlabSingle>(path);
  }
}

TEST(ReplayWindowsWithTest, OneWindowOverTheWholeTraceTimesEveryMemoryOp) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/list_churn.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  const ReplayView view = ViewOf(*p);
  const std::vector<ReplayWindow> whole = {{0, 0, view.num_ops, p->memory_ops()}};
  const RunResult r = ReplayWindowsWith<SlabSingle>(view, whole, nullptr, RunOptions());
  ASSERT_FALSE(r.error.failed()) << r.error.words;
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].ops, p->memory_ops());
  EXPECT_EQ(r.ops, p->memory_ops());
  EXPECT_DOUBLE_EQ(r.passes[0].wall_seconds, r.windows[0].figures.wall_seconds);
}

// Bytes glibc malloc has handed out, mapped blocks included.
size_t InUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// In a child about to end (process_ends_after), the last window's heap is
// left to the process's end: the same windows and ops as a run that frees
// it, and the blocks the last window left still allocated (so the run's
// final RSS holds them, as a whole run's holds what its pass left). Run in
// a process of its own (the heap is never freed), which reports by its
// exit status.
TEST(ReplayWindowsWithTest, TheLastWindowsHeapIsLeftToAChildsEnd) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "mallinfo2 does not see AddressSanitizer's heap";
#endif
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/random.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  const ReplayView view = ViewOf(*p);
  const WindowShape shape = ShapeFor(view.num_ops);
  // The first half of a plan, so that the last window ends mid-trace.
  std::vector<ReplayWindow> plan =
      PlanWindows(view.num_ops, shape, StratumWeights(view, shape), 1, 2);
  plan.resize(plan.size() / 2);
  RunOptions options;
  options.touch = Touch::kFirst;
  // The bytes live where the last window ends: what it leaves allocated.
  size_t live = 0;
  for (const LiveObject& o : StateScanner(view).StateAt(plan.back().end).objects) live += o.bytes;
  ASSERT_GT(live, 16384u);
  const size_t in_use = InUse();
  const RunResult freed =
      ReplayWindowsWith<allocators::MallocAllocator>(view, plan, nullptr, options);
  ASSERT_FALSE(freed.error.failed()) << freed.error.words;
  EXPECT_LT(InUse(), in_use + live / 2);
  options.process_ends_after = true;
  EXPECT_EXIT(
      {
        const size_t before = InUse();
        const RunResult left =
            ReplayWindowsWith<allocators::MallocAllocator>(view, plan, nullptr, options);
        bool same = !left.error.failed() && left.windows.size() == freed.windows.size();
        for (size_t i = 0; same && i < left.windows.size(); ++i) {
          same = left.windows[i].ops == freed.windows[i].ops;
        }
        const bool still_allocated = InUse() >= before + live / 2;
        std::_Exit(!same ? 1 : !still_allocated ? 2 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(WindowedEstimateTest, EachWindowScaledToItsStratum) {
  const std::vector<ReplayWindow> plan = {{0, 0, 10, 100}, {10, 20, 30, 300}};
  RunResult r;
  r.windows.resize(2);
  r.windows[0].ops = 10;
  r.windows[0].figures.wall_seconds = 1;  // 0.1 s per op, 100 ops: 10 s
  r.windows[0].figures.cpu_seconds = 0.5;
  r.windows[1].ops = 10;
  r.windows[1].figures.wall_seconds = 2;  // 0.2 s per op, 300 ops: 60 s
  r.windows[1].figures.cpu_seconds = 1;
  r.windows[1].figures.minor_faults = 5;
  WindowedEstimate(plan, &r);
  EXPECT_EQ(r.ops, 400u);
  ASSERT_EQ(r.passes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.passes[0].wall_seconds, 70);
  EXPECT_DOUBLE_EQ(r.passes[0].cpu_seconds, 35);
  EXPECT_EQ(r.passes[0].minor_faults, 150);
}

}  // namespace
}  // namespace alloctrace
