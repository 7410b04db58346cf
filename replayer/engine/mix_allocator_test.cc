#include "alloctrace/replayer/engine/mix_allocator.h"

#include <map>
#include <set>
#include <string>

#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/runnable_policies.h"
#include "alloctrace/replayer/engine/windows.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(MixSpecTest, WordsReadBackAsTheSpec) {
  MixSpec spec;
  spec.by_class = {{2, "slab/mt/stack"}, {1, "slab/st/stack"}};
  spec.rest = "jemalloc";
  EXPECT_EQ(MixSpecWord(spec), "1=slab/st/stack;2=slab/mt/stack;*=jemalloc");
  absl::StatusOr<MixSpec> back = ParseMixSpecWord(MixSpecWord(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, spec);
}

TEST(MixSpecTest, AMalformedEntryIsNamed) {
  for (const char* word :
       {"x=slab/st/stack;*=malloc", "1=;*=malloc", "1=a;1=b;*=malloc", "0=malloc;*=malloc",
        "1=malloc", "*=malloc;*=new", "1:malloc;*=malloc"}) {
    absl::StatusOr<MixSpec> spec = ParseMixSpecWord(word);
    EXPECT_FALSE(spec.ok()) << word;
  }
  EXPECT_EQ(ParseMixSpecWord("1=a;1=b;*=malloc").status().message(),
            "mix entry '1=b' is not class-id=policy or *=policy, once each");
}

// glibc malloc that counts the blocks it serves per arena, to see which
// slot a mix routes each arena to.
template <int kSlot>
struct CountingMalloc : allocators::MallocAllocator {
  static inline std::map<uint32_t, int> allocations;
  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    ++allocations[arena];
    return MallocAllocator::Allocate(bytes, align, arena);
  }
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    ++allocations[arena];
    return MallocAllocator::Reallocate(p, old_bytes, new_bytes, align, arena);
  }
};

// order_book's orders (class 1, OrderIndex: arenas 1 and 3) and price
// levels (class 2: arenas 2 and 4), each served by its own slot.
TEST(MixAllocatorTest, EachArenaIsServedByItsClassPolicy) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/order_book.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->classes.size(), 2u);
  EXPECT_EQ(p->classes.at(1).name, "alloctrace::workloads::OrderIndex");
  EXPECT_EQ(p->arena_class_conflicts, 0u);
  MixSpec spec;
  spec.by_class[1] = "orders";
  spec.rest = "rest";
  const std::map<std::string, MakeErasedFn> makers = {{"orders", &MakeErased<CountingMalloc<1>>},
                                                      {"rest", &MakeErased<CountingMalloc<0>>}};
  absl::StatusOr<MixPlan> plan = MakeMixPlan(spec, ViewOf(*p), makers);
  ASSERT_TRUE(plan.ok()) << plan.status();
  MixAllocator::UsePlan(&*plan);
  RunOptions options;
  options.max_passes = 1;
  const RunResult r = ReplayWith<MixAllocator>(ViewOf(*p), options);
  EXPECT_FALSE(r.error.failed()) << r.error.words;
  std::set<uint32_t> orders, rest;
  for (const auto& [arena, n] : CountingMalloc<1>::allocations) orders.insert(arena);
  for (const auto& [arena, n] : CountingMalloc<0>::allocations) rest.insert(arena);
  EXPECT_EQ(orders, (std::set<uint32_t>{1, 3}));
  EXPECT_EQ(rest, (std::set<uint32_t>{2, 4}));
}

TEST(MixAllocatorTest, EveryRegistryPolicyReplaysAsASlot) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/order_book.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  std::map<std::string, MakeErasedFn> makers;
  for (const auto& [name, policy] : RunnablePolicies()) makers[name] = policy.make_erased;
  for (const char* word :
       {"1=slab/st/stack;2=slab/st/single;*=malloc",
        "1=small_node/st/stack;*=pool/boundary/exp/st/stack/free", "2=bump;*=slab/mt/single"}) {
    absl::StatusOr<MixSpec> spec = ParseMixSpecWord(word);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<MixPlan> plan = MakeMixPlan(*spec, ViewOf(*p), makers);
    ASSERT_TRUE(plan.ok()) << plan.status();
    MixAllocator::UsePlan(&*plan);
    RunOptions options;
    options.max_passes = 2;
    const RunResult r = MixRunnablePolicy().run(ViewOf(*p), options);
    EXPECT_FALSE(r.error.failed()) << word << ": " << r.error.words;
    EXPECT_EQ(r.ops, p->memory_ops()) << word;
  }
}

// Windows of a mix: each window's rebuilt heap and what it leaves go to the
// pool of each block's class (a small-node pool CHECKs a block it did not
// serve), whatever ids the trace reused.
TEST(MixAllocatorTest, WindowsOfAMixFreeEachBlockIntoItsOwnPool) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/order_book.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  std::map<std::string, MakeErasedFn> makers;
  for (const auto& [name, policy] : RunnablePolicies()) makers[name] = policy.make_erased;
  absl::StatusOr<MixSpec> spec = ParseMixSpecWord("1=small_node/st/stack;*=small_node/st/single");
  ASSERT_TRUE(spec.ok());
  const ReplayView view = ViewOf(*p);
  absl::StatusOr<MixPlan> plan = MakeMixPlan(*spec, view, makers);
  ASSERT_TRUE(plan.ok()) << plan.status();
  MixAllocator::UsePlan(&*plan);
  const WindowShape shape = ShapeFor(view.num_ops);
  for (int round = 1; round <= 3; ++round) {
    const std::vector<ReplayWindow> windows =
        PlanWindows(view.num_ops, shape, StratumWeights(view, shape), 7, round);
    const RunResult r = MixRunnablePolicy().run_windows(view, windows, nullptr, RunOptions());
    EXPECT_FALSE(r.error.failed()) << r.error.words;
    EXPECT_EQ(r.ops, p->memory_ops());
  }
}

TEST(MixAllocatorTest, AnUnknownPolicyIsNamed) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/order_book.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<MixSpec> spec = ParseMixSpecWord("1=slab/xx;*=malloc");
  ASSERT_TRUE(spec.ok());
  absl::StatusOr<MixPlan> plan =
      MakeMixPlan(*spec, ViewOf(*p), {{"malloc", &MakeErased<allocators::MallocAllocator>}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(), "mix names unknown policy slab/xx");
}

}  // namespace
}  // namespace alloctrace
