// The pool policies as replay allocators (allocator_concept.h): the 48
// article combinations (ArticlePoolAllocator) and alloctrace's own "slab"
// (SlabPoolAllocator). Both call the library in //pool directly, as a
// user's PoolAllocator<T, ...> would.
//
// Holding: a Stack-holding article allocator keeps one pool per arena in a
// vector indexed by arena id (arena 0 always exists), creates it on
// ArenaCreated (or first use) and destroys it, with every block still in it,
// on ArenaDestroyed. ReserveArenas(limit) sizes that vector up front (the
// replay loop calls it untimed), so the loop never grows it. A Singleton-holding one uses the process-wide pool of
// HoldingSingleton for every arena and purges it (ReleaseAll) on destruction;
// one live instance per type. "slab" uses one pool for the whole run.
//
// Thread-safety: the article allocators as their threading policy (arena
// events need external synchronization); "slab": none.
// Failure: nullptr from Allocate only when the system is out of memory.
#ifndef ALLOCTRACE_REPLAYER_ALLOCATORS_POOL_ALLOCATORS_H_
#define ALLOCTRACE_REPLAYER_ALLOCATORS_POOL_ALLOCATORS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "replayer/allocators/allocator_concept.h"
#include "pool/policies.h"
#include "pool/policy_name.h"
#include "pool/pool.h"
#include "pool/slab_pool.h"
#include "pool/small_node_pool.h"
#include "pool/storage_policies.h"

namespace alloctrace::allocators {
namespace allocators_internal {

// One pool per arena, in a vector indexed by arena id.
template <typename PoolT>
class PerArenaPools {
 public:
  PerArenaPools() { pools_.push_back(std::make_unique<PoolT>()); }

  PoolT& For(uint32_t arena) {
    if (ABSL_PREDICT_TRUE(arena < pools_.size())) {
      PoolT* pool = pools_[arena].get();
      if (ABSL_PREDICT_TRUE(pool != nullptr)) return *pool;
    }
    return Create(arena);
  }
  void Created(uint32_t arena) { Create(arena); }
  // Makes room for arenas [0, limit) so that no later call grows the table
  // (the replay loop calls it before timing; arenas are dense indexes).
  void Reserve(uint32_t limit) {
    if (limit > pools_.size()) pools_.resize(limit);
  }
  // Releases every block of the arena. Arena 0 always exists.
  void Destroyed(uint32_t arena) {
    if (arena != 0 && arena < pools_.size()) pools_[arena].reset();
  }

 private:
  ABSL_ATTRIBUTE_NOINLINE PoolT& Create(uint32_t arena) {
    if (arena >= pools_.size()) pools_.resize(size_t{arena} + 1);
    if (pools_[arena] == nullptr) pools_[arena] = std::make_unique<PoolT>();
    return *pools_[arena];
  }

  std::vector<std::unique_ptr<PoolT>> pools_;
};

// The process-wide pool of a holding policy, for every arena.
template <typename PoolT, typename Holding>
class SharedPool {
 public:
  PoolT& For(uint32_t /*arena*/) { return Holding::template Instance<PoolT>(); }
  void Created(uint32_t /*arena*/) {}
  void Reserve(uint32_t /*limit*/) {}
  void Destroyed(uint32_t /*arena*/) {}
  ~SharedPool() { Holding::template Instance<PoolT>().ReleaseAll(); }

 private:
  SingleInstanceGuard<SharedPool> guard_;
};

inline const char* Describe(pool::StorageSimple) {
  return "simple storage (last-used chunk first, O(c) alloc and free)";
}
inline const char* Describe(pool::StorageBoundary) {
  return "boundary storage (full/non-full apart, O(1) alloc, O(c) free)";
}
inline const char* Describe(pool::StorageOrdered) {
  return "ordered storage (chunk map by address, O(c) alloc, O(log c) free)";
}
inline const char* Describe(pool::GrowthLinear) { return "255 blocks per chunk"; }
inline const char* Describe(pool::GrowthExponential) {
  return "chunks doubling from 16 blocks to 1 MiB";
}
inline const char* Describe(pool::SingleThreaded) { return "no lock"; }
inline const char* Describe(pool::MultiThreaded) { return "a mutex per pool"; }
inline const char* Describe(pool::HoldingStack) { return "a pool per arena"; }
inline const char* Describe(pool::HoldingSingleton) { return "one shared pool"; }

}  // namespace allocators_internal

template <typename Storage, typename Growth, typename Threading,
          typename Holding, bool kDelete>
class ArticlePoolAllocator
    : public ReplayAllocatorDefaults<
          ArticlePoolAllocator<Storage, Growth, Threading, Holding, kDelete>> {
 public:
  using PoolType = pool::Pool<Storage, Growth, Threading, kDelete>;
  static constexpr bool kThreadSafe = Threading::kThreadSafe;
  static constexpr bool kReusesFreedBlocks = kDelete;
  static constexpr bool kArenaReleasesBlocks = Holding::kPoolPerInstance;

  static AllocatorInfo Info() {
    using allocators_internal::Describe;
    return {pool::PolicyName<Storage, Growth, Threading, Holding, kDelete>(),
            kFamilyArticle,
            absl::StrCat("article pool: ", Describe(Storage()), ", ",
                         Describe(Growth()), ", ", Describe(Threading()), ", ",
                         Describe(Holding()),
                         kDelete ? "" : ", frees are no-ops")};
  }

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    return pools_.For(arena).Allocate(bytes, align);
  }
  void* AllocateZeroed(size_t bytes, size_t align, uint32_t arena) {
    return pools_.For(arena).AllocateZeroed(bytes, align);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    pools_.For(arena).Deallocate(p, bytes, align);
  }
  // In place where the block allows; large blocks by realloc (pool.h).
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    return pools_.For(arena).Reallocate(p, old_bytes, new_bytes, align);
  }
  void ArenaCreated(uint32_t arena) { pools_.Created(arena); }
  void ArenaDestroyed(uint32_t arena) { pools_.Destroyed(arena); }
  // Sizes the table of pools by arena for arenas [0, limit).
  void ReserveArenas(uint32_t limit) { pools_.Reserve(limit); }

 private:
  std::conditional_t<Holding::kPoolPerInstance,
                     allocators_internal::PerArenaPools<PoolType>,
                     allocators_internal::SharedPool<PoolType, Holding>>
      pools_;
};

// alloctrace's own policy (pool/slab_pool.h), one pool per run.
class SlabPoolAllocator : public ReplayAllocatorDefaults<SlabPoolAllocator> {
 public:
  using PoolType = pool::SlabPool<pool::SingleThreaded>;
  static constexpr bool kThreadSafe = false;
  static constexpr bool kReusesFreedBlocks = true;
  static constexpr bool kArenaReleasesBlocks = false;

  static AllocatorInfo Info() {
    return {"slab", kFamilyOurs,
            "ours: 8-byte size classes to 256 found by arithmetic, per-class "
            "LIFO free lists, O(1) sized free, bump from mmapped slabs"};
  }

  void* Allocate(size_t bytes, size_t align, uint32_t /*arena*/) {
    return pool_.Allocate(bytes, align);
  }
  void* AllocateZeroed(size_t bytes, size_t align, uint32_t /*arena*/) {
    return pool_.AllocateZeroed(bytes, align);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t /*arena*/) {
    pool_.Deallocate(p, bytes, align);
  }
  // In place within a size class; large blocks by realloc (slab_pool.h).
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align,
                   uint32_t /*arena*/) {
    return pool_.Reallocate(p, old_bytes, new_bytes, align);
  }

 private:
  PoolType pool_;
};

// The small-node pool (pool/small_node_pool.h), one per arena as
// foonathan/memory's profiler gives each allocator instance its own pool:
// released, with every block still in it, when its arena is destroyed.
class SmallNodePoolAllocator : public ReplayAllocatorDefaults<SmallNodePoolAllocator> {
 public:
  using PoolType = pool::SmallNodePool<pool::SingleThreaded>;
  static constexpr bool kThreadSafe = false;
  static constexpr bool kReusesFreedBlocks = true;
  static constexpr bool kArenaReleasesBlocks = true;

  static AllocatorInfo Info() {
    return {PoolType::kName, kFamilyOurs,
            "small-node pool (Modern C++ Design): chunks of <= 255 blocks, free "
            "lists of one-byte indices, exact sizes from 1 byte; a pool per arena"};
  }

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    return pools_.For(arena).Allocate(bytes, align);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    pools_.For(arena).Deallocate(p, bytes, align);
  }
  void ArenaCreated(uint32_t arena) { pools_.Created(arena); }
  void ArenaDestroyed(uint32_t arena) { pools_.Destroyed(arena); }

 private:
  allocators_internal::PerArenaPools<PoolType> pools_;
};

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ALLOCATORS_POOL_ALLOCATORS_H_
