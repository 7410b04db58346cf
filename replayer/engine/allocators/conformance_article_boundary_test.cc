// Conformance suite (allocator_conformance.h) over the 16 article policies with boundary storage.
#include "alloctrace/pool/storage_policies.h"
#include "alloctrace/replayer/engine/allocators/allocator_conformance.h"
#include "alloctrace/replayer/engine/allocators/allocator_types.h"

namespace alloctrace::allocators::testing {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(ArticleBoundary, AllocatorConformanceTest,
                               GtestTypesOf<ArticleAllocatorTypesFor<pool::StorageBoundary>>::type,
                               AllocatorTestName);

}  // namespace
}  // namespace alloctrace::allocators::testing
