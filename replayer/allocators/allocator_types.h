// Every replay allocator type, as compile-time type lists. The registry
// (registry.h) and the conformance tests are generated from these lists, so
// an allocator added here is listed, selectable and tested.
#ifndef ALLOCTRACE_REPLAYER_ALLOCATORS_ALLOCATOR_TYPES_H_
#define ALLOCTRACE_REPLAYER_ALLOCATORS_ALLOCATOR_TYPES_H_

#include <cstddef>

#include "replayer/allocators/baseline_allocators.h"
#include "replayer/allocators/boost_allocators.h"
#include "replayer/allocators/pool_allocators.h"
#include "pool/policies.h"
#include "pool/storage_policies.h"

namespace alloctrace::allocators {

template <typename... Types>
struct TypeList {
  static constexpr size_t kSize = sizeof...(Types);
};

namespace allocators_internal {

template <typename... Lists>
struct ConcatImpl {
  using type = TypeList<>;
};
template <typename... A>
struct ConcatImpl<TypeList<A...>> {
  using type = TypeList<A...>;
};
template <typename... A, typename... B, typename... Rest>
struct ConcatImpl<TypeList<A...>, TypeList<B...>, Rest...> {
  using type = typename ConcatImpl<TypeList<A..., B...>, Rest...>::type;
};

template <typename S, typename G, typename T, typename H>
using DeleteVariants = TypeList<ArticlePoolAllocator<S, G, T, H, true>,
                                ArticlePoolAllocator<S, G, T, H, false>>;

}  // namespace allocators_internal

template <typename... Lists>
using Concat = typename allocators_internal::ConcatImpl<Lists...>::type;

using BaselineAllocatorTypes =
    TypeList<MallocAllocator, NewAllocator, BoostPoolAllocator,
             BoostFastPoolAllocator, BoostFastPoolNoLockAllocator,
             PmrUnsyncPoolAllocator, PmrMonotonicAllocator, BumpAllocator>;

// Run only in a process started with their library preloaded.
using ExternalAllocatorTypes =
    TypeList<PreloadedMallocAllocator<ExternalMalloc::kTcmalloc>,
             PreloadedMallocAllocator<ExternalMalloc::kJemalloc>,
             PreloadedMallocAllocator<ExternalMalloc::kMimalloc>>;

// alloctrace's pool library beyond the article's 48: slab (ours) and the
// small-node pool (after foonathan/memory and Modern C++ Design).
using OurAllocatorTypes = TypeList<SlabPoolAllocator, SmallNodePoolAllocator>;

// The 16 article allocators of one storage policy, growth x threading x
// holding x delete, in name order of the policies' declaration.
template <typename Storage>
using ArticleAllocatorTypesFor = Concat<
    allocators_internal::DeleteVariants<Storage, pool::GrowthLinear,
                                        pool::SingleThreaded, pool::HoldingStack>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthLinear,
                                        pool::SingleThreaded,
                                        pool::HoldingSingleton>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthLinear,
                                        pool::MultiThreaded, pool::HoldingStack>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthLinear,
                                        pool::MultiThreaded,
                                        pool::HoldingSingleton>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthExponential,
                                        pool::SingleThreaded, pool::HoldingStack>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthExponential,
                                        pool::SingleThreaded,
                                        pool::HoldingSingleton>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthExponential,
                                        pool::MultiThreaded, pool::HoldingStack>,
    allocators_internal::DeleteVariants<Storage, pool::GrowthExponential,
                                        pool::MultiThreaded,
                                        pool::HoldingSingleton>>;

using ArticleAllocatorTypes =
    Concat<ArticleAllocatorTypesFor<pool::StorageSimple>,
           ArticleAllocatorTypesFor<pool::StorageBoundary>,
           ArticleAllocatorTypesFor<pool::StorageOrdered>>;

// In listing order: baselines, external mallocs, ours, the article's.
using AllAllocatorTypes = Concat<BaselineAllocatorTypes, ExternalAllocatorTypes,
                                 OurAllocatorTypes, ArticleAllocatorTypes>;

static_assert(ArticleAllocatorTypes::kSize == 48);

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ALLOCATORS_ALLOCATOR_TYPES_H_
