// Slice 3 of the replay allocators' loops (runnable_policies.h).
#include "alloctrace/replayer/engine/runnable_policies_slice.h"

namespace alloctrace::runnable_policies_internal {

void AddSlice3(std::map<std::string, RunnablePolicy>* out) {
  AddSliceOfList<3>(allocators::AllAllocatorTypes{}, out);
}

}  // namespace alloctrace::runnable_policies_internal
