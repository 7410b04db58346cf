#include "alloctrace/replayer/engine/replay_program.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/format/wire.h"
#include "alloctrace/inspect/trace_stats.h"
#include "alloctrace/pool/policies.h"
#include "alloctrace/pool/storage_policies.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

const char* const kTraces[] = {"simple_map",
                               "fixed_priority_queue",
                               "remove_if",
                               "random",
                               "shared_ptr_new",
                               "make_shared",
                               "allocate_shared",
                               "single",
                               "bulk",
                               "bulk_reversed",
                               "butterfly",
                               "records_by_value",
                               "records_shared_new",
                               "records_make_shared",
                               "list_churn",
                               "unordered_map"};

// The replay program of every checked-in trace agrees with inspect's view.
TEST(ReplayProgramTest, CheckedInTracesLoadAndAgreeWithStats) {
  for (const char* name : kTraces) {
    const std::string path = absl::StrCat("traces/", name, ".trace");
    auto program = LoadReplayProgram(path);
    ASSERT_TRUE(program.ok()) << program.status();
    auto stats = ComputeTraceStats(path);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(program->allocs, stats->allocs) << name;
    EXPECT_EQ(program->frees, stats->frees) << name;
    EXPECT_EQ(program->peak_live_bytes, stats->peak_live_bytes) << name;
    EXPECT_EQ(program->peak_live_objects, stats->peak_live_objects) << name;
    EXPECT_TRUE(program->cut_short.empty()) << name;
    EXPECT_EQ(program->live_at_end, 0u) << name;
    EXPECT_GT(program->memory_ops(), 1000u) << name;
  }
}

// An arena destroyed while objects of its are live is destroyed in the
// replay only after its last object is freed.
TEST(ReplayProgramTest, ArenaDestroyWaitsForItsLastObject) {
  const std::string path = absl::StrCat(testing::TempDir(), "/late_free.trace");
  auto w = TraceWriter::Create(path, proto::Header());
  ASSERT_TRUE(w.ok());
  (*w)->ArenaCreate(0, 5);
  (*w)->Alloc(0, 5, 0x1000, Shape{32, 1, 8});
  (*w)->Alloc(0, 5, 0x2000, Shape{32, 1, 8});
  (*w)->Free(0, 5, 0x1000);
  (*w)->ArenaDestroy(0, 5);
  (*w)->Free(0, 5, 0x2000);  // after the arena died
  ASSERT_TRUE((*w)->Finish().ok());
  auto p = LoadReplayProgram(path);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->ops.size(), 6u);
  EXPECT_EQ(p->ops[4].kind, ReplayKind::kFree);
  EXPECT_EQ(p->ops[5].kind, ReplayKind::kArenaDestroy);
  EXPECT_EQ(p->ops[5].arena, 1u);
  EXPECT_EQ(p->ops[4].bytes, 32u);
  EXPECT_EQ(p->peak_live_bytes, 64u);
}

// A class table entry no arena uses is left out, and classes of one name
// are one class (the lowest id), both said in words; inspect says the same.
TEST(ReplayProgramTest, UnusedAndSameNamedClassesAreSaid) {
  const std::string path = absl::StrCat(testing::TempDir(), "/odd_classes.trace");
  auto w = TraceWriter::Create(path, proto::Header());
  ASSERT_TRUE(w.ok());
  (*w)->DefineClass(ClassDef{2, "(anonymous namespace)::Index", 48, true});
  (*w)->DefineClass(ClassDef{3, "app::Unused", 16, true});
  (*w)->DefineClass(ClassDef{5, "(anonymous namespace)::Index", 48, true});
  (*w)->ArenaCreate(0, 10, 2);
  (*w)->ArenaCreate(0, 11, 5);
  (*w)->ArenaCreate(0, 12, 2);
  (*w)->Alloc(0, 10, 0x1000, Shape{48, 1, 8});
  (*w)->Alloc(0, 11, 0x2000, Shape{48, 1, 8});
  (*w)->Free(0, 10, 0x1000);
  (*w)->Free(0, 11, 0x2000);
  ASSERT_TRUE((*w)->Finish().ok());
  auto p = LoadReplayProgram(path);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->classes.size(), 1u);
  EXPECT_EQ(p->classes.begin()->first, 2u);
  EXPECT_EQ(p->arena_classes, (std::vector<uint32_t>{0, 2, 2, 2}));
  const std::vector<std::string> want = {
      "class 3 (\"app::Unused\") is in the trace's class table, but no arena of it was created: "
      "it has no verdict",
      "classes 2, 5 of the trace's class table are all named \"(anonymous namespace)::Index\": a "
      "replay takes them as one class, since ALLOCTRACE_POLICY and the alias lines name a class "
      "by its name (give their tags distinct names to tell them apart)"};
  EXPECT_EQ(p->class_table_notes, want);
  auto stats = ComputeTraceStats(path);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->class_table_notes, want);
  EXPECT_NE(FormatTraceStatsText(*stats).find("  note: class 3 (\"app::Unused\")"),
            std::string::npos);
}

TEST(ReplayProgramTest, BadTracesGiveTheReadersError) {
  auto missing = LoadReplayProgram("traces/no_such.trace");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("traces/no_such.trace"), std::string::npos);
}

using testing_util::AddShape;
using testing_util::CraftedTrace;
using testing_util::CraftedTraces;
using testing_util::Op;
using testing_util::ReallocChainChunk;
using testing_util::WriteTrace;

absl::StatusOr<ReplayProgram> LoadCrafted(const std::string& name) {
  for (const CraftedTrace& t : CraftedTraces()) {
    if (t.name == name) return LoadReplayProgram(WriteTrace(t.name, t.chunks, t.footer_events));
  }
  return absl::NotFoundError(name);
}

void ExpectRefused(const std::string& name, const std::string& needle) {
  auto p = LoadCrafted(name);
  ASSERT_FALSE(p.ok()) << name;
  EXPECT_NE(p.status().message().find(needle), std::string::npos)
      << "wanted: " << needle << "\ngot:    " << p.status().message();
  EXPECT_NE(p.status().message().find(name), std::string::npos) << p.status();
}

// An article pool with a pool per arena, as the replayer runs it.
using StackPool = allocators::ArticlePoolAllocator<pool::StorageSimple, pool::GrowthExponential,
                                                   pool::SingleThreaded, pool::HoldingStack, true>;
using Slab = allocators::SlabPoolAllocator<pool::SingleThreaded, pool::HoldingSingleton>;

// The hostile traces (format/test_util.h), one test each: refused with the file,
// byte, event and limit, or replayed with bounded state.
TEST(CraftedTraceTest, ThreadIdMaxReplays) {
  auto p = LoadCrafted("thread_max.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->threads, 1u);
  EXPECT_EQ(p->memory_ops(), 2u);
  const RunResult r = ReplayWith<Slab>(ViewOf(*p), RunOptions());
  EXPECT_FALSE(r.error.failed()) << r.error.words;
}

TEST(CraftedTraceTest, ObjectIdFarBeyondTheLiveCountIsRefused) {
  ExpectRefused("object_id_max.trace",
                "(chunk 0), event 0: ALLOC of object 268435455, beyond the limit of 0");
}

TEST(CraftedTraceTest, LargeArenaIdGetsADenseIndex) {
  auto p = LoadCrafted("arena_id_max.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->arena_limit, 2u);
  for (const ReplayOp& op : p->ops) EXPECT_EQ(op.arena, 1u);
  const RunResult r = ReplayWith<StackPool>(ViewOf(*p), RunOptions());
  EXPECT_FALSE(r.error.failed()) << r.error.words;
  EXPECT_LT(r.peak_rss, int64_t{64} << 20);
}

TEST(CraftedTraceTest, SizeProductThatWrapsIsRefused) {
  ExpectRefused("shape_overflow.trace",
                "event 0: shape 0, defined with this chunk, is 8589934592 x 2147483648 bytes, over "
                "the limit of 140737488355328 bytes");
}

TEST(CraftedTraceTest, AlignmentOverTheLimitIsRefused) {
  ExpectRefused("align_1g.trace", "has alignment 1073741824, over the limit of 2097152");
}

// 20,000 steps of 4 KiB (an 80 MB block at the end): a pool that copied at
// every step would move 800 GB; finishing at all shows the chain is linear.
TEST(CraftedTraceTest, LongReallocChainReplaysInLinearTime) {
  constexpr int kSteps = 20000;
  auto p = LoadReplayProgram(
      WriteTrace("long_realloc_chain.trace", {ReallocChainChunk(kSteps)}, kSteps + 1));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->reallocs_count, kSteps - 1u);
  EXPECT_EQ(p->peak_live_bytes, uint64_t{4096} * kSteps);
#if !defined(__SANITIZE_ADDRESS__)  // ASan's realloc always copies
  RunOptions options;
  options.touch = Touch::kNone;
  EXPECT_FALSE(ReplayWith<StackPool>(ViewOf(*p), options).error.failed());
  EXPECT_FALSE(ReplayWith<Slab>(ViewOf(*p), options).error.failed());
#endif
}

// The builder keeps an object's size and alignment as its shape: a realloc
// to a shape of another alignment keeps the old block's alignment, which
// later ops on the object must carry, with the new size.
TEST(CraftedTraceTest, ReallocKeepsTheOldAlignment) {
  proto::Chunk c;
  AddShape(&c, 64, 1, 64);                // shape 0
  AddShape(&c, 32, 1, 8);                 // shape 1
  AddShape(&c, 48, 1, 8);                 // shape 2
  c.add_ops(Op(OpKind::kAlloc, 0 << 1));  // object 0, 64 bytes aligned to 64
  c.add_ops(Op(OpKind::kRealloc, ZigZagEncode(0)));
  c.add_args(1);  // to 32 bytes, aligned to 8: keeps 64
  c.add_ops(Op(OpKind::kRealloc, ZigZagEncode(0)));
  c.add_args(2);                          // to 48 bytes, same again
  c.add_ops(Op(OpKind::kAlloc, 1 << 1));  // object 1, 32 bytes aligned to 8
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(1)));
  auto p = LoadReplayProgram(WriteTrace("realloc_alignment.trace", {c}, 6));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->ops.size(), 6u);
  EXPECT_EQ(p->ops[1].align_log2, 6);
  EXPECT_EQ(p->ops[2].align_log2, 6);
  EXPECT_EQ(p->ops[3].align_log2, 3);
  EXPECT_EQ(p->ops[4].kind, ReplayKind::kFree);
  EXPECT_EQ(p->ops[4].object, 0u);
  EXPECT_EQ(p->ops[4].bytes, 48u);
  EXPECT_EQ(p->ops[4].align_log2, 6);
  EXPECT_EQ(p->ops[5].object, 1u);
  EXPECT_EQ(p->ops[5].bytes, 32u);
  EXPECT_EQ(p->ops[5].align_log2, 3);
  ASSERT_EQ(p->reallocs.size(), 2u);
  EXPECT_EQ(p->reallocs[0].old_bytes, 64u);
  EXPECT_EQ(p->reallocs[1].old_bytes, 32u);
  EXPECT_EQ(p->reallocs[1].new_bytes, 48u);
}

TEST(CraftedTraceTest, GibibyteCallocIsNotWritten) {
  auto p = LoadCrafted("calloc_1g.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->ops.size(), 2u);
  EXPECT_EQ(p->ops[0].kind, ReplayKind::kAllocZeroed);
  EXPECT_EQ(p->ops[0].bytes, uint32_t{1} << 30);
  // A memset would make the whole GiB resident. (Under AddressSanitizer the
  // block's shadow, an eighth of it, is written as it is allocated.)
#if defined(__SANITIZE_ADDRESS__)
  constexpr int64_t kLimit = (int64_t{64} << 20) + (int64_t{1} << 30) / 8;
#else
  constexpr int64_t kLimit = int64_t{64} << 20;
#endif
  for (const RunResult& r : {ReplayWith<StackPool>(ViewOf(*p), RunOptions()),
                             ReplayWith<Slab>(ViewOf(*p), RunOptions())}) {
    EXPECT_FALSE(r.error.failed()) << r.error.words;
    EXPECT_LT(r.peak_rss, kLimit);
  }
}

TEST(CraftedTraceTest, ArenaEventsOnlyHaveNoMemoryOps) {
  auto p = LoadCrafted("arena_only.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->memory_ops(), 0u);
  EXPECT_EQ(p->arena_events, 6u);
  EXPECT_EQ(p->arena_limit, 4u);
}

}  // namespace
}  // namespace alloctrace
