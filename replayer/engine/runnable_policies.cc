#include "alloctrace/replayer/engine/runnable_policies.h"

namespace alloctrace {

std::map<std::string, RunnablePolicy> RunnablePolicies() {
  std::map<std::string, RunnablePolicy> out;
  runnable_policies_internal::AddSlice0(&out);
  runnable_policies_internal::AddSlice1(&out);
  runnable_policies_internal::AddSlice2(&out);
  runnable_policies_internal::AddSlice3(&out);
  return out;
}

}  // namespace alloctrace
