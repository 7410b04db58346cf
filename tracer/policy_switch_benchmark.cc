// What the ALLOCTRACE_POLICY switch costs: std::map insert/erase churn with
//   std::allocator                      vs TraceAllocator under `std`
//   SlabAllocator<T, SingleThreaded, HoldingSingleton>
//                                       vs TraceAllocator under `slab/st/single`
// each as the churn and as bare allocate/deallocate of 32-byte nodes. The
// pairs differ only by the switch's branch and indirect call, and under
// slab/st/single its check of the calling thread.
//
//   bazel run //tracer:policy_switch_benchmark -- --benchmark_repetitions=5
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/tracer/policy_switch.h"
#include "alloctrace/tracer/trace_allocator.h"
#include "benchmark/benchmark.h"

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

// The dispatch alone: 64 allocations of a 32-byte node, then their frees,
// with nothing else in the loop.
template <template <typename> class Alloc>
void AllocFree(benchmark::State& state) {
  struct Node {
    char bytes[32];
  };
  using Traits = std::allocator_traits<Alloc<Node>>;
  Alloc<Node> a;
  Node* blocks[64];
  for (auto _ : state) {
    for (Node*& b : blocks) b = Traits::allocate(a, 1);
    benchmark::DoNotOptimize(blocks);
    for (Node* b : blocks) Traits::deallocate(a, b, 1);
  }
  state.counters["ns/op"] =
      benchmark::Counter(128.0 * static_cast<double>(state.iterations()),
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

void BM_AllocFreeStdAllocator(benchmark::State& state) { AllocFree<std::allocator>(state); }
void BM_AllocFreeSwitchStd(benchmark::State& state) {
  policy_switch::ForceForTesting(policy_switch::Find("std"));
  AllocFree<TraceAllocator>(state);
}
void BM_AllocFreeSlabDirect(benchmark::State& state) { AllocFree<SlabSingle>(state); }
void BM_AllocFreeSwitchSlab(benchmark::State& state) {
  policy_switch::ForceForTesting(policy_switch::Find("slab/st/single"));
  AllocFree<TraceAllocator>(state);
}

BENCHMARK(BM_AllocFreeStdAllocator);
BENCHMARK(BM_AllocFreeSwitchStd);
BENCHMARK(BM_AllocFreeSlabDirect);
BENCHMARK(BM_AllocFreeSwitchSlab);
BENCHMARK(BM_StdAllocator);
BENCHMARK(BM_SwitchStd);
BENCHMARK(BM_SlabDirect);
BENCHMARK(BM_SwitchSlab);

}  // namespace
}  // namespace alloctrace

BENCHMARK_MAIN();
