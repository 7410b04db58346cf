// Conformance suite (allocator_conformance.h) over the 16 article policies with simple storage.
#include "alloctrace/pool/storage_policies.h"
#include "alloctrace/replayer/engine/allocators/allocator_conformance.h"
#include "alloctrace/replayer/engine/allocators/allocator_types.h"

namespace alloctrace::allocators::testing {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(ArticleSimple, AllocatorConformanceTest,
                               GtestTypesOf<ArticleAllocatorTypesFor<pool::StorageSimple>>::type,
                               AllocatorTestName);

}  // namespace
}  // namespace alloctrace::allocators::testing
