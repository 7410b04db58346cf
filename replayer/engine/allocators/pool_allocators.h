// The pool policies as replay allocators (allocator_concept.h): one
// template, PoolPolicyAllocator<A>, over every type A of the pool catalog
// (pool/catalog.h), the allocator a user adopts.
//
// An arena of the trace is an allocator instance of the program (a
// container and its copies), so the replay keeps per arena exactly what
// one instance of A keeps: one `Holding::Handle<PoolT>`. With Stack holding
// that is a pool per arena, created on ArenaCreated (or first use) and
// released, with every block still in it, on ArenaDestroyed; with Singleton
// holding every handle names the one process-wide pool, which the
// destructor purges (ReleaseAll; one live instance per type).
// ReserveArenas(limit) sizes the table of handles up front (the replay loop
// calls it untimed), so the loop never grows it.
//
// Thread-safety: as the pool's threading policy (arena events need external
// synchronization). Failure: nullptr from Allocate only when the system is
// out of memory.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_POOL_ALLOCATORS_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_POOL_ALLOCATORS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/pool/catalog.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"

namespace alloctrace::allocators {
namespace allocators_internal {

template <typename PoolT>
struct IsArticlePool : std::false_type {};
template <typename S, typename G, typename T, bool kDelete, size_t kMaxSmall>
struct IsArticlePool<pool::Pool<S, G, T, kDelete, kMaxSmall>> : std::true_type {};

template <typename PoolT, typename = void>
struct HasAllocateZeroed : std::false_type {};
template <typename PoolT>
struct HasAllocateZeroed<
    PoolT, std::void_t<decltype(std::declval<PoolT&>().AllocateZeroed(size_t{}, size_t{}))>>
    : std::true_type {};

template <typename PoolT, typename = void>
struct HasReallocate : std::false_type {};
template <typename PoolT>
struct HasReallocate<PoolT, std::void_t<decltype(std::declval<PoolT&>().Reallocate(
                                nullptr, size_t{}, size_t{}, size_t{}))>> : std::true_type {};

// One holding handle per arena, in a vector indexed by arena id (arena 0
// always exists).
//
// The table is recycled: an instance destroyed releases its pools (as the
// vector's destructor would, entry by entry) and gives the emptied table
// to the next instance made on its thread, which is then exactly a fresh
// one. A windowed run (windows.h) replays each window through a fresh
// allocator, and on a trace of 2.8 M arenas a table made anew was 68 MB
// zeroed, faulted in and unmapped per window, most of the window's time;
// its timed ops see the same table either way (a fresh table is zeroed
// before the timing starts). The last table stays resident until the
// child exits, so a windowed run's final resident memory counts it; its
// memory figures come from whole runs.
template <typename PoolT, typename Handle>
class PerArenaHandles {
 public:
  PerArenaHandles() {
    handles_.swap(Spare());
    if (handles_.empty()) handles_.resize(1);
    handles_[0].emplace();
  }
  ~PerArenaHandles() {
    for (std::optional<Handle>& handle : handles_) handle.reset();
    if (handles_.size() > Spare().size()) Spare().swap(handles_);
  }
  PerArenaHandles(const PerArenaHandles&) = delete;
  PerArenaHandles& operator=(const PerArenaHandles&) = delete;

  PoolT& For(uint32_t arena) {
    if (ABSL_PREDICT_TRUE(arena < handles_.size())) {
      const std::optional<Handle>& handle = handles_[arena];
      if (ABSL_PREDICT_TRUE(handle.has_value())) return handle->pool();
    }
    return Create(arena);
  }
  void Created(uint32_t arena) { Create(arena); }
  void Reserve(uint32_t limit) {
    if (limit > handles_.size()) handles_.resize(limit);
  }
  // The arena's last allocator instance is gone: with Stack holding its
  // pool goes with it. Arena 0 always exists.
  void Destroyed(uint32_t arena) {
    if (arena != 0 && arena < handles_.size()) handles_[arena].reset();
  }

 private:
  ABSL_ATTRIBUTE_NOINLINE PoolT& Create(uint32_t arena) {
    if (arena >= handles_.size()) handles_.resize(size_t{arena} + 1);
    if (!handles_[arena].has_value()) handles_[arena].emplace();
    return handles_[arena]->pool();
  }

  // The table the last instance destroyed on this thread left, all empty.
  static std::vector<std::optional<Handle>>& Spare() {
    static thread_local std::vector<std::optional<Handle>> spare;
    return spare;
  }

  std::vector<std::optional<Handle>> handles_;
};

// Every handle of a Singleton holding names the same pool: no table, and
// the pool's address is looked up once (not the function-local static's
// guard on every call).
template <typename PoolT, typename Handle>
class SharedHandle {
 public:
  PoolT& For(uint32_t /*arena*/) { return pool_; }
  void Created(uint32_t /*arena*/) {}
  void Reserve(uint32_t /*limit*/) {}
  void Destroyed(uint32_t /*arena*/) {}
  ~SharedHandle() { pool_.ReleaseAll(); }

 private:
  SingleInstanceGuard<SharedHandle> guard_;
  PoolT& pool_ = Handle().pool();
};

}  // namespace allocators_internal

// A: a catalog type, pool::BasicPoolAllocator<std::byte, PoolT, Holding>.
template <typename A>
class PoolPolicyAllocator : public ReplayAllocatorDefaults<PoolPolicyAllocator<A>> {
 public:
  using CatalogType = A;
  using PoolType = typename A::pool_type;
  using Holding = typename A::holding_policy;
  static constexpr bool kThreadSafe = PoolType::ThreadingPolicy::kThreadSafe;
  static constexpr bool kReusesFreedBlocks = PoolType::kFreesBlocks;
  static constexpr bool kArenaReleasesBlocks = Holding::kPoolPerInstance;

  static AllocatorInfo Info() {
    const pool::PolicyEntry entry = pool::EntryOf<A>();
    AllocatorInfo info{
        entry.name,
        allocators_internal::IsArticlePool<PoolType>::value ? Family::kArticle : Family::kOurs,
        entry.description};
    info.adopt =
        Adoption{entry.cpp_type, pool::kHeader, pool::kBazelTarget, pool::kCMakeTarget, ""};
    return info;
  }

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    return handles_.For(arena).Allocate(bytes, align);
  }
  // Optional concept member: only where the pool has its own.
  template <typename P = PoolType,
            typename = std::enable_if_t<allocators_internal::HasAllocateZeroed<P>::value>>
  void* AllocateZeroed(size_t bytes, size_t align, uint32_t arena) {
    return handles_.For(arena).AllocateZeroed(bytes, align);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    handles_.For(arena).Deallocate(p, bytes, align);
  }
  // In place where the pool can (pool.h, slab_pool.h); otherwise allocate,
  // copy and free.
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    if constexpr (allocators_internal::HasReallocate<PoolType>::value) {
      return handles_.For(arena).Reallocate(p, old_bytes, new_bytes, align);
    } else {
      return ReallocateByCopy(*this, p, old_bytes, new_bytes, align, arena);
    }
  }
  void ArenaCreated(uint32_t arena) { handles_.Created(arena); }
  void ArenaDestroyed(uint32_t arena) { handles_.Destroyed(arena); }
  // Sizes the table of handles by arena for arenas [0, limit).
  void ReserveArenas(uint32_t limit) { handles_.Reserve(limit); }

 private:
  using Handle = typename Holding::template Handle<PoolType>;
  std::conditional_t<Holding::kPoolPerInstance,
                     allocators_internal::PerArenaHandles<PoolType, Handle>,
                     allocators_internal::SharedHandle<PoolType, Handle>>
      handles_;
};

// The replay allocators of the library's aliases, for tests and benchmarks.
template <typename Storage, typename Growth, typename Threading, typename Holding, bool kDelete>
using ArticlePoolAllocator = PoolPolicyAllocator<
    pool::PoolAllocator<std::byte, Storage, Growth, Threading, Holding, kDelete>>;
template <typename Threading, typename Holding>
using SlabPoolAllocator = PoolPolicyAllocator<pool::SlabAllocator<std::byte, Threading, Holding>>;

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_POOL_ALLOCATORS_H_
