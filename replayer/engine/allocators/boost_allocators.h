// Boost.Pool baselines, as replay allocators (allocator_concept.h), calling
// Boost itself:
//
//   boost_pool              boost::pool_allocator<T> semantics: the
//                           singleton_pool<pool_allocator_tag, sizeof(T)>,
//                           ordered_malloc(1) / ordered_free(p, 1) (ordered
//                           free list: a free walks the list, O(free blocks)).
//   boost_fast_pool         boost::fast_pool_allocator<T> semantics: the
//                           singleton_pool<fast_pool_allocator_tag, sizeof(T)>,
//                           malloc() / free(p), Boost's default mutex.
//   boost_fast_pool_nolock  the same with details::pool::null_mutex.
//
// Mapping bytes to sizeof(T): the replay knows sizes, not types, so each
// request is served by the singleton pool a type of the rounded size would
// use: sizes round up to 8 bytes (16 when align is 16) and 16 pools of 8..128
// bytes exist, one template instantiation each, reached through a table of
// function pointers indexed by size class (one indirect call more than a
// typed boost::pool_allocator pays). Larger or more aligned (> 16) requests
// go to malloc (aligned_alloc): Boost would serve an n-object request with
// ordered_malloc(n) from the pool of sizeof(T), which a replay that knows only
// bytes cannot reproduce. Blocks of a multiple of 16 bytes are 16-aligned
// because Boost carves them from new[] memory.
//
// Boost's singleton pools are process-wide: one live instance per type
// (CHECK-enforced); the destructor purges the pools (purge_memory).
//
// Thread-safety: boost_pool and boost_fast_pool are thread-safe (Boost's
// mutex); boost_fast_pool_nolock is not.
// Failure: nullptr when Boost's user allocator (new (nothrow) char[]) fails.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_BOOST_ALLOCATORS_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_BOOST_ALLOCATORS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "absl/base/optimization.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "boost/pool/pool_alloc.hpp"
#include "boost/pool/singleton_pool.hpp"

namespace alloctrace::allocators {

inline constexpr char kBoostHeader[] = "boost/pool/pool_alloc.hpp";
inline constexpr char kBoostCMakeTarget[] = "Boost::headers";

// kOrdered: pool_allocator's ordered_malloc/ordered_free; otherwise
// fast_pool_allocator's malloc/free.
template <typename Tag, typename Mutex, bool kOrdered>
class BoostSingletonPoolAllocator
    : public ReplayAllocatorDefaults<BoostSingletonPoolAllocator<Tag, Mutex, kOrdered>> {
 public:
  static constexpr bool kThreadSafe = !std::is_same_v<Mutex, boost::details::pool::null_mutex>;
  static constexpr bool kReusesFreedBlocks = true;
  static constexpr bool kArenaReleasesBlocks = false;
  static constexpr size_t kGranule = 8;
  static constexpr size_t kMaxPooled = 128;
  static constexpr size_t kClasses = kMaxPooled / kGranule;
  static AllocatorInfo Info();

  BoostSingletonPoolAllocator() = default;
  BoostSingletonPoolAllocator(const BoostSingletonPoolAllocator&) = delete;
  BoostSingletonPoolAllocator& operator=(const BoostSingletonPoolAllocator&) = delete;
  ~BoostSingletonPoolAllocator() { PurgeAll(std::make_index_sequence<kClasses>()); }

  void* Allocate(size_t bytes, size_t align, uint32_t /*arena*/) {
    if (ABSL_PREDICT_TRUE(bytes <= kMaxPooled && align <= 16)) {
      static constexpr auto kAllocate = AllocateTable(std::make_index_sequence<kClasses>());
      return kAllocate[ClassIndex(bytes, align)]();
    }
    if (align <= alignof(std::max_align_t)) return std::malloc(bytes);
    const size_t rounded = (bytes + align - 1) & ~(align - 1);
    return std::aligned_alloc(align, rounded == 0 ? align : rounded);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t /*arena*/) {
    if (ABSL_PREDICT_TRUE(bytes <= kMaxPooled && align <= 16)) {
      static constexpr auto kDeallocate = DeallocateTable(std::make_index_sequence<kClasses>());
      kDeallocate[ClassIndex(bytes, align)](p);
      return;
    }
    std::free(p);
  }

 private:
  // Class i holds blocks of (i + 1) * 8 bytes.
  static size_t ClassIndex(size_t bytes, size_t align) {
    const size_t unit = align <= kGranule ? kGranule : 16;
    const size_t rounded = (bytes + (bytes == 0) + unit - 1) & ~(unit - 1);
    return rounded / kGranule - 1;
  }

  template <size_t kIndex>
  using SingletonPool = boost::singleton_pool<Tag, (kIndex + 1) * kGranule,
                                              boost::default_user_allocator_new_delete, Mutex,
                                              /*NextSize=*/32, /*MaxSize=*/0>;

  template <size_t kIndex>
  static void* AllocateFromClass() {
    if constexpr (kOrdered) {
      return SingletonPool<kIndex>::ordered_malloc(1);
    } else {
      return (SingletonPool<kIndex>::malloc)();
    }
  }
  template <size_t kIndex>
  static void DeallocateToClass(void* p) {
    if constexpr (kOrdered) {
      SingletonPool<kIndex>::ordered_free(p, 1);
    } else {
      (SingletonPool<kIndex>::free)(p);
    }
  }
  template <size_t... kIndex>
  static void PurgeAll(std::index_sequence<kIndex...>) {
    (SingletonPool<kIndex>::purge_memory(), ...);
  }

  template <size_t... kIndex>
  static constexpr std::array<void* (*)(), kClasses> AllocateTable(std::index_sequence<kIndex...>) {
    return {&AllocateFromClass<kIndex>...};
  }
  template <size_t... kIndex>
  static constexpr std::array<void (*)(void*), kClasses> DeallocateTable(
      std::index_sequence<kIndex...>) {
    return {&DeallocateToClass<kIndex>...};
  }

  allocators_internal::SingleInstanceGuard<BoostSingletonPoolAllocator> guard_;
};

using BoostPoolAllocator =
    BoostSingletonPoolAllocator<boost::pool_allocator_tag, boost::details::pool::default_mutex,
                                /*kOrdered=*/true>;
using BoostFastPoolAllocator =
    BoostSingletonPoolAllocator<boost::fast_pool_allocator_tag, boost::details::pool::default_mutex,
                                /*kOrdered=*/false>;
using BoostFastPoolNoLockAllocator =
    BoostSingletonPoolAllocator<boost::fast_pool_allocator_tag, boost::details::pool::null_mutex,
                                /*kOrdered=*/false>;

template <>
inline AllocatorInfo BoostPoolAllocator::Info() {
  AllocatorInfo info{"boost_pool", Family::kBaseline,
                     "boost::pool_allocator: singleton_pool per 8-byte size class to 128, "
                     "ordered free list"};
  info.adopt = Adoption{"boost::pool_allocator<T>", kBoostHeader, "", kBoostCMakeTarget, ""};
  return info;
}
template <>
inline AllocatorInfo BoostFastPoolAllocator::Info() {
  AllocatorInfo info{"boost_fast_pool", Family::kBaseline,
                     "boost::fast_pool_allocator: singleton_pool per 8-byte size class to "
                     "128, default mutex"};
  info.adopt = Adoption{"boost::fast_pool_allocator<T>", kBoostHeader, "", kBoostCMakeTarget, ""};
  return info;
}
template <>
inline AllocatorInfo BoostFastPoolNoLockAllocator::Info() {
  AllocatorInfo info{"boost_fast_pool_nolock", Family::kBaseline,
                     "boost::fast_pool_allocator with details::pool::null_mutex"};
  info.adopt = Adoption{
      "boost::fast_pool_allocator<T, boost::default_user_allocator_new_delete, "
      "boost::details::pool::null_mutex>",
      kBoostHeader, "", kBoostCMakeTarget, ""};
  return info;
}

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_BOOST_ALLOCATORS_H_
