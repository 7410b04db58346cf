// The benchmark of "Efficiently allocating lots of std::shared_ptr" (2024):
// singly linked lists whose links are std::shared_ptr, nodes of five
// interleaved sizes, a ramp-up, then iterations that each drop one whole list
// and insert new nodes at random lists. Three ways to make a node:
//
//   kNew             shared_ptr(new Node): the object and the control block
//                    are two allocations from the global heap.
//   kMakeShared      std::make_shared: one allocation from the global heap.
//   kAllocateShared  std::allocate_shared with one allocator instance for the
//                    whole workload (the article's boost::fast_pool_allocator):
//                    one allocation from that instance's own arena.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_SHARED_PTR_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_SHARED_PTR_WORKLOADS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_support.h"

namespace alloctrace::workloads {

enum class SharedPtrKind { kNew, kMakeShared, kAllocateShared };

namespace shared_ptr_internal {

struct NodeBase {
  std::shared_ptr<NodeBase> next;
};
// 16 + Payload bytes on LP64: the article's 16 to 80.
template <size_t Payload>
struct Node : NodeBase {
  unsigned char payload[Payload];
};
template <>
struct Node<0> : NodeBase {};

inline constexpr int kNodeTypes = 5;
inline constexpr size_t PayloadOfType(int type) { return static_cast<size_t>(type) * 16; }

template <template <typename> class Alloc, SharedPtrKind kKind, size_t Payload>
std::shared_ptr<NodeBase> MakeNode(const std::optional<Alloc<NodeBase>>& pool) {
  using N = Node<Payload>;
  if constexpr (kKind == SharedPtrKind::kNew) {
    return SharedFromNew<Alloc, N>();
  } else if constexpr (kKind == SharedPtrKind::kMakeShared) {
    return std::allocate_shared<N>(GlobalHeapAllocator<Alloc, N>());
  } else {
    return std::allocate_shared<N>(Alloc<N>(*pool));
  }
}

template <template <typename> class Alloc, SharedPtrKind kKind>
std::shared_ptr<NodeBase> MakeNodeOfType(int type, const std::optional<Alloc<NodeBase>>& pool) {
  switch (type) {
    case 0:
      return MakeNode<Alloc, kKind, PayloadOfType(0)>(pool);
    case 1:
      return MakeNode<Alloc, kKind, PayloadOfType(1)>(pool);
    case 2:
      return MakeNode<Alloc, kKind, PayloadOfType(2)>(pool);
    case 3:
      return MakeNode<Alloc, kKind, PayloadOfType(3)>(pool);
    default:
      return MakeNode<Alloc, kKind, PayloadOfType(4)>(pool);
  }
}

// Frees a whole list in the order that releasing its head would (each node's
// destructor releasing the next: last node first), without that recursion,
// which would overflow the stack on long lists. `chain` is scratch space.
inline void DropList(std::shared_ptr<NodeBase>& head,
                     std::vector<std::shared_ptr<NodeBase>>& chain) {
  chain.clear();
  std::shared_ptr<NodeBase> node = std::move(head);
  while (node != nullptr) {
    std::shared_ptr<NodeBase> next = std::move(node->next);
    chain.push_back(std::move(node));
    node = std::move(next);
  }
  while (!chain.empty()) chain.pop_back();
}

}  // namespace shared_ptr_internal

// The parameters, as plain integers (the workload's core uses nothing of
// WorkloadParams, so it also builds against another standard library: see
// stdlib_events_main.cc).
struct SharedPtrListSizes {
  uint64_t lists;
  int64_t nodes;  // ramp-up
  int64_t iterations;
  int64_t inserts;  // per iteration
};

// Node n (counting from 0 over the whole run) has a payload of (n % 5) * 16
// bytes; iteration i drops list i % lists.
template <template <typename> class Alloc, SharedPtrKind kKind>
void RunSharedPtrListsWith(const SharedPtrListSizes& sizes, uint64_t seed) {
  using shared_ptr_internal::NodeBase;
  const uint64_t lists = sizes.lists;
  const int64_t nodes = sizes.nodes;
  const int64_t iterations = sizes.iterations;
  const int64_t inserts = sizes.inserts;
  WorkloadRng rng(seed);

  std::optional<Alloc<NodeBase>> pool;
  if constexpr (kKind == SharedPtrKind::kAllocateShared) pool.emplace();

  // The list heads and the scratch chain are bookkeeping, not traced.
  std::vector<std::shared_ptr<NodeBase>> heads(lists);
  std::vector<std::shared_ptr<NodeBase>> chain;
  uint64_t made = 0;
  auto insert_random = [&] {
    std::shared_ptr<NodeBase> node = shared_ptr_internal::MakeNodeOfType<Alloc, kKind>(
        static_cast<int>(made++ % shared_ptr_internal::kNodeTypes), pool);
    std::shared_ptr<NodeBase>& head = heads[rng.Below(lists)];
    node->next = std::move(head);
    head = std::move(node);
  };

  for (int64_t i = 0; i < nodes; ++i) insert_random();
  for (int64_t it = 0; it < iterations; ++it) {
    shared_ptr_internal::DropList(heads[static_cast<uint64_t>(it) % lists], chain);
    for (int64_t i = 0; i < inserts; ++i) insert_random();
  }
  for (std::shared_ptr<NodeBase>& head : heads) shared_ptr_internal::DropList(head, chain);
}

// Parameters: lists, nodes (ramp-up), iterations, inserts_per_iteration.
template <template <typename> class Alloc, SharedPtrKind kKind>
void RunSharedPtrLists(const WorkloadParams& params, uint64_t seed) {
  RunSharedPtrListsWith<Alloc, kKind>(
      {static_cast<uint64_t>(params.Get("lists")), params.Get("nodes"), params.Get("iterations"),
       params.Get("inserts_per_iteration")},
      seed);
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_SHARED_PTR_WORKLOADS_H_
