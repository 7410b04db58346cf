#include "alloctrace/tracer/recorder.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/inspect/trace_stats.h"
#include "alloctrace/tracer/trace_allocator.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(testing::TempDir(), "/", name);
}

template <typename T>
using TA = TraceAllocator<T>;
using TracedMap = std::map<int, int, std::less<int>, TA<std::pair<const int, int>>>;

TEST(RecorderTest, StartTwiceFailsAndStopWithoutStartIsHarmless) {
  EXPECT_TRUE(Recorder::Global().Stop().ok());
  RecordingOptions o;
  o.path = TempPath("twice.trace");
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(Recorder::Global().Start(o)));
  EXPECT_TRUE(Recorder::Global().recording());
  ASSERT_TRUE(Recorder::Global().Stop().ok());
  EXPECT_FALSE(Recorder::Global().recording());
}

TEST(RecorderTest, UnwritablePathIsAnError) {
  RecordingOptions o;
  o.path = "/nonexistent-dir/x.trace";
  absl::Status s = Recorder::Global().Start(o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x.trace"), std::string::npos) << s;
  EXPECT_FALSE(Recorder::Global().recording());
}

TEST(RecorderTest, EventsOutsideARecordingAreNotRecorded) {
  // The recorder has been started before in this process, so no auto-start.
  TracedMap before;
  before[1] = 1;
  RecordingOptions o;
  o.path = TempPath("outside.trace");
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  {
    TracedMap m;
    for (int i = 0; i < 100; ++i) m[i] = i;
  }
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());
  before[2] = 2;
  auto st = ComputeTraceStats(o.path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->allocs, 100u);
  EXPECT_EQ(st->frees, 100u);
  EXPECT_EQ(stats.events, st->events);
  EXPECT_EQ(stats.bytes, st->file_bytes);
}

// The fields few events use reach the trace whole: a realloc's old address,
// a timestamp on every event, a count of 2^32 elements or more, round the
// ring's end many times.
TEST(RecorderTest, ReallocsTimestampsAndHugeCountsReachTheTraceWhole) {
  RecordingOptions o;
  o.path = TempPath("rare_fields.trace");
  o.timestamps = true;
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  Recorder& r = Recorder::Global();
  const uint32_t arena = r.CreateArena(0);
  constexpr uint64_t kHuge = (uint64_t{1} << 33) + 5;  // elements: not in 32 bits
  constexpr int kRounds = 20000;
  static char blocks[2][64];
  for (int i = 0; i < kRounds; ++i) {
    r.RecordAlloc(blocks[0], arena, 8, kHuge, 3);
    r.RecordRealloc(blocks[0], blocks[1], arena, 48, 4);
    r.RecordFree(blocks[1], arena);
  }
  r.DestroyArena(arena);
  RecordingStats stats;
  ASSERT_TRUE(r.Stop(&stats).ok());
  EXPECT_EQ(stats.unmatched_frees, 0u);

  auto reader = TraceReader::Open(o.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<Event> events;
  int allocs = 0, reallocs = 0, frees = 0;
  int untimed = 0, wrong_allocs = 0, wrong_reallocs = 0;  // counted, not one failure each
  uint64_t last_time = 0;
  while (true) {
    auto more = (*reader)->NextChunk(&events);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    for (const Event& e : events) {
      untimed += e.time_ns == 0 || e.time_ns < last_time;
      last_time = e.time_ns;
      if (e.kind == OpKind::kAlloc) {
        const Shape& shape = (*reader)->shapes().at(e.shape);
        ++allocs;
        wrong_allocs += shape.elem_size != 8 || shape.count != kHuge || shape.align != 8;
      } else if (e.kind == OpKind::kRealloc) {
        const Shape& shape = (*reader)->shapes().at(e.shape);
        ++reallocs;
        wrong_reallocs += shape.bytes() != 48 || shape.align != 16;
      } else if (e.kind == OpKind::kFree) {
        ++frees;
      }
    }
  }
  EXPECT_EQ(untimed, 0);
  EXPECT_EQ(wrong_allocs, 0);
  EXPECT_EQ(wrong_reallocs, 0);
  EXPECT_EQ(allocs, kRounds);
  EXPECT_EQ(reallocs, kRounds);
  EXPECT_EQ(frees, kRounds);
  // Each realloc replaced the block allocated before it (its old address
  // whole), and each free found the realloc's: the trace validates.
  auto st = ComputeTraceStats(o.path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->reallocs, static_cast<uint64_t>(kRounds));
}

// An arena's creation and its first block, and its last free and its end,
// share a slot in the ring when one follows the other (RawKind's
// kArenaCreateAlloc, kFreeArenaDestroy); the trace holds each event as
// made, in order, with the arena's class, wherever the stage's end falls
// and whatever comes between.
TEST(RecorderTest, ArenaEventsBesideBlocksKeepTheirOrder) {
  RecordingOptions o;
  o.path = TempPath("arena_beside_blocks.trace");
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  Recorder& r = Recorder::Global();
  const uint32_t cls = Recorder::RegisterClass("ArenaBesideBlocks", 16, /*tagged=*/true);
  static char blocks[3][16];
  // The events as made: kind and the arena's number in order of creation.
  std::vector<std::pair<OpKind, int>> made;
  int created = 0;
  const auto create = [&] {
    const uint32_t id = r.CreateArena(cls);
    made.emplace_back(OpKind::kArenaCreate, ++created);
    return std::make_pair(id, created);
  };
  const auto alloc = [&](int b, std::pair<uint32_t, int> a) {
    r.RecordAlloc(blocks[b], a.first, 16, 1, 4);
    made.emplace_back(OpKind::kAlloc, a.second);
  };
  const auto free_block = [&](int b, std::pair<uint32_t, int> a) {
    r.RecordFree(blocks[b], a.first);
    made.emplace_back(OpKind::kFree, a.second);
  };
  const auto destroy = [&](std::pair<uint32_t, int> a) {
    r.DestroyArena(a.first);
    made.emplace_back(OpKind::kArenaDestroy, a.second);
  };
  const std::pair<uint32_t, int> global{0, 0};
  for (int i = 0; i < 2000; ++i) {
    const auto a = create();
    switch (i % 4) {
      case 0:  // a block made as its arena is, freed as it ends
        alloc(0, a);
        free_block(0, a);
        destroy(a);
        break;
      case 1:  // another arena's block between
        alloc(1, global);
        alloc(0, a);
        free_block(0, a);
        free_block(1, global);
        destroy(a);
        break;
      case 2: {  // two arenas interleaved
        const auto b = create();
        alloc(2, b);
        alloc(0, a);
        free_block(0, a);
        free_block(2, b);
        destroy(a);
        destroy(b);
        break;
      }
      case 3:  // an arena that holds nothing
        destroy(a);
        break;
    }
  }
  RecordingStats stats;
  ASSERT_TRUE(r.Stop(&stats).ok());
  EXPECT_EQ(stats.unmatched_frees, 0u);
  EXPECT_EQ(stats.events, made.size());

  auto reader = TraceReader::Open(o.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<Event> events;
  std::vector<std::pair<OpKind, int>> read;
  absl::flat_hash_map<uint32_t, int> number;  // the trace's arena index -> order of creation
  int unnamed = 0;
  while (true) {
    auto more = (*reader)->NextChunk(&events);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    for (const Event& e : events) {
      if (e.kind == OpKind::kArenaCreate) {
        number[e.arena] = static_cast<int>(number.size()) + 1;
        const auto c = (*reader)->classes().find(e.shape);
        unnamed += c == (*reader)->classes().end() || c->second.name != "ArenaBesideBlocks";
      }
      read.emplace_back(e.kind, e.arena == 0 ? 0 : number.at(e.arena));
    }
  }
  EXPECT_EQ(unnamed, 0);
  ASSERT_EQ(read.size(), made.size());
  size_t first_difference = 0;
  while (first_difference < made.size() && read[first_difference] == made[first_difference]) {
    ++first_difference;
  }
  EXPECT_EQ(first_difference, made.size()) << "the trace differs from event " << first_difference;
}

// Several threads, each with its own containers, plus objects freed by a
// thread other than the one that allocated them: the trace must validate
// (every free of a live object, in one global order) and count everything.
TEST(RecorderTest, ManyThreadsGiveOneValidOrder) {
  RecordingOptions o;
  o.path = TempPath("threads.trace");
  o.chunk_events = 4096;
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  TA<int> shared_alloc;
  std::vector<std::shared_ptr<int>> handoff[kThreads];
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &handoff, &shared_alloc] {
        TracedMap m;
        for (int i = 0; i < kPerThread; ++i) {
          m[(i * 31 + t) % 5000] = i;
          if (i % 3 == 0) m.erase((i * 17) % 5000);
        }
        for (int i = 0; i < 1000; ++i) {
          handoff[t].push_back(std::allocate_shared<int>(shared_alloc, i));
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  // Freed on this thread, allocated on the others.
  for (auto& h : handoff) h.clear();
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());
  EXPECT_EQ(stats.unmatched_frees, 0u);
  EXPECT_EQ(stats.dropped_events, 0u);
  auto st = ComputeTraceStats(o.path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_TRUE(st->has_footer);
  EXPECT_GE(st->threads, static_cast<uint64_t>(kThreads));
  EXPECT_EQ(st->allocs, st->frees);
  EXPECT_GE(st->allocs, static_cast<uint64_t>(kThreads * (5000 + 1000)));
}

// A second thread joining a recording that one thread started switches
// the recorder to numbered events mid-stream; order must stay valid.
TEST(RecorderTest, SwitchToMultiThreadMidRecording) {
  RecordingOptions o;
  o.path = TempPath("switch.trace");
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  TA<int> alloc;
  std::vector<std::shared_ptr<int>> objects;
  for (int i = 0; i < 50000; ++i) objects.push_back(std::allocate_shared<int>(alloc, i));
  std::atomic<bool> go{false};
  std::thread other([&] {
    while (!go.load()) {
    }
    for (int i = 0; i < 25000; ++i) objects[i].reset();  // frees on another thread
  });
  go.store(true);
  TracedMap m;
  for (int i = 0; i < 30000; ++i) m[i] = i;  // concurrently, on this thread
  other.join();
  objects.clear();
  m.clear();
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());
  auto st = ComputeTraceStats(o.path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->allocs, 80000u);
  EXPECT_EQ(st->frees, 80000u);
  EXPECT_EQ(stats.unmatched_frees, 0u);
}

// Each event carries the thread that made it. Thread t allocates blocks of
// its own size (100 + t bytes) and frees half of them itself; the main
// thread frees the other half after the join. Read back: every block of a
// size was allocated by one thread, a different one per size, and never by
// the main thread; each thread's own frees carry its id, the main thread's
// carry the main thread's. The main thread records first (an arena), so it
// starts in single-thread mode and the switch to numbered events happens
// while the workers run.
TEST(RecorderTest, EachEventCarriesTheThreadThatMadeIt) {
  RecordingOptions o;
  o.path = TempPath("thread_ids.trace");
  o.chunk_events = 1024;
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  constexpr int kThreads = 6;
  constexpr int kBlocks = 3000;
  TA<char> alloc;  // shared: one arena for every thread
  std::vector<std::vector<char*>> kept(kThreads);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &alloc, &kept] {
        TA<char> mine = alloc;
        for (int i = 0; i < kBlocks; ++i) {
          char* p = mine.allocate(100 + t);
          if (i % 2 == 0) {
            mine.deallocate(p, 100 + t);
          } else {
            kept[t].push_back(p);
          }
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    for (char* p : kept[t]) alloc.deallocate(p, 100 + t);
  }
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());
  EXPECT_EQ(stats.threads, kThreads + 1u);

  auto reader = TraceReader::Open(o.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::map<uint64_t, std::set<uint32_t>> alloc_threads;      // size -> threads allocating it
  std::map<uint64_t, std::map<uint32_t, int>> free_threads;  // size -> thread -> frees
  std::vector<uint64_t> object_size;
  std::set<uint32_t> arena_event_threads;
  std::vector<Event> events;
  while (true) {
    auto more = (*reader)->NextChunk(&events);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    for (const Event& e : events) {
      if (e.kind == OpKind::kAlloc) {
        const uint64_t size = (*reader)->shapes()[e.shape].count;
        alloc_threads[size].insert(e.thread);
        if (e.object >= object_size.size()) object_size.resize(e.object + 1);
        object_size[e.object] = size;
      } else if (e.kind == OpKind::kFree) {
        ++free_threads[object_size[e.object]][e.thread];
      } else if (e.kind == OpKind::kArenaCreate || e.kind == OpKind::kArenaDestroy) {
        arena_event_threads.insert(e.thread);
      }
    }
  }
  // The arena is created and destroyed on the main thread.
  ASSERT_EQ(arena_event_threads.size(), 1u);
  const uint32_t main_thread = *arena_event_threads.begin();
  ASSERT_EQ(alloc_threads.size(), static_cast<size_t>(kThreads));
  std::set<uint32_t> workers;
  for (int t = 0; t < kThreads; ++t) {
    const uint64_t size = 100 + t;
    ASSERT_EQ(alloc_threads[size].size(), 1u) << "size " << size;
    const uint32_t worker = *alloc_threads[size].begin();
    EXPECT_NE(worker, main_thread);
    workers.insert(worker);
    EXPECT_EQ(free_threads[size][worker], kBlocks / 2) << "freed by the thread itself";
    EXPECT_EQ(free_threads[size][main_thread], kBlocks / 2) << "freed by the main thread";
    EXPECT_EQ(free_threads[size].size(), 2u);
  }
  EXPECT_EQ(workers.size(), static_cast<size_t>(kThreads)) << "one id per thread";
  // The footer holds the program's CPU time (less the writer thread's): the
  // replayer's verdict puts its figures in those terms. The process has run
  // for longer than it spent in this test's threads' allocations.
  ASSERT_TRUE((*reader)->has_footer());
  struct rusage ru;
  ASSERT_EQ(getrusage(RUSAGE_SELF, &ru), 0);
  const double now = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  EXPECT_GT((*reader)->footer().program_cpu_ns(), 0u);
  EXPECT_LE(1e-9 * static_cast<double>((*reader)->footer().program_cpu_ns()), now);
}

// A thread_local container made lazily (the thread_local is touched before
// the thread's first event) is destroyed at thread exit after anything the
// recorder itself keeps per thread was set up; its frees and its arena's
// destruction must still be recorded, not dropped.
thread_local std::unique_ptr<std::vector<int, TA<int>>> tls_cache;

TEST(RecorderTest, ThreadLocalContainersFreedAtThreadExitAreRecorded) {
  RecordingOptions o;
  o.path = TempPath("thread_local.trace");
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([] {
      if (!tls_cache) tls_cache = std::make_unique<std::vector<int, TA<int>>>();
      for (int i = 0; i < 1000; ++i) tls_cache->push_back(i);
    });
  }
  for (auto& th : threads) th.join();
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());
  EXPECT_EQ(stats.dropped_events, 0u);
  auto st = ComputeTraceStats(o.path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->frees, st->allocs);
  EXPECT_EQ(st->arenas_created, 3u);
  EXPECT_EQ(st->arenas_destroyed, 3u);
  EXPECT_EQ(st->threads, 3u);
}

// A thread that records alone keeps its last events in its stage; at its
// exit they go to its ring, before the drainer frees the ring (a drain
// at least every millisecond, so the wait below lets it).
TEST(RecorderTest, ALoneThreadsLastEventsSurviveItsExit) {
  RecordingOptions o;
  o.path = TempPath("alone_exit.trace");
  ASSERT_TRUE(Recorder::Global().Start(o).ok());
  constexpr int kBlocks = 1003;  // 2,008 events: not a whole number of stages
  std::thread([] {
    TA<int> alloc;
    std::vector<int*> blocks;
    for (int i = 0; i < kBlocks; ++i) blocks.push_back(alloc.allocate(1));
    for (int* p : blocks) alloc.deallocate(p, 1);
  }).join();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RecordingStats stats;
  ASSERT_TRUE(Recorder::Global().Stop(&stats).ok());
  auto st = ComputeTraceStats(o.path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->allocs, static_cast<uint64_t>(kBlocks));
  EXPECT_EQ(st->frees, static_cast<uint64_t>(kBlocks));
  EXPECT_EQ(st->arenas_destroyed, 1u);
  EXPECT_EQ(stats.dropped_events, 0u);
}

// A process that dies mid-recording leaves every chunk written so far.
TEST(RecorderTest, KilledProcessLeavesCompleteChunks) {
  const std::string path = TempPath("killed.trace");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Recorder::Global().AbandonAfterFork();
    RecordingOptions o;
    o.path = path;
    o.chunk_events = 1000;
    o.flush_ms = 10;
    if (!Recorder::Global().Start(o).ok()) _exit(3);
    TracedMap m;
    for (int i = 0; i < 100000; ++i) m[i] = i;
    usleep(200 * 1000);  // let the writer put out the chunks
    raise(SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  auto st = ComputeTraceStats(path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_FALSE(st->has_footer);
  EXPECT_FALSE(st->cut_short.empty());
  EXPECT_GE(st->allocs, 90000u) << "most events were written before the kill";
}

}  // namespace
}  // namespace alloctrace
