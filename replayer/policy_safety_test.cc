#include "replayer/policy_safety.h"

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

allocators::AllocatorInfo Info(bool thread_safe, bool state_per_arena) {
  allocators::AllocatorInfo info;
  info.name = "p";
  info.thread_safe = thread_safe;
  info.state_per_arena = state_per_arena;
  return info;
}

TEST(PolicySafetyTest, SharedArenaSkipsEveryPolicyThatIsNotThreadSafe) {
  ArenaUsageSummary usage;
  usage.shared.push_back(SharedArena{0, {1, 2}, 2});
  usage.shared_count = 1;
  EXPECT_EQ(UnsafeReason(Info(false, true), usage),
            "not thread-safe: arena 0 is used by threads 1 and 2");
  EXPECT_EQ(UnsafeReason(Info(true, false), usage), "");
  // Said once: the shared-state rule adds nothing then.
  EXPECT_EQ(UnsafeSharedStateReason(Info(false, false), usage, 2), "");
}

// Arenas each thread keeps to itself: a pool per arena may serve them
// unlocked; one pool for every arena may not.
TEST(PolicySafetyTest, OnePoolForEveryArenaNeedsOneThread) {
  const ArenaUsageSummary usage;  // nothing shared
  EXPECT_EQ(UnsafeSharedStateReason(Info(false, true), usage, 2), "");
  EXPECT_EQ(UnsafeSharedStateReason(Info(false, false), usage, 1), "");
  EXPECT_EQ(UnsafeSharedStateReason(Info(true, false), usage, 2), "");
  EXPECT_EQ(UnsafeSharedStateReason(Info(false, false), usage, 3),
            "not thread-safe: its one pool serves every arena, and the trace's 3 threads "
            "allocate in them");
}

}  // namespace
}  // namespace alloctrace
