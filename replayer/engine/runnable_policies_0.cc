// Slice 0 of the replay allocators' loops (runnable_policies.h).
#include "alloctrace/replayer/engine/runnable_policies_slice.h"

namespace alloctrace::runnable_policies_internal {

void AddSlice0(std::map<std::string, RunnablePolicy>* out) {
  AddSliceOfList<0>(allocators::AllAllocatorTypes{}, out);
}

}  // namespace alloctrace::runnable_policies_internal
