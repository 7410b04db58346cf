// The replay harness's floor, measured in-process over many repetitions:
// ReplayWith's timed loop with an allocator that does almost nothing (a
// bump pointer into one buffer faulted in once, reset between runs), so
// what is left is the loop itself: reading ops, the pointer table and the
// touch of each block.
//
//   bazel run //replayer/engine:replay_benchmark
#include <sys/mman.h>

#include <cstdint>
#include <string>

#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "benchmark/benchmark.h"

namespace alloctrace {
namespace {

// One 256 MiB buffer, faulted in once per process, shared by every run.
class FloorBump {
 public:
  static constexpr size_t kBytes = size_t{256} << 20;
  FloorBump() : cursor_(Base()) {}
  void* Allocate(size_t bytes, size_t align, uint32_t) {
    const uintptr_t p = (cursor_ + align - 1) & ~(align - 1);
    cursor_ = p + bytes + (bytes == 0);
    return reinterpret_cast<void*>(p);
  }
  void Deallocate(void*, size_t, size_t, uint32_t) {}
  void* Reallocate(void*, size_t, size_t new_bytes, size_t align, uint32_t a) {
    return Allocate(new_bytes, align, a);
  }
  void ArenaCreated(uint32_t) {}
  void ArenaDestroyed(uint32_t) {}

 private:
  static uintptr_t Base() {
    static void* const base = [] {
      void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      return p == MAP_FAILED ? nullptr : p;
    }();
    return reinterpret_cast<uintptr_t>(base);
  }
  uintptr_t cursor_;
};

void BM_HarnessFloor(benchmark::State& state, const std::string& trace, Touch touch) {
  absl::StatusOr<ReplayProgram> program = LoadReplayProgram(trace);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  RunOptions options;
  options.touch = touch;
  options.rss_samples = 1;
  uint64_t ops = 0;
  for (auto _ : state) {
    const RunResult r = ReplayWith<FloorBump>(ViewOf(*program), options);
    state.SetIterationTime(r.seconds);
    ops += r.ops;
  }
  state.counters["ns/op"] = benchmark::Counter(
      static_cast<double>(ops), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(BM_HarnessFloor, simple_map_touch_none, "traces/simple_map.trace", Touch::kNone)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_HarnessFloor, simple_map_touch_first, "traces/simple_map.trace", Touch::kFirst)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_HarnessFloor, bulk_touch_none, "traces/bulk.trace", Touch::kNone)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_HarnessFloor, bulk_touch_first, "traces/bulk.trace", Touch::kFirst)
    ->UseManualTime();

// A pool policy through the replay adapter (PoolPolicyAllocator, the
// catalog's one template): one cold pass, then three warm passes, timed
// by thread CPU time; ns/op of the warm passes. Run before and after a
// change to the adapter to see that it costs the loop nothing.
using SlabSingle = allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>;
using SmallNodeStack = allocators::PoolPolicyAllocator<
    pool::SmallNodeAllocator<std::byte, pool::SingleThreaded, pool::HoldingStack>>;
using BoundaryStack =
    allocators::ArticlePoolAllocator<pool::StorageBoundary, pool::GrowthExponential,
                                     pool::SingleThreaded, pool::HoldingStack, true>;
using SimpleSingle =
    allocators::ArticlePoolAllocator<pool::StorageSimple, pool::GrowthExponential,
                                     pool::SingleThreaded, pool::HoldingSingleton, true>;

template <typename A>
void BM_Policy(benchmark::State& state, const std::string& trace) {
  absl::StatusOr<ReplayProgram> program = LoadReplayProgram(trace);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  RunOptions options;
  options.touch = Touch::kFirst;
  options.rss_samples = 1;
  options.max_passes = 4;
  options.min_warm_seconds = 0;
  uint64_t ops = 0;
  for (auto _ : state) {
    const RunResult r = ReplayWith<A>(ViewOf(*program), options);
    double cpu = 0;
    for (size_t i = 1; i < r.passes.size(); ++i) cpu += r.passes[i].cpu_seconds;
    state.SetIterationTime(cpu);
    ops += r.ops * (r.passes.size() - 1);
  }
  state.counters["ns/op"] = benchmark::Counter(
      static_cast<double>(ops), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

template <typename A>
bool RegisterPolicy(const std::string& name) {
  for (const std::string trace : {"simple_map", "swap_splice"}) {
    benchmark::RegisterBenchmark(("BM_Policy/" + name + "/" + trace).c_str(),
                                 [path = "traces/" + trace + ".trace"](benchmark::State& state) {
                                   BM_Policy<A>(state, path);
                                 })
        ->UseManualTime();
  }
  return true;
}

const bool kRegistered = RegisterPolicy<SlabSingle>("slab_st_single") &&
                         RegisterPolicy<SmallNodeStack>("small_node_st_stack") &&
                         RegisterPolicy<BoundaryStack>("boundary_exp_st_stack") &&
                         RegisterPolicy<SimpleSingle>("simple_exp_st_single");

}  // namespace
}  // namespace alloctrace

BENCHMARK_MAIN();
