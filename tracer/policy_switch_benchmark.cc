// What the ALLOCTRACE_POLICY switch costs: std::map insert/erase churn with
//   std::allocator                      vs TraceAllocator under `std`
//   SlabAllocator<T, SingleThreaded, HoldingSingleton>
//                                       vs TraceAllocator under `slab/st/single`
// The pairs differ only by the switch's branch and indirect call.
//
//   bazel run //tracer:policy_switch_benchmark -- --benchmark_repetitions=5
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "pool/pool_allocator.h"
#include "tracer/policy_switch.h"
#include "tracer/trace_allocator.h"

namespace alloctrace {
namespace {

constexpr int kLive = 4096;        // map size
constexpr int kOpsPerIter = 1024;  // erase + insert pairs per iteration

template <template <typename> class Alloc>
void Churn(benchmark::State& state) {
  using Map = std::map<int, int, std::less<int>, Alloc<std::pair<const int, int>>>;
  Map m;
  std::mt19937 rng(7);
  std::vector<int> keys(kLive);
  for (int i = 0; i < kLive; ++i) m.emplace(keys[i] = static_cast<int>(rng()), i);
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIter; ++i) {
      int& k = keys[rng() % kLive];
      m.erase(k);
      k = static_cast<int>(rng());
      m.emplace(k, i);
    }
    benchmark::DoNotOptimize(m.size());
  }
  state.counters["ns/op"] =
      benchmark::Counter(2.0 * kOpsPerIter * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

template <typename T>
using SlabSingle = pool::SlabAllocator<T, pool::SingleThreaded, pool::HoldingSingleton>;

void BM_StdAllocator(benchmark::State& state) { Churn<std::allocator>(state); }
void BM_SwitchStd(benchmark::State& state) {
  policy_switch::ForceForTesting(policy_switch::Find("std"));
  Churn<TraceAllocator>(state);
}
void BM_SlabDirect(benchmark::State& state) { Churn<SlabSingle>(state); }
void BM_SwitchSlab(benchmark::State& state) {
  policy_switch::ForceForTesting(policy_switch::Find("slab/st/single"));
  Churn<TraceAllocator>(state);
}

BENCHMARK(BM_StdAllocator);
BENCHMARK(BM_SwitchStd);
BENCHMARK(BM_SlabDirect);
BENCHMARK(BM_SwitchSlab);

}  // namespace
}  // namespace alloctrace

BENCHMARK_MAIN();
