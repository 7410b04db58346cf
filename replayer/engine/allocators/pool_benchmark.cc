// Microbenchmarks of the pool policies against malloc and Boost's fast pool:
//   AllocFree/<allocator>/<bytes>  one allocation and its free, back to back
//   NodeChurn/<allocator>          100,000 live node-sized blocks (16..64
//                                  bytes); each iteration frees a random one
//                                  and allocates a replacement
//   StdMapChurn<allocator>         a std::map<int, int> of 100,000 entries;
//                                  each iteration erases a random key and
//                                  inserts another
// Run: bazel run -c opt //replayer/engine/allocators:pool_benchmark
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/boost_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "benchmark/benchmark.h"
#include "boost/pool/pool_alloc.hpp"

namespace alloctrace {
namespace {

using allocators::ArticlePoolAllocator;
using allocators::BoostFastPoolAllocator;
using allocators::BoostFastPoolNoLockAllocator;
using allocators::MallocAllocator;
using SlabSingle = allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>;
using SlabStack = allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingStack>;
using SimpleLinearStack = ArticlePoolAllocator<pool::StorageSimple, pool::GrowthLinear,
                                               pool::SingleThreaded, pool::HoldingStack, true>;
using BoundaryExpStack = ArticlePoolAllocator<pool::StorageBoundary, pool::GrowthExponential,
                                              pool::SingleThreaded, pool::HoldingStack, true>;
using OrderedLinearSingleton =
    ArticlePoolAllocator<pool::StorageOrdered, pool::GrowthLinear, pool::SingleThreaded,
                         pool::HoldingSingleton, true>;
using BoundaryExpSingletonMt =
    ArticlePoolAllocator<pool::StorageBoundary, pool::GrowthExponential, pool::MultiThreaded,
                         pool::HoldingSingleton, true>;

template <typename A>
void AllocFree(benchmark::State& state) {
  A a;
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = a.Allocate(bytes, 8, 0);
    benchmark::DoNotOptimize(p);
    a.Deallocate(p, bytes, 8, 0);
  }
  state.SetLabel(A::Info().name);
}

constexpr size_t kLiveNodes = 100000;
constexpr size_t kNodeSizes[] = {16, 32, 40, 48, 64};

struct ChurnPlan {
  std::vector<uint32_t> victims;  // Index of the block to replace.
  std::vector<uint8_t> sizes;     // Index into kNodeSizes.
  ChurnPlan() {
    std::mt19937 rng(42);
    constexpr size_t kSteps = size_t{1} << 20;
    victims.resize(kSteps);
    sizes.resize(kSteps);
    for (size_t i = 0; i < kSteps; ++i) {
      victims[i] = rng() % kLiveNodes;
      sizes[i] = rng() % std::size(kNodeSizes);
    }
  }
};
const ChurnPlan& Plan() {
  static const ChurnPlan* const plan = new ChurnPlan();
  return *plan;
}

template <typename A>
void NodeChurn(benchmark::State& state) {
  const ChurnPlan& plan = Plan();
  auto a = std::make_unique<A>();
  std::vector<std::pair<void*, size_t>> live(kLiveNodes);
  for (size_t i = 0; i < kLiveNodes; ++i) {
    const size_t bytes = kNodeSizes[i % std::size(kNodeSizes)];
    live[i] = {a->Allocate(bytes, 8, 0), bytes};
    static_cast<char*>(live[i].first)[0] = 1;
  }
  size_t step = 0;
  const size_t mask = plan.victims.size() - 1;
  for (auto _ : state) {
    auto& [p, bytes] = live[plan.victims[step & mask]];
    a->Deallocate(p, bytes, 8, 0);
    bytes = kNodeSizes[plan.sizes[step & mask]];
    p = a->Allocate(bytes, 8, 0);
    static_cast<char*>(p)[0] = 1;  // A constructor would touch it.
    ++step;
  }
  for (auto& [p, bytes] : live) a->Deallocate(p, bytes, 8, 0);
  state.SetLabel(A::Info().name);
}

template <typename Alloc>
void StdMapChurn(benchmark::State& state) {
  using Map = std::map<int, int, std::less<int>, Alloc>;
  Map m;
  for (int i = 0; i < static_cast<int>(kLiveNodes); ++i) m.emplace(i * 2, i);
  const ChurnPlan& plan = Plan();
  const size_t mask = plan.victims.size() - 1;
  size_t step = 0;
  for (auto _ : state) {
    auto it = m.lower_bound(static_cast<int>(plan.victims[step & mask] * 2));
    if (it == m.end()) it = m.begin();
    const int key = it->first;
    m.erase(it);
    m.emplace(key + 1 - 2 * (key & 1), key);  // Flip between 2k and 2k+1.
    ++step;
  }
  benchmark::DoNotOptimize(m.size());
}

using MapNode = std::pair<const int, int>;

#define ALLOCTRACE_ALLOC_FREE(A) BENCHMARK_TEMPLATE(AllocFree, A)->Arg(16)->Arg(48)
ALLOCTRACE_ALLOC_FREE(MallocAllocator);
ALLOCTRACE_ALLOC_FREE(BoostFastPoolAllocator);
ALLOCTRACE_ALLOC_FREE(BoostFastPoolNoLockAllocator);
ALLOCTRACE_ALLOC_FREE(SimpleLinearStack);
ALLOCTRACE_ALLOC_FREE(BoundaryExpStack);
ALLOCTRACE_ALLOC_FREE(OrderedLinearSingleton);
ALLOCTRACE_ALLOC_FREE(BoundaryExpSingletonMt);
ALLOCTRACE_ALLOC_FREE(SlabSingle);
ALLOCTRACE_ALLOC_FREE(SlabStack);

BENCHMARK_TEMPLATE(NodeChurn, MallocAllocator);
BENCHMARK_TEMPLATE(NodeChurn, BoostFastPoolAllocator);
BENCHMARK_TEMPLATE(NodeChurn, BoostFastPoolNoLockAllocator);
BENCHMARK_TEMPLATE(NodeChurn, SimpleLinearStack);
BENCHMARK_TEMPLATE(NodeChurn, BoundaryExpStack);
BENCHMARK_TEMPLATE(NodeChurn, OrderedLinearSingleton);
BENCHMARK_TEMPLATE(NodeChurn, BoundaryExpSingletonMt);
BENCHMARK_TEMPLATE(NodeChurn, SlabSingle);
BENCHMARK_TEMPLATE(NodeChurn, SlabStack);

BENCHMARK_TEMPLATE(StdMapChurn, std::allocator<MapNode>);
BENCHMARK_TEMPLATE(StdMapChurn, boost::fast_pool_allocator<MapNode>);
BENCHMARK_TEMPLATE(StdMapChurn,
                   boost::fast_pool_allocator<MapNode, boost::default_user_allocator_new_delete,
                                              boost::details::pool::null_mutex>);
BENCHMARK_TEMPLATE(StdMapChurn, pool::PoolAllocator<MapNode>);
BENCHMARK_TEMPLATE(StdMapChurn,
                   pool::PoolAllocator<MapNode, pool::StorageSimple, pool::GrowthLinear>);
BENCHMARK_TEMPLATE(StdMapChurn, pool::SlabAllocator<MapNode>);

}  // namespace
}  // namespace alloctrace

BENCHMARK_MAIN();
