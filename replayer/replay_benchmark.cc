// The replay harness's floor, measured in-process over many repetitions:
// ReplayWith's timed loop with an allocator that does almost nothing (a
// bump pointer into one buffer faulted in once, reset between runs), so
// what is left is the loop itself: reading ops, the pointer table and the
// touch of each block.
//
//   bazel run //replayer:replay_benchmark
#include <sys/mman.h>

#include <cstdint>
#include <string>

#include "benchmark/benchmark.h"
#include "replayer/replay_loop.h"
#include "replayer/replay_program.h"

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
BENCHMARK_CAPTURE(BM_HarnessFloor, simple_map_touch_first, "traces/simple_map.trace",
                  Touch::kFirst)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_HarnessFloor, bulk_touch_none, "traces/bulk.trace", Touch::kNone)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_HarnessFloor, bulk_touch_first, "traces/bulk.trace", Touch::kFirst)
    ->UseManualTime();

}  // namespace
}  // namespace alloctrace

BENCHMARK_MAIN();
