// Records the multi-threaded workloads through the real TraceAllocator and
// Recorder, reads each trace back, and checks what a per-thread replay and
// the thread-safety rules rely on: the trace names several threads, each
// event carries the thread that made it (as many threads as the workload
// ran, a thread's own map only on that thread), and producer_consumer,
// larson and migration free objects on another thread than the one that
// allocated them, in an arena used by several threads.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/workloads/workloads.h"
#include "gtest/gtest.h"

namespace alloctrace::workloads {
namespace {

struct ThreadUse {
  std::set<uint32_t> threads;                            // threads with an alloc or free
  std::map<uint32_t, std::set<uint32_t>> arena_threads;  // arena -> threads allocating or freeing
  uint64_t allocs = 0, frees = 0;
  uint64_t cross_thread_frees = 0;
  uint64_t footer_threads = 0;

  size_t MostThreadsInOneArena() const {
    size_t most = 0;
    for (const auto& [arena, threads] : arena_threads) most = std::max(most, threads.size());
    return most;
  }
};

ThreadUse RecordAndRead(const std::string& workload, const std::vector<std::string>& overrides) {
  ThreadUse use;
  const WorkloadInfo* info = FindWorkload(workload);
  EXPECT_NE(info, nullptr) << workload;
  if (info == nullptr) return use;
  absl::StatusOr<WorkloadParams> params = info->ParseParams(overrides);
  EXPECT_TRUE(params.ok()) << params.status();
  RecordingOptions options;
  options.path = absl::StrCat(::testing::TempDir(), "/", workload, ".trace");
  options.workload = workload;
  EXPECT_TRUE(Recorder::Global().Start(options).ok());
  info->run_traced(*params, 1);
  RecordingStats stats;
  EXPECT_TRUE(Recorder::Global().Stop(&stats).ok());
  EXPECT_EQ(stats.dropped_events, 0u) << workload;
  EXPECT_EQ(stats.unmatched_frees, 0u) << workload;

  auto reader = TraceReader::Open(options.path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return use;
  std::vector<uint32_t> alloc_thread;  // object id -> thread that allocated it
  std::vector<Event> events;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&events);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    for (const Event& e : events) {
      if (e.kind == OpKind::kAlloc) {
        ++use.allocs;
        if (e.object >= alloc_thread.size()) alloc_thread.resize(e.object + 1);
        alloc_thread[e.object] = e.thread;
      } else if (e.kind == OpKind::kFree) {
        ++use.frees;
        use.cross_thread_frees += alloc_thread[e.object] != e.thread;
      } else {
        continue;
      }
      use.threads.insert(e.thread);
      use.arena_threads[e.arena].insert(e.thread);
    }
  }
  EXPECT_TRUE((*reader)->has_footer()) << workload;
  use.footer_threads = (*reader)->footer().threads();
  EXPECT_EQ(use.allocs, use.frees) << workload;
  return use;
}

TEST(RecordedThreadsTest, ProducerConsumerFreesMessagesOnConsumerThreads) {
  const ThreadUse use = RecordAndRead(
      "producer_consumer", {"producers=2", "consumers=2", "messages=3000", "queue_capacity=32"});
  // Two producers, at least one consumer; the main thread makes the queue.
  EXPECT_GE(use.threads.size(), 3u);
  EXPECT_GE(use.cross_thread_frees, 2u * 3000);
  EXPECT_GE(use.MostThreadsInOneArena(), 3u) << "the shared message arena";
}

TEST(RecordedThreadsTest, LarsonRecordsEachGenerationAsItsOwnThread) {
  const ThreadUse use =
      RecordAndRead("larson", {"threads=2", "generations=3", "operations=1000", "slots=100"});
  // Thread ids are per OS thread: six workers; the lineages' launchers
  // record nothing.
  EXPECT_EQ(use.threads.size(), 6u);
  EXPECT_EQ(use.footer_threads, 6u);
  EXPECT_GT(use.cross_thread_frees, 0u);
  EXPECT_EQ(use.MostThreadsInOneArena(), 6u) << "the global heap";
}

TEST(RecordedThreadsTest, MigrationFreesAcrossThreadsInOneArena) {
  const ThreadUse use = RecordAndRead("migration", {"threads=3", "operations=3000", "slots=200"});
  // Three workers and the calling thread, which frees what is left.
  EXPECT_GE(use.threads.size(), 3u);
  EXPECT_LE(use.threads.size(), 4u);
  EXPECT_GT(use.cross_thread_frees, 0u);
  EXPECT_GE(use.MostThreadsInOneArena(), 3u);
}

TEST(RecordedThreadsTest, ThreadMapChurnKeepsEachArenaOnOneThread) {
  const ThreadUse use = RecordAndRead("thread_map_churn", {"threads=3", "operations=5000"});
  EXPECT_EQ(use.threads.size(), 3u);
  EXPECT_EQ(use.arena_threads.size(), 3u);
  std::set<uint32_t> owners;
  for (const auto& [arena, threads] : use.arena_threads) {
    ASSERT_EQ(threads.size(), 1u) << "arena " << arena;
    owners.insert(*threads.begin());
  }
  EXPECT_EQ(owners.size(), 3u) << "each thread's map is an arena of its own";
  EXPECT_EQ(use.cross_thread_frees, 0u);
}

}  // namespace
}  // namespace alloctrace::workloads
