// The node strategies of foonathan/memory's profiler (test/profiling.cpp and
// test/benchmark.hpp): `count` nodes of one size from one allocator instance,
// freed right away (single), or all allocated and then freed in allocation
// order (bulk), in reverse (bulk_reversed) or in random order (butterfly).
// Every run uses a fresh allocator instance, as the profiler makes a fresh
// allocator for each of its samples. The array strategies do the same with
// arrays of 1, 4 or 8 nodes (one allocation each) of 1, 4 or 8 bytes.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_NODE_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_NODE_WORKLOADS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_support.h"

namespace alloctrace::workloads {

enum class FreeOrder { kSingle, kBulk, kBulkReversed, kButterfly };

// A node of Size bytes, naturally aligned up to the default new alignment.
template <size_t Size>
struct alignas(Size < alignof(std::max_align_t) ? Size : alignof(std::max_align_t)) ProfilerNode {
  unsigned char bytes[Size];
};

// Node sizes accepted by the node_size parameter; 0 means each of
// kAllNodeSizes in turn.
inline const std::vector<int64_t>& NodeSizeValues() {
  static const std::vector<int64_t>* const kValues =
      new std::vector<int64_t>{0, 1, 4, 8, 16, 32, 64, 128, 256};
  return *kValues;
}
inline constexpr size_t kAllNodeSizes[] = {8, 16, 32, 64, 128, 256};

namespace node_internal {

template <template <typename> class Alloc, FreeOrder kOrder, size_t Size>
void RunAtSize(int64_t count, int64_t runs, WorkloadRng& rng, std::vector<void*>& ptrs) {
  using N = ProfilerNode<Size>;
  for (int64_t run = 0; run < runs; ++run) {
    Alloc<N> alloc;
    if constexpr (kOrder == FreeOrder::kSingle) {
      for (int64_t i = 0; i < count; ++i) {
        N* p = alloc.allocate(1);
        DoNotOptimize(p);
        alloc.deallocate(p, 1);
      }
    } else {
      ptrs.clear();
      for (int64_t i = 0; i < count; ++i) ptrs.push_back(alloc.allocate(1));
      if constexpr (kOrder == FreeOrder::kBulkReversed) std::reverse(ptrs.begin(), ptrs.end());
      if constexpr (kOrder == FreeOrder::kButterfly) rng.Shuffle(ptrs);
      for (void* p : ptrs) alloc.deallocate(static_cast<N*>(p), 1);
    }
  }
}

template <template <typename> class Alloc, FreeOrder kOrder>
void RunAtSize(size_t size, int64_t count, int64_t runs, WorkloadRng& rng,
               std::vector<void*>& ptrs) {
  switch (size) {
    case 1:
      return RunAtSize<Alloc, kOrder, 1>(count, runs, rng, ptrs);
    case 4:
      return RunAtSize<Alloc, kOrder, 4>(count, runs, rng, ptrs);
    case 8:
      return RunAtSize<Alloc, kOrder, 8>(count, runs, rng, ptrs);
    case 16:
      return RunAtSize<Alloc, kOrder, 16>(count, runs, rng, ptrs);
    case 32:
      return RunAtSize<Alloc, kOrder, 32>(count, runs, rng, ptrs);
    case 64:
      return RunAtSize<Alloc, kOrder, 64>(count, runs, rng, ptrs);
    case 128:
      return RunAtSize<Alloc, kOrder, 128>(count, runs, rng, ptrs);
    default:
      return RunAtSize<Alloc, kOrder, 256>(count, runs, rng, ptrs);
  }
}

}  // namespace node_internal

// Parameters: node_size (one of NodeSizeValues()), count, runs.
template <template <typename> class Alloc, FreeOrder kOrder>
void RunNodeStrategy(const WorkloadParams& params, uint64_t seed) {
  const int64_t node_size = params.Get("node_size");
  const int64_t count = params.Get("count");
  const int64_t runs = params.Get("runs");
  WorkloadRng rng(seed);
  std::vector<void*> ptrs;  // bookkeeping, not traced
  if (kOrder != FreeOrder::kSingle) ptrs.reserve(count);
  if (node_size == 0) {
    for (size_t size : kAllNodeSizes) {
      node_internal::RunAtSize<Alloc, kOrder>(size, count, runs, rng, ptrs);
    }
  } else {
    node_internal::RunAtSize<Alloc, kOrder>(static_cast<size_t>(node_size), count, runs, rng, ptrs);
  }
}

// The profiler's array strategies: the same four orders over arrays of
// `array_nodes` nodes, each array one allocate(array_nodes) call.
inline const std::vector<int64_t>& ArraySizeValues() {
  static const std::vector<int64_t>* const kValues = new std::vector<int64_t>{0, 1, 4, 8};
  return *kValues;
}
inline constexpr size_t kAllArrayNodeSizes[] = {1, 4, 8};
inline constexpr size_t kAllArrayLengths[] = {1, 4, 8};

namespace node_internal {

template <template <typename> class Alloc, FreeOrder kOrder, size_t Size>
void RunArraysAtSize(size_t length, int64_t count, int64_t runs, WorkloadRng& rng,
                     std::vector<void*>& ptrs) {
  using N = ProfilerNode<Size>;
  for (int64_t run = 0; run < runs; ++run) {
    Alloc<N> alloc;
    if constexpr (kOrder == FreeOrder::kSingle) {
      for (int64_t i = 0; i < count; ++i) {
        N* p = alloc.allocate(length);
        DoNotOptimize(p);
        alloc.deallocate(p, length);
      }
    } else {
      ptrs.clear();
      for (int64_t i = 0; i < count; ++i) ptrs.push_back(alloc.allocate(length));
      if constexpr (kOrder == FreeOrder::kBulkReversed) std::reverse(ptrs.begin(), ptrs.end());
      if constexpr (kOrder == FreeOrder::kButterfly) rng.Shuffle(ptrs);
      for (void* p : ptrs) alloc.deallocate(static_cast<N*>(p), length);
    }
  }
}

template <template <typename> class Alloc, FreeOrder kOrder>
void RunArraysAtSize(size_t size, size_t length, int64_t count, int64_t runs, WorkloadRng& rng,
                     std::vector<void*>& ptrs) {
  switch (size) {
    case 1:
      return RunArraysAtSize<Alloc, kOrder, 1>(length, count, runs, rng, ptrs);
    case 4:
      return RunArraysAtSize<Alloc, kOrder, 4>(length, count, runs, rng, ptrs);
    default:
      return RunArraysAtSize<Alloc, kOrder, 8>(length, count, runs, rng, ptrs);
  }
}

}  // namespace node_internal

// Parameters: node_size and array_nodes (each 1, 4 or 8; 0 = each in turn,
// node size outer), count (arrays per run), runs (per combination, each
// with a fresh allocator).
template <template <typename> class Alloc, FreeOrder kOrder>
void RunArrayStrategy(const WorkloadParams& params, uint64_t seed) {
  const int64_t node_size = params.Get("node_size");
  const int64_t array_nodes = params.Get("array_nodes");
  const int64_t count = params.Get("count");
  const int64_t runs = params.Get("runs");
  WorkloadRng rng(seed);
  std::vector<void*> ptrs;  // bookkeeping, not traced
  if (kOrder != FreeOrder::kSingle) ptrs.reserve(count);
  for (size_t size : kAllArrayNodeSizes) {
    if (node_size != 0 && static_cast<size_t>(node_size) != size) continue;
    for (size_t length : kAllArrayLengths) {
      if (array_nodes != 0 && static_cast<size_t>(array_nodes) != length) continue;
      node_internal::RunArraysAtSize<Alloc, kOrder>(size, length, count, runs, rng, ptrs);
    }
  }
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_NODE_WORKLOADS_H_
