// Records workloads whose nodes move between containers through the real
// TraceAllocator and Recorder, reads the trace back, and checks that every
// free is recorded in the arena that allocated the object, and that no arena
// is used after it was destroyed: what a replay with one pool per arena
// needs. And that a workload with tagged containers records their classes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/workloads/container_workloads.h"
#include "alloctrace/tracer/workloads/workloads.h"
#include "gtest/gtest.h"

namespace alloctrace::workloads {
namespace {

void ExpectArenasKept(const std::string& workload, const std::vector<std::string>& overrides,
                      uint64_t min_arenas) {
  const WorkloadInfo* info = FindWorkload(workload);
  ASSERT_NE(info, nullptr);
  absl::StatusOr<WorkloadParams> params = info->ParseParams(overrides);
  ASSERT_TRUE(params.ok()) << params.status();
  RecordingOptions options;
  options.path = absl::StrCat(::testing::TempDir(), "/", workload, ".trace");
  options.workload = workload;
  ASSERT_TRUE(Recorder::Global().Start(options).ok());
  info->run_traced(*params, 1);
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());

  auto reader = TraceReader::Open(options.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<uint32_t> object_arena;
  std::vector<uint8_t> destroyed;
  uint64_t frees = 0, moved_arena_frees = 0, arenas = 0;
  std::vector<Event> events;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&events);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    for (const Event& e : events) {
      if (e.arena >= destroyed.size()) destroyed.resize(e.arena + 1, 0);
      switch (e.kind) {
        case OpKind::kArenaCreate:
          destroyed[e.arena] = 0;
          ++arenas;
          break;
        case OpKind::kArenaDestroy:
          destroyed[e.arena] = 1;
          break;
        case OpKind::kAlloc:
          ASSERT_FALSE(destroyed[e.arena]) << "alloc in destroyed arena " << e.arena;
          if (e.object >= object_arena.size()) object_arena.resize(e.object + 1);
          object_arena[e.object] = e.arena;
          break;
        case OpKind::kFree:
          ++frees;
          ASSERT_FALSE(destroyed[e.arena]) << "free in destroyed arena " << e.arena;
          moved_arena_frees += object_arena[e.object] != e.arena;
          break;
        default:
          break;
      }
    }
  }
  EXPECT_TRUE((*reader)->has_footer());
  EXPECT_GT(frees, 1000u) << workload;
  EXPECT_GE(arenas, min_arenas) << workload;
  EXPECT_EQ(moved_arena_frees, 0u) << workload << ": frees recorded in another arena";
}

TEST(RecordedArenasTest, SwapSpliceKeepsEachNodeInItsArena) {
  ExpectArenasKept("swap_splice", {"entries=300", "operations=20000"}, 5);
}

TEST(RecordedClassesTest, OrderBookRecordsTwoTaggedClassesOfTwoArenasEach) {
  const WorkloadInfo* info = FindWorkload("order_book");
  ASSERT_NE(info, nullptr);
  absl::StatusOr<WorkloadParams> params = info->ParseParams({"orders=5000"});
  ASSERT_TRUE(params.ok()) << params.status();
  RecordingOptions options;
  options.path = absl::StrCat(::testing::TempDir(), "/order_book.trace");
  ASSERT_TRUE(Recorder::Global().Start(options).ok());
  info->run_traced(*params, 1);
  ASSERT_TRUE(Recorder::Global().Stop().ok());

  auto reader = TraceReader::Open(options.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::map<std::string, int> arenas_by_class;  // class name -> arenas created
  absl::Status s = (*reader)->ForEachEvent(
      [](const std::vector<Event>&) {},
      [&](const Event& e) {
        if (e.kind == OpKind::kArenaCreate) {
          ++arenas_by_class[e.shape == 0 ? "" : (*reader)->classes().at(e.shape).name];
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(arenas_by_class,
            (std::map<std::string, int>{{"alloctrace::workloads::OrderIndex", 2},
                                        {"alloctrace::workloads::PriceLevels", 2}}));
  for (const auto& [id, c] : (*reader)->classes()) {
    EXPECT_TRUE(c.tagged) << c.name;
    EXPECT_EQ(c.elem_size, c.name == "alloctrace::workloads::OrderIndex"
                               ? sizeof(std::pair<const int64_t, container_internal::Order>)
                               : sizeof(std::pair<const int, int64_t>))
        << c.name;
  }
}

TEST(RecordedArenasTest, ListChurnKeepsEachNodeInItsArena) {
  ExpectArenasKept("list_churn", {"initial=300", "operations=20000"}, 1);
}

}  // namespace
}  // namespace alloctrace::workloads
