// Conformance suite (allocator_conformance.h) over the baseline allocators.
#include "alloctrace/pool/storage_policies.h"
#include "alloctrace/replayer/engine/allocators/allocator_conformance.h"
#include "alloctrace/replayer/engine/allocators/allocator_types.h"

namespace alloctrace::allocators::testing {
namespace {

// Every allocator type is instantiated by exactly one conformance_*_test.cc,
// except the external mallocs, which are glibc's malloc unless preloaded
// (the replayer's end-to-end test runs them under their own library).
static_assert(BaselineAllocatorTypes::kSize + ExternalAllocatorTypes::kSize +
                      OurAllocatorTypes::kSize +
                      ArticleAllocatorTypesFor<pool::StorageSimple>::kSize +
                      ArticleAllocatorTypesFor<pool::StorageBoundary>::kSize +
                      ArticleAllocatorTypesFor<pool::StorageOrdered>::kSize ==
                  AllAllocatorTypes::kSize,
              "a type list is missing from the conformance tests");

INSTANTIATE_TYPED_TEST_SUITE_P(Baseline, AllocatorConformanceTest,
                               GtestTypesOf<BaselineAllocatorTypes>::type, AllocatorTestName);

}  // namespace
}  // namespace alloctrace::allocators::testing
