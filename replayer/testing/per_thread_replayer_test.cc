// End to end: the replayer binary on multi-threaded traces, replayed per
// thread and serialized, and on multi-threaded bad input.
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/format/wire.h"
#include "alloctrace/proto/trace.pb.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/testing/run_command_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::Output;
using testing_util::RunReplayer;

constexpr const char* kOneRun =
    "--min_runs=1 --max_runs=1 --max_reruns=0 --passes=2 --warm_ms=0 --budget=0";

// Producer/consumer on `threads` threads (half produce, half consume):
// every message is freed on another thread than the one that allocated it.
// `arena_per_thread`: each producer's messages in an arena of its own.
std::string WriteProducerConsumer(const std::string& name, uint32_t threads, int messages,
                                  bool arena_per_thread) {
  const std::string path = absl::StrCat(testing::TempDir(), "/", name);
  auto w = TraceWriter::Create(path, proto::Header());
  EXPECT_TRUE(w.ok());
  const uint32_t producers = threads / 2;
  for (int i = 0; i < messages; ++i) {
    const uint32_t p = static_cast<uint32_t>(i) % producers;
    const uint32_t c = producers + static_cast<uint32_t>(i) % (threads - producers);
    const uint32_t arena = arena_per_thread ? p + 1 : 0;
    const uint64_t address = 0x10000 + 64 * static_cast<uint64_t>(i % 32);
    (*w)->Alloc(p, arena, address, Shape{16 + 8 * static_cast<uint64_t>(i % 8), 1, 8});
    EXPECT_TRUE((*w)->Free(c, arena, address));
  }
  EXPECT_TRUE((*w)->Finish().ok());
  return path;
}

// Each thread allocates and frees its own objects in its own arena.
std::string WritePrivateArenas(const std::string& name) {
  const std::string path = absl::StrCat(testing::TempDir(), "/", name);
  auto w = TraceWriter::Create(path, proto::Header());
  EXPECT_TRUE(w.ok());
  for (int i = 0; i < 2000; ++i) {
    const uint32_t t = static_cast<uint32_t>(i % 2);
    const uint64_t address = 0x10000 * (t + 1) + 64 * static_cast<uint64_t>(i % 16);
    (*w)->Alloc(t, t + 1, address, Shape{32, 1, 8});
    EXPECT_TRUE((*w)->Free(t, t + 1, address));
  }
  EXPECT_TRUE((*w)->Finish().ok());
  return path;
}

TEST(PerThreadReplayerTest, MultiThreadedTraceReplaysPerThreadAndSaysHow) {
  const std::string trace = WriteProducerConsumer("pc.trace", 4, 4000, false);
  const Output o =
      RunReplayer(absl::StrCat(kOneRun,
                               " --threads=each --format=json "
                               "--policies=malloc,slab/st/stack,pool/simple/exp/mt/stack/free ",
                               trace));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"replay_threads\": 4"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"cross_thread_frees\": 4000"), std::string::npos) << o.out;
  // Wall time where the 4 threads fit in the cores, CPU time where they
  // outnumber them (the wall clock would time the scheduler).
  EXPECT_NE(o.out.find(UsableCores() >= 4 ? "\"clock\": \"wall\"" : "\"clock\": \"cpu\""),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\"wait_s\": "), std::string::npos) << o.out;
  // A non-thread-safe allocator is never run on an arena threads share
  // (threads in order of first use).
  EXPECT_NE(o.out.find("not thread-safe: arena 0 is used by threads 0, 2, 1 and 3"),
            std::string::npos)
      << o.out;
  // The thread-safe article policy ran (its status is ok).
  EXPECT_NE(o.out.find("{\"policy\": \"pool/simple/exp/mt/stack/free\", \"family\": "
                       "\"article\", \"note\": \"\", \"status\": \"ok\""),
            std::string::npos)
      << o.out;
  const Output table =
      RunReplayer(absl::StrCat(kOneRun, " --threads=each --policies=malloc ", trace));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("note: replayed per thread: 4 threads"), std::string::npos) << table.out;
}

// --threads=auto: per thread where the trace has container arenas, on one
// thread where it has none (only a malloc can be adopted there), which the
// report says, with the frees that cross threads still counted for the
// verdict's caution.
TEST(PerThreadReplayerTest, AutoReplaysPerThreadOnlyWithContainerArenas) {
  const std::string heap = WriteProducerConsumer("pc_heap.trace", 4, 4000, false);
  Output o = RunReplayer(absl::StrCat(kOneRun, " --format=json --policies=malloc ", heap));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"replay_threads\": 1,"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"cross_thread_frees\": 4000"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"clock\": \"cpu\""), std::string::npos) << o.out;
  o = RunReplayer(absl::StrCat(kOneRun, " --policies=malloc ", heap));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("note: recorded on 4 threads, replayed on one thread in the recorded order: "
                       "no\n      two threads contend; the trace has no container arenas"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("--threads=each replays it per thread"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("caution:      50% of the memory ops free an object another thread"),
            std::string::npos)
      << o.out;

  const std::string arenas = WriteProducerConsumer("pc_arenas.trace", 4, 4000, true);
  o = RunReplayer(absl::StrCat(kOneRun, " --format=json --policies=malloc ", arenas));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"replay_threads\": 4"), std::string::npos) << o.out;
}

TEST(PerThreadReplayerTest, ThreadsOneKeepsTheSerializedReplay) {
  const std::string trace = WriteProducerConsumer("pc_one.trace", 2, 2000, false);
  const Output o = RunReplayer(absl::StrCat(
      kOneRun, " --threads=one --format=json --policies=malloc,slab/st/stack ", trace));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"replay_threads\": 1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"clock\": \"cpu\""), std::string::npos) << o.out;
  // What may serve the program does not depend on how it is replayed.
  EXPECT_NE(o.out.find("not thread-safe: arena 0 is used by threads 0 and 1"), std::string::npos)
      << o.out;
}

// Arenas private to threads: an allocator with a pool per arena may run
// unlocked; one whose single state serves every arena may not.
TEST(PerThreadReplayerTest, PrivateArenasLetPerArenaPoolsRunUnlocked) {
  const std::string trace = WritePrivateArenas("private.trace");
  const Output o = RunReplayer(absl::StrCat(
      kOneRun, " --format=csv --policies=malloc,slab/st/single,pool/simple/exp/st/stack/free ",
      trace));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find(",pool/simple/exp/st/stack/free,article,ok,"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("not thread-safe: its one pool serves every arena, and the trace's 2 "
                       "threads allocate in them"),
            std::string::npos)
      << o.out;
}

// A child of a per-thread replay has a time limit like any other.
TEST(PerThreadReplayerTest, HungPerThreadChildIsKilledAtItsTimeLimit) {
  const std::string trace = WriteProducerConsumer("pc_hang.trace", 2, 500, false);
  const Output o = RunReplayer(
      absl::StrCat(kOneRun, " --threads=each --run_timeout=2 --format=csv --policies=malloc,new ",
                   trace),
      "ALLOCTRACE_TEST_FAULT=new:1:hang");
  EXPECT_EQ(o.exit_code, 0) << o.err;  // an outcome: the row says so
  EXPECT_NE(o.out.find("killed after the time limit of 2 s per run"), std::string::npos) << o.out;
}

// The closest a trace comes to a cycle of waits: objects passed both ways,
// interleaved, with reallocs across threads. Every wait points backwards in
// the trace's order, so the replay finishes.
TEST(PerThreadReplayerTest, ObjectsPassedBothWaysNeverDeadlock) {
  const std::string path = absl::StrCat(testing::TempDir(), "/pingpong.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    for (uint64_t i = 0; i < 2000; ++i) {
      const uint32_t a = i % 2, b = 1 - a;
      (*w)->Alloc(a, 0, 0x100000 + 16 * i, Shape{24, 1, 8});
      (*w)->Alloc(b, 0, 0x900000 + 16 * i, Shape{24, 1, 8});
      (*w)->Realloc(a, 0, 0x900000 + 16 * i, 0x2000000 + 16 * i, Shape{1, 200, 8});
      ASSERT_TRUE((*w)->Free(b, 0, 0x100000 + 16 * i));
      ASSERT_TRUE((*w)->Free(b, 0, 0x2000000 + 16 * i));
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const Output o = RunReplayer(
      absl::StrCat(kOneRun, " --threads=each --run_timeout=60 --policies=malloc,new ", path));
  EXPECT_EQ(o.exit_code, 0) << o.err << o.out;
}

// The most threads a per-thread replay runs, each with its own OS thread,
// under the child's default data limit.
TEST(PerThreadReplayerTest, ReplaysTheMostThreadsItAllows) {
  const std::string path = absl::StrCat(testing::TempDir(), "/threads1024.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    for (uint32_t t = 0; t < 1024; ++t) {
      (*w)->Alloc(t, 0, 0x1000 + 64 * uint64_t{t}, Shape{16, 1, 8});
      ASSERT_TRUE((*w)->Free(t, 0, 0x1000 + 64 * uint64_t{t}));
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const Output o =
      RunReplayer(absl::StrCat(kOneRun, " --threads=each --format=json --policies=malloc ", path));
  EXPECT_EQ(o.exit_code, 0) << o.err << o.out;
  EXPECT_NE(o.out.find("\"replay_threads\": 1024"), std::string::npos) << o.out;
}

TEST(PerThreadReplayerTest, BadMultiThreadedInputGivesAClearError) {
  // Thread 1 frees an object no thread allocated: the reader refuses it.
  proto::Chunk c;
  testing_util::AddShape(&c, 16, 1, 8);
  c.add_ops(testing_util::Op(OpKind::kAlloc, 0));
  c.add_ops(testing_util::Op(OpKind::kSetThread, 1));
  c.add_ops(testing_util::Op(OpKind::kFree, ZigZagEncode(1)));
  const std::string free_first = testing_util::WriteTrace("free_first.trace", {c}, 2);
  Output o = RunReplayer(absl::StrCat(kOneRun, " --threads=each --policies=malloc ", free_first));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("which is not live"), std::string::npos) << o.err;

  // 100,000 threads: refused for the per-thread replay (never that many OS
  // threads), replayed serialized with --threads=one.
  const std::string many = absl::StrCat(testing::TempDir(), "/threads100k.trace");
  {
    auto w = TraceWriter::Create(many, proto::Header());
    ASSERT_TRUE(w.ok());
    for (uint32_t t = 0; t < 100000; ++t) {
      (*w)->Alloc(t, 0, 0x1000, Shape{16, 1, 8});
      ASSERT_TRUE((*w)->Free(t, 0, 0x1000));
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  o = RunReplayer(absl::StrCat(kOneRun, " --threads=each --policies=malloc ", many));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("the trace names 100000 threads; the per-thread replay runs at most 1024"),
            std::string::npos)
      << o.err;
  EXPECT_TRUE(o.out.empty());
  o = RunReplayer(absl::StrCat(kOneRun, " --threads=one --policies=malloc ", many));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // Without container arenas --threads=auto replays it on one thread too.
  o = RunReplayer(absl::StrCat(kOneRun, " --policies=malloc ", many));
  EXPECT_EQ(o.exit_code, 0) << o.err;

  o = RunReplayer(absl::StrCat("--threads=many ", many));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--threads=many"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace alloctrace
