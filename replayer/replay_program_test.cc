#include "replayer/replay_program.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "format/trace_stats.h"
#include "format/trace_writer.h"

namespace alloctrace {
namespace {

const char* const kTraces[] = {
    "simple_map",          "fixed_priority_queue", "remove_if",        "random",
    "shared_ptr_new",      "make_shared",          "allocate_shared",  "single",
    "bulk",                "bulk_reversed",        "butterfly",        "records_by_value",
    "records_shared_new",  "records_make_shared",  "list_churn",       "unordered_map"};

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

TEST(ReplayProgramTest, BadTracesGiveTheReadersError) {
  auto missing = LoadReplayProgram("traces/no_such.trace");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("traces/no_such.trace"), std::string::npos);
}

}  // namespace
}  // namespace alloctrace
