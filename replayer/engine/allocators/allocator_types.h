// Every replay allocator type, as compile-time type lists. The registry
// (registry.h) and the conformance tests are generated from these lists, so
// an allocator added here is listed, selectable and tested.
//
// Thread-safety: type lists only.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_TYPES_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_TYPES_H_

#include "alloctrace/base/type_list.h"
#include "alloctrace/pool/catalog.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/boost_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"

namespace alloctrace::allocators {

using alloctrace::Concat;
using alloctrace::TypeList;

namespace allocators_internal {

template <typename List>
struct ReplayAllocatorsOf;
template <typename... A>
struct ReplayAllocatorsOf<TypeList<A...>> {
  using type = TypeList<PoolPolicyAllocator<A>...>;
};

}  // namespace allocators_internal

// The replay allocators of a list of pool catalog types.
template <typename CatalogList>
using PoolPolicyAllocators = typename allocators_internal::ReplayAllocatorsOf<CatalogList>::type;

using BaselineAllocatorTypes =
    TypeList<MallocAllocator, NewAllocator, BoostPoolAllocator, BoostFastPoolAllocator,
             BoostFastPoolNoLockAllocator, PmrUnsyncPoolAllocator, PmrMonotonicAllocator,
             BumpAllocator>;

// Run only in a process started with their library preloaded.
using ExternalAllocatorTypes = TypeList<PreloadedMallocAllocator<ExternalMalloc::kTcmalloc>,
                                        PreloadedMallocAllocator<ExternalMalloc::kJemalloc>,
                                        PreloadedMallocAllocator<ExternalMalloc::kMimalloc>>;

// The pool catalog (pool/catalog.h): slab and small_node (ours) in their
// threading and holding variants, then the article's 48.
using OurAllocatorTypes = PoolPolicyAllocators<pool::OwnPoolCatalog>;
using ArticleAllocatorTypes = PoolPolicyAllocators<pool::ArticlePoolCatalog>;
template <typename Storage>
using ArticleAllocatorTypesFor = PoolPolicyAllocators<pool::ArticlePoolCatalogFor<Storage>>;

// In listing order: baselines, external mallocs, ours, the article's.
using AllAllocatorTypes = Concat<BaselineAllocatorTypes, ExternalAllocatorTypes, OurAllocatorTypes,
                                 ArticleAllocatorTypes>;

static_assert(ArticleAllocatorTypes::kSize == 48);

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_TYPES_H_
