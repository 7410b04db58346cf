#include "alloctrace/replayer/engine/runnable_policies.h"

#include <map>
#include <string>

#include "alloctrace/replayer/engine/allocators/registry.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// The four slices together hold every allocator of the registry once, each
// with both of its replay loops and its own info.
TEST(RunnablePoliciesTest, TheSlicesCoverTheRegistryExactly) {
  const std::map<std::string, RunnablePolicy> policies = RunnablePolicies();
  const std::vector<allocators::AllocatorInfo> all = allocators::AllAllocators();
  EXPECT_EQ(policies.size(), all.size());
  for (const allocators::AllocatorInfo& info : all) {
    auto it = policies.find(info.name);
    ASSERT_NE(it, policies.end()) << info.name;
    EXPECT_EQ(it->second.info.name, info.name);
    EXPECT_EQ(it->second.info.thread_safe, info.thread_safe) << info.name;
    EXPECT_NE(it->second.run, nullptr) << info.name;
    EXPECT_NE(it->second.run_per_thread, nullptr) << info.name;
  }
}

}  // namespace
}  // namespace alloctrace
