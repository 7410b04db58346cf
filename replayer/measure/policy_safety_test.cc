#include "alloctrace/replayer/measure/policy_safety.h"

#include <string>
#include <vector>

#include "alloctrace/replayer/engine/allocators/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using ::testing::ElementsAre;

ArenaUsageSummary SharedByTwoThreads() {
  ArenaUsageSummary usage;
  usage.shared_count = 1;
  usage.shared.push_back(SharedArena{0, {1, 2}, 2});
  return usage;
}

allocators::AllocatorInfo Info(const std::string& name) {
  for (const allocators::AllocatorInfo& info : allocators::AllAllocators()) {
    if (info.name == name) return info;
  }
  ADD_FAILURE() << "no policy " << name;
  return {};
}

// A pool per arena where one-block arenas are half the allocations or more:
// not run from the default set, and the reason says why; a shared pool, or
// fewer one-block arenas, runs.
TEST(PolicySafetyTest, APoolPerOneBlockArenaIsNotRun) {
  ArenaUsageSummary usage;
  usage.arenas_used = 2'844'774;
  usage.arenas_single_block = 2'844'771;
  EXPECT_EQ(PoolPerArenaReason(Info("slab/st/stack"), usage, 5'689'542),
            "not run: it keeps a pool per arena, and 2,844,771 arenas never hold more than 1 "
            "block, at least half as many as the trace's 5,689,542 allocations; each pool costs "
            "two allocations or more from the system allocator (the pool, its first chunk), so "
            "its pools alone call glibc malloc as often as glibc malloc is called for the whole "
            "trace: it cannot be faster than glibc malloc here (--policies=slab/st/stack runs it "
            "anyway)");
  EXPECT_EQ(PoolPerArenaReason(Info("slab/st/single"), usage, 5'689'542), "");
  EXPECT_EQ(PoolPerArenaReason(Info("malloc"), usage, 5'689'542), "");
  EXPECT_EQ(PoolPerArenaReason(Info("slab/st/stack"), usage, 5'689'543), "");  // under half
  usage.arenas_used = usage.arenas_single_block = 999;                         // too few to matter
  EXPECT_EQ(PoolPerArenaReason(Info("slab/st/stack"), usage, 1000), "");
}

// Recorded on one thread, a thread-safe article policy is its /st/ twin
// plus a lock; recorded on two, it is what the program needs.
TEST(PolicySafetyTest, ALockedTwinIsNotRunOnAOneThreadTrace) {
  EXPECT_EQ(LockedTwinReason(Info("pool/simple/exp/mt/single/free"), 1),
            "not run: the trace was recorded on one thread, where it is "
            "pool/simple/exp/st/single/free plus a lock, never faster "
            "(--policies=pool/simple/exp/mt/single/free runs it anyway)");
  EXPECT_EQ(LockedTwinReason(Info("slab/mt/single"), 1),
            "not run: the trace was recorded on one thread, where it is slab/st/single plus a "
            "lock, never faster (--policies=slab/mt/single runs it anyway)");
  EXPECT_EQ(LockedTwinReason(Info("pool/simple/exp/mt/single/free"), 2), "");
  EXPECT_EQ(LockedTwinReason(Info("pool/simple/exp/st/single/free"), 1), "");
  EXPECT_EQ(LockedTwinReason(Info("jemalloc"), 1), "");  // no twin
  EXPECT_EQ(LockedTwinReason(Info("boost_fast_pool"), 1), "");
}

// On a trace whose blocks all live in one arena, a pool per arena (stack)
// is one pool: the same replay as its single twin, which runs instead,
// unless the twin may not serve the trace.
TEST(PolicySafetyTest, AStackTwinIsNotRunWhereOneArenaHoldsEveryBlock) {
  ArenaUsageSummary one_arena;
  one_arena.arenas_used = 1;
  EXPECT_EQ(StackTwinReason(Info("pool/simple/exp/mt/stack/free"), one_arena, 1),
            "not run: the trace's blocks all live in one arena, where its pool per arena is one "
            "pool, the same replay as pool/simple/exp/mt/single/free, which runs "
            "(--policies=pool/simple/exp/mt/stack/free runs it anyway)");
  EXPECT_EQ(StackTwinReason(Info("slab/st/stack"), one_arena, 1),
            "not run: the trace's blocks all live in one arena, where its pool per arena is one "
            "pool, the same replay as slab/st/single, which runs (--policies=slab/st/stack runs "
            "it anyway)");
  EXPECT_EQ(StackTwinReason(Info("slab/st/single"), one_arena, 1), "");  // the twin itself
  EXPECT_EQ(StackTwinReason(Info("malloc"), one_arena, 1), "");
  ArenaUsageSummary two_arenas;
  two_arenas.arenas_used = 2;
  EXPECT_EQ(StackTwinReason(Info("slab/st/stack"), two_arenas, 1), "");
  // On two threads that do not share the arena, slab/st/single may not
  // serve the trace (its one pool would be reached by both): the stack
  // pool runs.
  EXPECT_EQ(StackTwinReason(Info("slab/st/stack"), one_arena, 2), "");
  // A shared arena: the st twin is not thread-safe, the mt one is.
  ArenaUsageSummary shared = SharedByTwoThreads();
  shared.arenas_used = 1;
  EXPECT_EQ(StackTwinReason(Info("slab/st/stack"), shared, 2), "");
  EXPECT_NE(StackTwinReason(Info("slab/mt/stack"), shared, 2), "");
}

TEST(PolicySafetyTest, NotThreadSafeOnASharedArenaSaysWhy) {
  EXPECT_EQ(UnsafeReason(Info("slab/st/single"), SharedByTwoThreads()),
            "not thread-safe: arena 0 is used by threads 1 and 2");
  EXPECT_EQ(UnsafeReason(Info("boost_fast_pool_nolock"), SharedByTwoThreads()),
            "not thread-safe: arena 0 is used by threads 1 and 2");
  EXPECT_EQ(UnsafeReason(Info("pmr_unsync_pool"), SharedByTwoThreads()),
            "not thread-safe: arena 0 is used by threads 1 and 2");
}

TEST(PolicySafetyTest, ThreadSafePoliciesAndUnsharedTracesAreFine) {
  for (const char* name : {"malloc", "new", "tcmalloc", "boost_fast_pool", "slab/mt/single",
                           "pool/boundary/exp/mt/stack/free"}) {
    EXPECT_EQ(UnsafeReason(Info(name), SharedByTwoThreads()), "") << name;
  }
  EXPECT_EQ(UnsafeReason(Info("slab/st/single"), ArenaUsageSummary()), "");
}

TEST(PolicySafetyTest, DefaultSetTakesTheThreadSafeVariantsOnSharedTraces) {
  const std::vector<std::string> defaults = {"malloc", "slab/st/stack", "slab/st/single",
                                             "small_node/st/single", "pmr_unsync_pool"};
  EXPECT_EQ(SafeVariants(defaults, ArenaUsageSummary()), defaults);
  // pmr_unsync_pool has no thread-safe variant: it stays, to be skipped with its reason.
  EXPECT_THAT(SafeVariants(defaults, SharedByTwoThreads()),
              ElementsAre("malloc", "slab/mt/stack", "slab/mt/single", "small_node/mt/single",
                          "pmr_unsync_pool"));
}

allocators::AllocatorInfo InfoWith(bool thread_safe, bool state_per_arena) {
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
  EXPECT_EQ(UnsafeReason(InfoWith(false, true), usage),
            "not thread-safe: arena 0 is used by threads 1 and 2");
  EXPECT_EQ(UnsafeReason(InfoWith(true, false), usage), "");
  // Said once: the shared-state rule adds nothing then.
  EXPECT_EQ(UnsafeSharedStateReason(InfoWith(false, false), usage, 2), "");
}

// Arenas each thread keeps to itself: a pool per arena may serve them
// unlocked; one pool for every arena may not.
TEST(PolicySafetyTest, OnePoolForEveryArenaNeedsOneThread) {
  const ArenaUsageSummary usage;  // nothing shared
  EXPECT_EQ(UnsafeSharedStateReason(InfoWith(false, true), usage, 2), "");
  EXPECT_EQ(UnsafeSharedStateReason(InfoWith(false, false), usage, 1), "");
  EXPECT_EQ(UnsafeSharedStateReason(InfoWith(true, false), usage, 2), "");
  EXPECT_EQ(UnsafeSharedStateReason(InfoWith(false, false), usage, 3),
            "not thread-safe: its one pool serves every arena, and the trace's 3 threads "
            "allocate in them");
}

}  // namespace
}  // namespace alloctrace
