// Conformance suite (allocator_conformance.h) over alloctrace's own policy.
#include "replayer/allocators/allocator_conformance.h"
#include "replayer/allocators/allocator_types.h"

namespace alloctrace::allocators::testing {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(Ours, AllocatorConformanceTest,
                               GtestTypesOf<OurAllocatorTypes>::type,
                               AllocatorTestName);

}  // namespace
}  // namespace alloctrace::allocators::testing
