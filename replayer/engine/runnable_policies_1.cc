// Slice 1 of the replay allocators' loops (runnable_policies.h).
#include "alloctrace/replayer/engine/runnable_policies_slice.h"

namespace alloctrace::runnable_policies_internal {

void AddSlice1(std::map<std::string, RunnablePolicy>* out) {
  AddSliceOfList<1>(allocators::AllAllocatorTypes{}, out);
}

}  // namespace alloctrace::runnable_policies_internal
