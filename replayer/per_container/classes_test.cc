#include "alloctrace/replayer/per_container/classes.h"

#include "alloctrace/replayer/engine/allocators/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(ClassSummaryTest, OrderBookHasItsTwoTaggedClasses) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram("traces/order_book.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<ClassSummary> classes = ClassesOf(*p);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].def.name, "alloctrace::workloads::OrderIndex");
  EXPECT_EQ(classes[0].memory_ops, 49834u);
  EXPECT_NEAR(classes[0].share, 0.964, 0.001);
  EXPECT_EQ(classes[0].arenas, 2u);
  EXPECT_EQ(classes[0].shared_arenas, 0u);
  EXPECT_EQ(classes[0].threads, std::vector<uint32_t>{0});
  EXPECT_EQ(classes[1].def.name, "alloctrace::workloads::PriceLevels");
  MixSpec spec;
  spec.by_class[1] = "slab/st/stack";
  EXPECT_EQ(MixName(spec, classes), "OrderIndex=slab/st/stack");
  EXPECT_EQ(MixName(MixSpec(), classes), "heap");
  EXPECT_EQ(MixUnsafeReason(spec, classes, allocators::AllocatorInfosByName()), "");
}

// A service: class 1 per thread (arena 1 thread 0's, arena 2 thread 1's),
// class 2 one registry (arena 3) both threads use; each arena created, as
// a recorded trace creates every arena of a class.
ReplayProgram Service() {
  ReplayProgram p;
  p.arena_limit = 4;
  p.arena_classes = {0, 1, 1, 2};
  p.classes[1] = ClassDef{1, "app::Worker", 32, true};
  p.classes[2] = ClassDef{2, "app::Registry", 32, true};
  auto op = [&](uint32_t object, ReplayKind kind, uint32_t arena, uint32_t thread) {
    p.ops.push_back(ReplayOp{object, 32, arena, kind, 3, 0});
    p.op_threads.push_back(thread);
    if (kind == ReplayKind::kAlloc) ++p.allocs;
    if (kind == ReplayKind::kFree) ++p.frees;
  };
  op(0, ReplayKind::kArenaCreate, 1, 0);
  op(0, ReplayKind::kArenaCreate, 2, 1);
  op(0, ReplayKind::kArenaCreate, 3, 0);
  op(0, ReplayKind::kAlloc, 1, 0);
  op(1, ReplayKind::kAlloc, 2, 1);
  op(2, ReplayKind::kAlloc, 3, 0);
  op(2, ReplayKind::kFree, 3, 1);
  op(3, ReplayKind::kAlloc, 3, 0);  // thread 0 back in the registry: shared
  op(3, ReplayKind::kFree, 3, 0);
  op(0, ReplayKind::kFree, 1, 0);
  op(1, ReplayKind::kFree, 2, 1);
  return p;
}

// A map a worker (thread 1) fills and the main thread (0) frees after
// join(): handed off, not shared.
TEST(MixSafetyTest, AHandOffIsSafeForAPoolPerContainerInTheProgramOnly) {
  ReplayProgram p;
  p.arena_limit = 3;
  p.arena_classes = {0, 1, 2};
  p.classes[1] = ClassDef{1, "app::Results", 32, true};
  p.classes[2] = ClassDef{2, "app::Index", 32, true};
  auto op = [&](uint32_t object, ReplayKind kind, uint32_t arena, uint32_t thread) {
    p.ops.push_back(ReplayOp{object, 32, arena, kind, 3, 0});
    p.op_threads.push_back(thread);
  };
  op(0, ReplayKind::kArenaCreate, 1, 1);
  op(0, ReplayKind::kArenaCreate, 2, 0);
  op(0, ReplayKind::kAlloc, 1, 1);
  op(1, ReplayKind::kAlloc, 1, 1);
  op(2, ReplayKind::kAlloc, 2, 0);
  op(0, ReplayKind::kFree, 1, 0);  // after join()
  op(1, ReplayKind::kFree, 1, 0);
  op(2, ReplayKind::kFree, 2, 0);
  const std::vector<ClassSummary> classes = ClassesOf(p);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].def.id, 1u);
  EXPECT_EQ(classes[0].shared_arenas, 0u);
  EXPECT_EQ(classes[0].handed_off_arenas, 1u);
  const auto infos = allocators::AllocatorInfosByName();
  MixSpec spec;
  spec.by_class[1] = "slab/st/stack";
  EXPECT_EQ(MixUnsafeReason(spec, classes, infos, HandOffs::kSequential), "");
  EXPECT_THAT(MixUnsafeReason(spec, classes, infos),
              testing::HasSubstr("1 of Results's arenas pass from one thread to another"));
  // One pool for the process is reached by both threads even so.
  spec.by_class[1] = "slab/st/single";
  EXPECT_THAT(MixUnsafeReason(spec, classes, infos, HandOffs::kSequential),
              testing::HasSubstr("threads 0, 1 reach it"));
}

TEST(MixSafetyTest, ASingleThreadedPoolServesOnlyWhatOneThreadReaches) {
  const ReplayProgram p = Service();
  const std::vector<ClassSummary> classes = ClassesOf(p);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].def.id, 1u);
  EXPECT_EQ(classes[0].threads, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(classes[0].shared_arenas, 0u);
  EXPECT_EQ(classes[1].shared_arenas, 1u);
  const auto infos = allocators::AllocatorInfosByName();
  MixSpec spec;
  spec.by_class[1] = "slab/st/stack";  // a pool per container: each one thread's
  EXPECT_EQ(MixUnsafeReason(spec, classes, infos), "");
  spec.by_class[2] = "slab/mt/stack";
  EXPECT_EQ(MixUnsafeReason(spec, classes, infos), "");
  spec.by_class[2] = "slab/st/stack";
  EXPECT_EQ(MixUnsafeReason(spec, classes, infos),
            "slab/st/stack is not thread-safe, and 1 of Registry's arenas are used by several "
            "threads");
  spec.by_class.erase(2);
  spec.by_class[1] = "slab/st/single";  // one pool, reached by both threads
  EXPECT_EQ(MixUnsafeReason(spec, classes, infos),
            "slab/st/single keeps one pool for the process, and threads 0, 1 reach it (through "
            "Worker)");
}

}  // namespace
}  // namespace alloctrace
