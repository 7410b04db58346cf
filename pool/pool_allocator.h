// PoolAllocator<T, ...>: a standard allocator over the policy-based Pool
// (pool.h), alloctrace's own SlabPool (slab_pool.h) or the SmallNodePool
// (small_node_pool.h), for use in your own containers. The replayer's
// policies are exactly these types, listed in pool/catalog.h with the name
// each has in its reports:
//
//   using Node = std::pair<const int, std::string>;
//   std::map<int, std::string, std::less<int>,
//            alloctrace::pool::PoolAllocator<Node>> m;          // defaults
//   std::list<int, alloctrace::pool::PoolAllocator<
//       int, StorageBoundary, GrowthExponential, MultiThreaded,
//       HoldingSingleton, /*kDelete=*/true>> l;
//   std::set<int, std::less<int>, alloctrace::pool::SlabAllocator<int>> s;
//   auto p = std::allocate_shared<Widget>(alloctrace::pool::SlabAllocator<Widget>());
//
// Choose the holding the replay measured: with HoldingStack (the default)
// every default-constructed allocator is a new pool, so a container of
// strings that each default-construct their allocator pays a pool per
// string; HoldingSingleton shares one pool per type across the process.
//
// HoldingPolicy (policies.h: HoldingStack, HoldingSingleton) decides which
// pool an allocator object uses. It provides:
//   static constexpr char kName[];          // "stack", in allocator names
//   static constexpr char kCppName[];       // "alloctrace::pool::HoldingStack"
//   static constexpr bool kPoolPerInstance;
//   template <typename PoolT> class Handle {  // stored in each allocator
//     Handle();                 // Stack: a new pool; Singleton: the process-wide one
//     Handle(const Handle&);    // shares the pool
//     PoolT& pool() const;
//   };
//
// Stack: every default-constructed allocator owns a new pool, shared by its
// copies and rebound copies (so a container's node allocator uses the pool of
// the allocator it was given) and released when the last of them goes.
// Copy-constructing a container shares the pool of the original.
// Singleton: one process-wide pool per pool type; all such allocators are
// equal and is_always_equal is true.
//
// The propagate_on_container_* traits are all true: an allocator travels with
// the memory it owns, so moving or swapping containers never needs an
// element-wise copy.
//
// Thread-safety: as the pool's threading policy; copies of an allocator may
// be made and destroyed on any thread (the Stack pool is reference-counted).
// Failure: allocate throws std::bad_alloc when the pool is out of memory, and
// std::bad_array_new_length when n > max_size().
#ifndef ALLOCTRACE_POOL_POOL_ALLOCATOR_H_
#define ALLOCTRACE_POOL_POOL_ALLOCATOR_H_

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include "alloctrace/pool/policies.h"
#include "alloctrace/pool/pool.h"
#include "alloctrace/pool/slab_pool.h"
#include "alloctrace/pool/small_node_pool.h"
#include "alloctrace/pool/storage_policies.h"

namespace alloctrace::pool {

// PoolT: a pool with Allocate(bytes, align) returning nullptr when out of
// memory and Deallocate(p, bytes, align). Holding: a holding policy.
template <typename T, typename PoolT, typename Holding>
class BasicPoolAllocator {
 public:
  using value_type = T;
  using pool_type = PoolT;
  using holding_policy = Holding;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::bool_constant<!Holding::kPoolPerInstance>;

  template <typename U>
  struct rebind {
    using other = BasicPoolAllocator<U, PoolT, Holding>;
  };

  // Stack holding: a new pool. Singleton: the process-wide pool.
  BasicPoolAllocator() = default;
  BasicPoolAllocator(const BasicPoolAllocator&) noexcept = default;
  BasicPoolAllocator& operator=(const BasicPoolAllocator&) noexcept = default;
  template <typename U>
  BasicPoolAllocator(const BasicPoolAllocator<U, PoolT, Holding>& other) noexcept
      : handle_(other.handle_) {}

  T* allocate(size_type n) {
    if (n > max_size()) throw std::bad_array_new_length();
    void* p = handle_.pool().Allocate(n * sizeof(T), alignof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_type n) noexcept {
    handle_.pool().Deallocate(p, n * sizeof(T), alignof(T));
  }
  size_type max_size() const noexcept { return std::numeric_limits<size_type>::max() / sizeof(T); }

  // The pool this allocator (and every allocator equal to it) draws from.
  PoolT& pool() const { return handle_.pool(); }

  template <typename U>
  friend bool operator==(const BasicPoolAllocator& a,
                         const BasicPoolAllocator<U, PoolT, Holding>& b) {
    return &a.pool() == &b.pool();
  }
  template <typename U>
  friend bool operator!=(const BasicPoolAllocator& a,
                         const BasicPoolAllocator<U, PoolT, Holding>& b) {
    return !(a == b);
  }

 private:
  template <typename U, typename P, typename H>
  friend class BasicPoolAllocator;

  typename Holding::template Handle<PoolT> handle_;
};

// The article's pool, all five policies chosen by template arguments.
template <typename T, typename Storage = StorageBoundary, typename Growth = GrowthExponential,
          typename Threading = SingleThreaded, typename Holding = HoldingStack, bool kDelete = true,
          size_t kMaxSmallSize = 64>
using PoolAllocator =
    BasicPoolAllocator<T, Pool<Storage, Growth, Threading, kDelete, kMaxSmallSize>, Holding>;

// alloctrace's own policy (slab_pool.h).
template <typename T, typename Threading = SingleThreaded, typename Holding = HoldingStack>
using SlabAllocator = BasicPoolAllocator<T, SlabPool<Threading>, Holding>;

// The small-node pool (small_node_pool.h).
template <typename T, typename Threading = SingleThreaded, typename Holding = HoldingStack>
using SmallNodeAllocator = BasicPoolAllocator<T, SmallNodePool<Threading>, Holding>;

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_POOL_ALLOCATOR_H_
