// Conformance suite (allocator_conformance.h) over the pool library's own
// policies beyond the article's: slab and small_node.
#include "alloctrace/replayer/engine/allocators/allocator_conformance.h"
#include "alloctrace/replayer/engine/allocators/allocator_types.h"

namespace alloctrace::allocators::testing {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(Ours, AllocatorConformanceTest,
                               GtestTypesOf<OurAllocatorTypes>::type, AllocatorTestName);

}  // namespace
}  // namespace alloctrace::allocators::testing
