#include "alloctrace/inspect/arena_usage.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/trace_writer.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::TempPath;

// Reads `path` and feeds every memory event to an ArenaUsage, as the
// replay program's builder does.
ArenaUsageSummary UsageOf(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  ArenaUsage usage;
  std::vector<uint32_t> object_arena;
  absl::Status st = (*reader)->ForEachEvent([](const std::vector<Event>&) {},
                                            [&](const Event& e) -> absl::Status {
                                              if (e.object >= object_arena.size())
                                                object_arena.resize(e.object + 1);
                                              switch (e.kind) {
                                                case OpKind::kAlloc:
                                                  usage.Alloc(e.arena, e.thread);
                                                  object_arena[e.object] = e.arena;
                                                  break;
                                                case OpKind::kFree:
                                                  usage.Free(object_arena[e.object], e.thread);
                                                  break;
                                                default:
                                                  break;
                                              }
                                              return absl::OkStatus();
                                            });
  EXPECT_TRUE(st.ok()) << st;
  return usage.Summarize(**reader);
}

std::unique_ptr<TraceWriter> Writer(const std::string& path) {
  auto w = TraceWriter::Create(path, proto::Header());
  EXPECT_TRUE(w.ok()) << w.status();
  return *std::move(w);
}

TEST(ArenaUsageTest, OneThreadPerArenaIsNotShared) {
  const std::string path = TempPath("unshared.trace");
  auto w = Writer(path);
  w->ArenaCreate(7, 1);
  w->ArenaCreate(9, 2);
  w->Alloc(7, 1, 0x1000, Shape{8, 1, 8});
  w->Alloc(9, 2, 0x2000, Shape{8, 1, 8});
  w->Free(7, 1, 0x1000);
  w->Free(9, 2, 0x2000);
  ASSERT_TRUE(w->Finish().ok());
  const ArenaUsageSummary s = UsageOf(path);
  EXPECT_EQ(s.shared_count, 0u);
  EXPECT_EQ(s.SharingWords(), "");
}

TEST(ArenaUsageTest, CrossThreadFreeSharesTheArenaAndNamesTheTracesThreadIds) {
  const std::string path = TempPath("shared.trace");
  auto w = Writer(path);
  // Producer 11 allocates in the global heap; consumers 12 and 13 free.
  for (uint64_t i = 0; i < 4; ++i) w->Alloc(11, 0, 0x1000 + 16 * i, Shape{16, 1, 8});
  w->Free(12, 0, 0x1000);
  w->Free(13, 0, 0x1010);
  w->Free(12, 0, 0x1020);
  w->Free(11, 0, 0x1030);
  ASSERT_TRUE(w->Finish().ok());
  const ArenaUsageSummary s = UsageOf(path);
  ASSERT_EQ(s.shared_count, 1u);
  ASSERT_EQ(s.shared.size(), 1u);
  EXPECT_EQ(s.shared[0].arena, 0u);
  EXPECT_EQ(s.shared[0].threads, (std::vector<uint32_t>{11, 12, 13}));
  EXPECT_EQ(s.shared[0].thread_count, 3u);
  EXPECT_EQ(s.SharingWords(), "arena 0 is used by threads 11, 12 and 13");
}

TEST(ArenaUsageTest, ListsAFewThreadsAndCountsTheRest) {
  const std::string path = TempPath("many_threads.trace");
  auto w = Writer(path);
  for (uint32_t t = 0; t < 40; ++t) w->Alloc(t, 0, 0x1000 + 16 * t, Shape{16, 1, 8});
  ASSERT_TRUE(w->Finish().ok());
  const ArenaUsageSummary s = UsageOf(path);
  ASSERT_EQ(s.shared.size(), 1u);
  EXPECT_EQ(s.shared[0].threads.size(), ArenaUsageSummary::kMaxListedThreads);
  EXPECT_EQ(s.shared[0].thread_count, 40u);
  EXPECT_NE(s.SharingWords().find("and 24 more"), std::string::npos) << s.SharingWords();
}

TEST(ArenaUsageTest, FlagsTracesWhereMostArenasHoldOneBlock) {
  const std::string path = TempPath("strings.trace");
  auto w = Writer(path);
  // 100 "strings", each its own arena with one block, and one map arena
  // holding 50 nodes.
  for (uint32_t a = 1; a <= 100; ++a) {
    w->ArenaCreate(0, a);
    w->Alloc(0, a, 0x100000 + 64 * a, Shape{1, 40, 1});
  }
  w->ArenaCreate(0, 101);
  for (uint64_t i = 0; i < 50; ++i) w->Alloc(0, 101, 0x900000 + 64 * i, Shape{48, 1, 8});
  ASSERT_TRUE(w->Finish().ok());
  const ArenaUsageSummary s = UsageOf(path);
  EXPECT_EQ(s.arenas_used, 101u);
  EXPECT_EQ(s.arenas_single_block, 100u);
  EXPECT_EQ(s.ShapeWords().rfind("100 of 101 arenas never hold more than 1 block", 0), 0u)
      << s.ShapeWords();
}

TEST(ArenaUsageTest, SaysNothingOfTracesWithFewOrBigArenas) {
  const std::string path = TempPath("maps.trace");
  auto w = Writer(path);
  for (uint32_t a = 1; a <= 20; ++a) {
    w->ArenaCreate(0, a);
    for (uint64_t i = 0; i < 3; ++i) w->Alloc(0, a, 0x100000 + 4096 * a + 64 * i, Shape{48, 1, 8});
  }
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(UsageOf(path).ShapeWords(), "");
}

}  // namespace
}  // namespace alloctrace
