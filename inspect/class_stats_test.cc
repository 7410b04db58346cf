// The per-class table of `inspect`, on small traces written for it: two
// classes, none, and a whole-program capture's.
#include "alloctrace/inspect/class_stats.h"

#include <string>
#include <vector>

#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/inspect/trace_html.h"
#include "alloctrace/inspect/trace_stats.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::TempPath;

const ClassDef kOrders{1, "app::OrderIndex", 48, true};
const ClassDef kLevels{2, "std::pair<const int, double>", 16, false};

// Orders: two arenas built once (fill, then free everything), each on its
// own thread; 64-byte blocks. Levels: one arena churned (alloc, free,
// alloc, free ...) by two threads; blocks of 32 and 96 bytes.
std::string WriteTwoClassTrace() {
  const std::string path = TempPath("two_classes.trace");
  auto w = TraceWriter::Create(path, proto::Header(), /*chunk_events=*/16);
  EXPECT_TRUE(w.ok()) << w.status();
  TraceWriter& t = **w;
  t.DefineClass(kOrders);
  t.DefineClass(kLevels);
  t.ArenaCreate(0, 1, kOrders.id);
  t.ArenaCreate(1, 2, kOrders.id);
  t.ArenaCreate(0, 3, kLevels.id);
  uint64_t address = 0x1000;
  for (uint32_t arena = 1; arena <= 2; ++arena) {
    const uint32_t thread = arena - 1;
    for (int i = 0; i < 10; ++i) t.Alloc(thread, arena, address + 0x100 * i, Shape{64, 1, 8});
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(t.Free(thread, arena, address + 0x100 * i));
    t.ArenaDestroy(thread, arena);
    address += 0x10000;
  }
  for (int i = 0; i < 6; ++i) {
    const uint32_t thread = i % 2;
    t.Alloc(thread, 3, address, Shape{i < 4 ? 32u : 96u, 1, 8});
    EXPECT_TRUE(t.Free(thread, 3, address));
  }
  t.ArenaDestroy(0, 3);
  EXPECT_TRUE(t.Finish().ok());
  return path;
}

TEST(ClassStatsTest, TwoClasses) {
  absl::StatusOr<TraceStats> st = ComputeTraceStats(WriteTwoClassTrace());
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_TRUE(st->has_class_table);
  ASSERT_EQ(st->classes.size(), 2u);
  const ClassSummary& orders = st->classes[0];
  EXPECT_EQ(orders.def, kOrders);
  EXPECT_EQ(orders.arenas, 2u);
  EXPECT_EQ(orders.memory_ops, 40u);
  EXPECT_DOUBLE_EQ(orders.share, 40.0 / 52.0);
  EXPECT_EQ(orders.min_block, 64u);
  EXPECT_EQ(orders.median_block, 64u);
  EXPECT_EQ(orders.max_block, 64u);
  EXPECT_EQ(orders.peak_live_bytes, 640u) << "one arena after the other, never both full";
  EXPECT_EQ(orders.shared_arenas, 0u);
  EXPECT_EQ(orders.threads, (std::vector<uint32_t>{0, 1})) << "an arena each, one thread each";
  EXPECT_EQ(orders.built_once_arenas, 2u);
  EXPECT_EQ(orders.churned_arenas, 0u);

  const ClassSummary& levels = st->classes[1];
  EXPECT_EQ(levels.def, kLevels);
  EXPECT_EQ(levels.arenas, 1u);
  EXPECT_EQ(levels.memory_ops, 12u);
  EXPECT_EQ(levels.allocs, 6u);
  EXPECT_EQ(levels.min_block, 32u);
  EXPECT_EQ(levels.median_block, 32u);
  EXPECT_EQ(levels.max_block, 96u);
  EXPECT_EQ(levels.peak_live_bytes, 96u);
  EXPECT_EQ(levels.shared_arenas, 1u);
  EXPECT_EQ(levels.threads, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(levels.churned_arenas, 1u);

  const std::string text = FormatTraceStatsText(*st);
  EXPECT_NE(text.find("classes: 2 "), std::string::npos) << text;
  EXPECT_NE(text.find("built once                 app::OrderIndex\n"), std::string::npos) << text;
  EXPECT_NE(text.find("several threads"), std::string::npos) << text;
  EXPECT_NE(text.find("one thread each"), std::string::npos) << text;
  EXPECT_NE(text.find("churned                    std::pair<const int, double>\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("32/32/96"), std::string::npos) << text;
  const std::string html = FormatTraceStatsHtml(*st, "two_classes.trace");
  EXPECT_NE(html.find("id=\"class-table\""), std::string::npos);
  EXPECT_NE(html.find("<td>std::pair&lt;const int, double&gt;</td>"), std::string::npos);
  const std::string json = FormatTraceStatsJson(*st);
  EXPECT_NE(json.find("\"name\": \"app::OrderIndex\", \"tagged\": true, \"elem_size\": 48"),
            std::string::npos)
      << json;
}

// Results: two maps, each filled by a worker (threads 1 and 2) and freed by
// the main thread (0) after join(): handed off, never interleaved.
TEST(ClassStatsTest, AMapFreedAfterJoinIsHandedOffNotShared) {
  const std::string path = TempPath("hand_off.trace");
  auto w = TraceWriter::Create(path, proto::Header());
  ASSERT_TRUE(w.ok()) << w.status();
  TraceWriter& t = **w;
  const ClassDef results{1, "app::Results", 32, true};
  t.DefineClass(results);
  for (uint32_t arena = 1; arena <= 2; ++arena) t.ArenaCreate(arena, arena, results.id);
  for (uint32_t arena = 1; arena <= 2; ++arena) {
    for (int i = 0; i < 4; ++i) t.Alloc(arena, arena, 0x1000 * arena + 0x40 * i, Shape{32, 1, 8});
  }
  for (uint32_t arena = 1; arena <= 2; ++arena) {
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(t.Free(0, arena, 0x1000 * arena + 0x40 * i));
    t.ArenaDestroy(0, arena);
  }
  ASSERT_TRUE(t.Finish().ok());
  absl::StatusOr<TraceStats> st = ComputeTraceStats(path);
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->classes.size(), 1u);
  EXPECT_EQ(st->classes[0].shared_arenas, 0u);
  EXPECT_EQ(st->classes[0].handed_off_arenas, 2u);
  EXPECT_EQ(st->classes[0].threads, (std::vector<uint32_t>{0, 1, 2}));
  const std::string text = FormatTraceStatsText(*st);
  EXPECT_NE(text.find("2 of 2 handed off"), std::string::npos) << text;
}

// Arena 1 passes from thread 0 to 1 to 2, each using it in one stretch;
// arena 2 (a capture's one heap) has three threads taking turns, a
// switch at every event, 300,000 times.
TEST(ClassStatsTest, ThreadsTakingTurnsShareAnArenaAndAChainHandsOff) {
  ClassStatsBuilder b;
  b.ArenaCreated(1, 1);
  b.ArenaCreated(2, 2);
  for (uint32_t thread = 0; thread < 3; ++thread) {
    for (int i = 0; i < 3; ++i) b.Alloc(1, thread, 16);
  }
  for (uint32_t i = 0; i < 300000; ++i) b.Alloc(2, i % 3, 16);
  const absl::flat_hash_map<uint32_t, ClassDef> table = {{1, ClassDef{1, "Chain", 16, true}},
                                                         {2, ClassDef{2, "Heap", 16, true}}};
  const std::vector<ClassSummary> s = b.Summarize(table);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].handed_off_arenas, 1u);
  EXPECT_EQ(s[0].shared_arenas, 0u);
  EXPECT_EQ(s[0].threads, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(s[1].shared_arenas, 1u);
  EXPECT_EQ(s[1].handed_off_arenas, 0u);
  EXPECT_EQ(s[1].threads, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(s[1].memory_ops, 300000u);
}

TEST(ClassStatsTest, NoClassTableIsOneUnnamedClass) {
  for (const bool captured : {false, true}) {
    const std::string path = TempPath("no_classes.trace");
    proto::Header header;
    if (captured) (*header.mutable_labels())["capture"] = "LD_PRELOAD liballoctrace_capture.so";
    auto w = TraceWriter::Create(path, header);
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = 0; i < 4; ++i) (*w)->Alloc(0, 0, 0x1000 + 0x100 * i, Shape{24, 1, 8});
    for (int i = 0; i < 4; ++i) ASSERT_TRUE((*w)->Free(0, 0, 0x1000 + 0x100 * i));
    ASSERT_TRUE((*w)->Finish().ok());
    absl::StatusOr<TraceStats> st = ComputeTraceStats(path);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_FALSE(st->has_class_table);
    ASSERT_EQ(st->classes.size(), 1u);
    EXPECT_EQ(st->classes[0].def.id, 0u);
    EXPECT_EQ(st->classes[0].memory_ops, 8u);
    const std::string text = FormatTraceStatsText(*st);
    EXPECT_NE(text.find("classes: one class (unnamed): "), std::string::npos) << text;
    EXPECT_EQ(text.find("whole-program capture") != std::string::npos, captured) << text;
    EXPECT_NE(text.find("1 arena, 8 memory ops, blocks of 24 bytes, peak live 96 bytes"),
              std::string::npos)
        << text;
  }
}

}  // namespace
}  // namespace alloctrace
