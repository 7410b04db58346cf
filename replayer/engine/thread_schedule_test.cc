#include "alloctrace/replayer/engine/thread_schedule.h"

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/format/wire.h"
#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"
#include "alloctrace/replayer/engine/allocators/pool_allocators.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/thread_replay.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::Op;
using testing_util::TempPath;

// One traced event, for writing small multi-threaded traces.
struct Step {
  enum Kind { kAlloc, kFree, kRealloc, kCreate, kDestroy } kind;
  uint32_t thread;
  uint32_t arena;
  uint64_t address;
  uint64_t new_address = 0;  // kRealloc
};

std::string Write(const std::string& name, const std::vector<Step>& steps) {
  const std::string path = TempPath(name);
  auto w = TraceWriter::Create(path, proto::Header(), 64);
  EXPECT_TRUE(w.ok()) << w.status();
  const Shape shape{32, 1, 8};
  for (const Step& s : steps) {
    switch (s.kind) {
      case Step::kAlloc:
        (*w)->Alloc(s.thread, s.arena, s.address, shape);
        break;
      case Step::kFree:
        EXPECT_TRUE((*w)->Free(s.thread, s.arena, s.address));
        break;
      case Step::kRealloc:
        (*w)->Realloc(s.thread, s.arena, s.address, s.new_address, Shape{1, 100, 8});
        break;
      case Step::kCreate:
        (*w)->ArenaCreate(s.thread, s.arena);
        break;
      case Step::kDestroy:
        (*w)->ArenaDestroy(s.thread, s.arena);
        break;
    }
  }
  EXPECT_TRUE((*w)->Finish().ok());
  return path;
}

// Producer/consumer: thread 0 allocates, thread 1 frees, `n` messages, with
// a few ids reused across threads (a free on 1, the next alloc on 0).
std::vector<Step> ProducerConsumer(int n) {
  std::vector<Step> steps;
  for (int i = 0; i < n; ++i) {
    const uint64_t a = 0x1000 + 0x100 * static_cast<uint64_t>(i % 8);
    steps.push_back({Step::kAlloc, 0, 0, a});
    steps.push_back({Step::kFree, 1, 0, a});
  }
  return steps;
}

// Checks the schedule's contract against the program: every op is in its
// thread's stream in global order, every wait points to an earlier op of
// another thread in the global order (so no cycle can form) and flags match.
void CheckInvariants(const ReplayProgram& p, const ThreadSchedule& s) {
  std::vector<std::vector<size_t>> global(s.streams.size());
  for (size_t i = 0; i < p.ops.size(); ++i) global[p.op_threads[i]].push_back(i);
  uint64_t waits = 0;
  for (size_t t = 0; t < s.streams.size(); ++t) {
    const ThreadStream& stream = s.streams[t];
    ASSERT_EQ(stream.ops.size(), global[t].size());
    for (size_t j = 0; j < stream.ops.size(); ++j) {
      EXPECT_EQ(static_cast<uint8_t>(stream.ops[j].kind) & kKindMask,
                static_cast<uint8_t>(p.ops[global[t][j]].kind));
    }
    uint32_t previous_op = 0;
    for (const SyncWait& w : stream.waits) {
      ++waits;
      ASSERT_LT(w.op, stream.ops.size());
      EXPECT_GE(w.op, previous_op);  // in op order
      previous_op = w.op;
      ASSERT_LT(w.thread, s.streams.size());
      EXPECT_NE(w.thread, t);
      ASSERT_GE(w.count, 1u);
      ASSERT_LE(w.count, s.streams[w.thread].ops.size());
      EXPECT_LT(global[w.thread][w.count - 1], global[t][w.op]) << "a wait points forward";
      EXPECT_TRUE(static_cast<uint8_t>(stream.ops[w.op].kind) & kWaitFlag);
      EXPECT_TRUE(static_cast<uint8_t>(s.streams[w.thread].ops[w.count - 1].kind) & kPublishFlag);
    }
  }
  EXPECT_EQ(waits, s.sync_points);
}

TEST(ThreadScheduleTest, OneThreadTraceHasNoThreadColumn) {
  std::vector<Step> steps = {{Step::kAlloc, 0, 0, 0x10}, {Step::kFree, 0, 0, 0x10}};
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("one.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->threads, 1u);
  EXPECT_TRUE(p->op_threads.empty());
}

TEST(ThreadScheduleTest, ProducerConsumerWaitsOnlyWhereObjectsPass) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("pc.trace", ProducerConsumer(100)));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->threads, 2u);
  ASSERT_EQ(p->op_threads.size(), p->ops.size());
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  CheckInvariants(*p, *s);
  EXPECT_EQ(s->streams[0].ops.size(), 100u);
  EXPECT_EQ(s->streams[1].ops.size(), 100u);
  EXPECT_EQ(s->cross_thread_frees, 100u);
  // Each free waits for its alloc; an alloc of an id the consumer freed
  // (the writer reuses the last freed id) takes a fresh slot and waits for
  // the consumer's free kReuseWindow frees earlier (from the 65th on).
  EXPECT_EQ(s->sync_points, 100u + (99u - kReuseWindow));
  EXPECT_EQ(s->slot_limit, p->object_limit + 1 + 99);
}

// Two threads that share nothing, each allocating and freeing its own
// objects, interleaved: the trace's writer hands each the id the other
// freed last. None of it is a hand-off, so no thread waits for the other.
TEST(ThreadScheduleTest, IdsPassedBetweenThreadsThatShareNothingCostNoWait) {
  std::vector<Step> steps;
  for (uint64_t i = 0; i < 400; ++i) {
    const uint32_t t = i % 2;
    steps.push_back({Step::kAlloc, t, 0, 0x1000 + 16 * i});
    steps.push_back({Step::kFree, t, 0, 0x1000 + 16 * i});
  }
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("private.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->threads, 2u);
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  CheckInvariants(*p, *s);
  EXPECT_EQ(s->cross_thread_frees, 0u);
  EXPECT_EQ(s->sync_points, 0u);
  // Every allocation after the first took a fresh slot: the id's old one
  // may still be the other thread's to free when the two run apart.
  EXPECT_EQ(s->slot_limit, p->object_limit + 1 + 399);
}

TEST(ThreadScheduleTest, ArenaEventsWaitForEveryUser) {
  std::vector<Step> steps = {{Step::kCreate, 0, 1, 0},   {Step::kAlloc, 1, 1, 0x10},
                             {Step::kAlloc, 2, 1, 0x20}, {Step::kFree, 1, 1, 0x10},
                             {Step::kFree, 2, 1, 0x20},  {Step::kDestroy, 0, 1, 0},
                             {Step::kAlloc, 3, 2, 0x30}, {Step::kFree, 3, 2, 0x30}};
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("arena.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  CheckInvariants(*p, *s);
  // Threads 1 and 2 wait for the creation; the destruction waits for both.
  // Thread 3's allocation reuses the id thread 2 freed last: a fresh slot,
  // no wait (thread 2 made fewer than kReuseWindow frees).
  EXPECT_EQ(s->sync_points, 4u);
  EXPECT_EQ(s->cross_thread_frees, 0u);
}

// Objects passed back and forth both ways, interleaved, with reallocs: the
// closest a trace can come to a cycle of waits. The schedule's waits all
// point backwards, and the replay finishes.
TEST(ThreadScheduleTest, PingPongCannotDeadlock) {
  std::vector<Step> steps;
  for (uint64_t i = 0; i < 200; ++i) {
    const uint32_t a = i % 2, b = 1 - a;
    steps.push_back({Step::kAlloc, a, 0, 0x1000 + 16 * i});
    steps.push_back({Step::kAlloc, b, 0, 0x9000 + 16 * i});
    steps.push_back({Step::kRealloc, a, 0, 0x9000 + 16 * i, 0x20000 + 16 * i});
    steps.push_back({Step::kFree, b, 0, 0x1000 + 16 * i});
    steps.push_back({Step::kFree, b, 0, 0x20000 + 16 * i});
  }
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("pingpong.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  CheckInvariants(*p, *s);
  RunOptions options;
  options.touch = Touch::kProgram;
  options.max_passes = 3;
  options.min_warm_seconds = 1e9;  // all three passes
  const RunResult r =
      ReplayPerThreadWith<allocators::MallocAllocator>(ViewOf(*p), ViewOf(*s), options);
  EXPECT_EQ(r.error.words, "");
  ASSERT_EQ(r.passes.size(), 3u);
  EXPECT_EQ(r.threads, 2u);
  EXPECT_EQ(r.passes[0].thread_cpu_seconds.size(), 2u);
  EXPECT_GT(r.passes[0].wall_seconds, 0);
}

TEST(ThreadScheduleTest, ReplaysRandomTracesOnEveryThreadSafeKind) {
  std::vector<std::pair<OpKind, uint64_t>> expected;
  const std::string path = TempPath("random.trace");
  ASSERT_TRUE(testing_util::WriteRandomTrace(path, 7, 3000, 256, true, &expected));
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_GT(p->threads, 1u);
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  CheckInvariants(*p, *s);
  RunOptions options;
  options.max_passes = 2;
  EXPECT_EQ((ReplayPerThreadWith<allocators::MallocAllocator>(ViewOf(*p), ViewOf(*s), options)
                 .error.words),
            "");
  using MtStackPool =
      allocators::ArticlePoolAllocator<pool::StorageSimple, pool::GrowthExponential,
                                       pool::MultiThreaded, pool::HoldingStack, true>;
  EXPECT_EQ((ReplayPerThreadWith<MtStackPool>(ViewOf(*p), ViewOf(*s), options).error.words), "");
}

// Objects left live at the end, one of them reallocated on another thread:
// freed after each pass (LeakSanitizer checks the test) from their slots.
TEST(ThreadScheduleTest, LeftoversAreFreedFromTheirSlots) {
  std::vector<Step> steps = {{Step::kAlloc, 0, 0, 0x10},
                             {Step::kAlloc, 0, 0, 0x20},
                             {Step::kFree, 1, 0, 0x10},
                             {Step::kAlloc, 1, 0, 0x30},  // reuses 0x10's id: fresh slot
                             {Step::kRealloc, 1, 0, 0x20, 0x40}};
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("left.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->live_at_end, 2u);
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  CheckInvariants(*p, *s);
  ASSERT_EQ(s->leftovers.size(), 2u);
  uint64_t bytes = 0;
  for (const LeftoverBlock& b : s->leftovers) bytes += b.bytes;
  EXPECT_EQ(bytes, 32u + 100u);
  RunOptions options;
  options.max_passes = 2;
  EXPECT_EQ((ReplayPerThreadWith<allocators::MallocAllocator>(ViewOf(*p), ViewOf(*s), options)
                 .error.words),
            "");
}

// Memory ops on threads 1 and 2 only (no event on thread 0): the decoder's
// dense indexes run to 2, but there are two streams, one per thread that
// made an op, in order of its first op (replayer_test's shared-arena trace
// was refused as "an op's thread is out of range" before).
TEST(ThreadScheduleTest, StreamsAreTheThreadsThatMadeOps) {
  std::vector<Step> steps;
  for (uint64_t i = 0; i < 20; ++i) steps.push_back({Step::kAlloc, 1, 0, 0x1000 + 0x40 * i});
  for (uint64_t i = 0; i < 20; ++i) steps.push_back({Step::kFree, 2, 0, 0x1000 + 0x40 * i});
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("t12.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->op_threads.size(), p->ops.size());
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->streams.size(), 2u);
  EXPECT_EQ(s->streams[0].ops.size(), 20u);
  EXPECT_EQ(s->streams[1].ops.size(), 20u);
  EXPECT_EQ(s->cross_thread_frees, 20u);
  RunOptions options;
  options.max_passes = 2;
  EXPECT_EQ((ReplayPerThreadWith<allocators::MallocAllocator>(ViewOf(*p), ViewOf(*s), options)
                 .error.words),
            "");
}

// An allocator that throws std::bad_alloc on its 10th allocation, as the
// std allocators of some policies do once the child's memory limit is
// reached.
class ThrowingAllocator : public allocators::MallocAllocator {
 public:
  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    if (++calls_ == 10) throw std::bad_alloc();
    return MallocAllocator::Allocate(bytes, align, arena);
  }

 private:
  int calls_ = 0;
};

// A std::bad_alloc on a replay thread fails the run with an error, as on the
// main thread; it used to escape the thread and abort the process.
TEST(ThreadScheduleTest, BadAllocOnAThreadFailsTheRun) {
  std::vector<Step> steps;
  for (uint64_t i = 0; i < 20; ++i) steps.push_back({Step::kAlloc, 0, 0, 0x1000 + 0x40 * i});
  for (uint64_t i = 0; i < 20; ++i) steps.push_back({Step::kFree, 1, 0, 0x1000 + 0x40 * i});
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("badalloc.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  RunOptions options;
  options.max_passes = 1;
  const RunResult r = ReplayPerThreadWith<ThrowingAllocator>(ViewOf(*p), ViewOf(*s), options);
  EXPECT_EQ(r.error.words, "out of memory (std::bad_alloc)");
  EXPECT_EQ(r.error.Kind(), RunErrorKind::kOutOfMemory);
}

// Counts the calls it serves (over every instance, from any thread).
class CountingAllocator : public allocators::MallocAllocator {
 public:
  static std::atomic<uint64_t> allocs, frees, reallocs;
  static void Reset() { allocs = frees = reallocs = 0; }

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    allocs.fetch_add(1, std::memory_order_relaxed);
    return MallocAllocator::Allocate(bytes, align, arena);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    frees.fetch_add(1, std::memory_order_relaxed);
    MallocAllocator::Deallocate(p, bytes, align, arena);
  }
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    reallocs.fetch_add(1, std::memory_order_relaxed);
    return MallocAllocator::Reallocate(p, old_bytes, new_bytes, align, arena);
  }
};
std::atomic<uint64_t> CountingAllocator::allocs{0};
std::atomic<uint64_t> CountingAllocator::frees{0};
std::atomic<uint64_t> CountingAllocator::reallocs{0};

// Confines the calling thread, and the threads it starts, to one CPU for its
// lifetime, so that replay threads outnumber cores on any machine.
class OneCpu {
 public:
  OneCpu() {
    CPU_ZERO(&saved_);
    ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0;
    int cpu = 0;
    while (ok_ && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &saved_)) ++cpu;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = ok_ && cpu < CPU_SETSIZE && sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~OneCpu() {
    if (ok_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

// Objects passed around a ring of `threads` threads, each allocated on one,
// reallocated on it, freed on the next: every thread waits for its
// neighbour over and over.
std::vector<Step> Ring(uint32_t threads, uint64_t rounds) {
  std::vector<Step> steps;
  for (uint64_t i = 0; i < rounds; ++i) {
    const uint32_t a = static_cast<uint32_t>(i % threads), b = (a + 1) % threads,
                   c = (a + 2) % threads;
    steps.push_back({Step::kAlloc, a, 0, 0x100000 + 16 * i});
    steps.push_back({Step::kAlloc, b, 0, 0x900000 + 16 * i});
    steps.push_back({Step::kRealloc, a, 0, 0x900000 + 16 * i, 0x2000000 + 16 * i});
    steps.push_back({Step::kFree, b, 0, 0x100000 + 16 * i});
    steps.push_back({Step::kFree, c, 0, 0x2000000 + 16 * i});
  }
  return steps;
}

// Six replay threads on one CPU, passing objects around a ring: every
// wait's thread needs the CPU the waiter holds. The replay completes (no
// lost wake-up, no thread left asleep) and makes every call the serialized
// replay makes.
TEST(ThreadReplayTest, MoreThreadsThanCoresCompleteWithTheSameCalls) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("ring6.trace", Ring(6, 600)));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->streams.size(), 6u);
  CheckInvariants(*p, *s);
  EXPECT_GT(s->sync_points, 600u);
  RunOptions options;
  options.touch = Touch::kProgram;
  options.max_passes = 3;
  options.min_warm_seconds = 1e9;  // all three passes
  CountingAllocator::Reset();
  const RunResult serial = ReplayWith<CountingAllocator>(ViewOf(*p), options);
  ASSERT_EQ(serial.error.words, "");
  const uint64_t allocs = CountingAllocator::allocs, frees = CountingAllocator::frees,
                 reallocs = CountingAllocator::reallocs;
  EXPECT_EQ(allocs, 3u * 1200);
  EXPECT_EQ(reallocs, 3u * 600);
  EXPECT_EQ(frees, 3u * 1200);
  CountingAllocator::Reset();
  RunResult r;
  {
    OneCpu one_cpu;
    ASSERT_TRUE(one_cpu.ok());
    r = ReplayPerThreadWith<CountingAllocator>(ViewOf(*p), ViewOf(*s), options);
  }
  EXPECT_EQ(r.error.words, "");
  ASSERT_EQ(r.passes.size(), 3u);
  EXPECT_EQ(r.threads, 6u);
  EXPECT_EQ(r.ops, serial.ops);
  EXPECT_EQ(r.passes[0].thread_cpu_seconds.size(), 6u);
  EXPECT_EQ(CountingAllocator::allocs, allocs);
  EXPECT_EQ(CountingAllocator::reallocs, reallocs);
  EXPECT_EQ(CountingAllocator::frees, frees);
  for (const PassFigures& pass : r.passes) {
    EXPECT_GE(pass.cpu_seconds, 0);
    EXPECT_GE(pass.wait_seconds, 0);
  }
}

// This process's threads other than the caller that are asleep (state S).
int OtherThreadsAsleep() {
  int asleep = 0;
  const std::string self = std::to_string(syscall(SYS_gettid));
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.' || self == e->d_name) continue;
    std::ifstream stat(std::string("/proc/self/task/") + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S') {
      ++asleep;
    }
  }
  closedir(dir);
  return asleep;
}

// Fails the allocation of 777 bytes, once every other thread of the
// process is asleep (the replay's waiters and the thread joining them), or
// after about 10 s.
class FailWhenOthersSleep : public allocators::MallocAllocator {
 public:
  static int others;
  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    if (bytes != 777) return MallocAllocator::Allocate(bytes, align, arena);
    for (int i = 0; i < 10000 && OtherThreadsAsleep() < others; ++i) usleep(1000);
    return nullptr;
  }
};
int FailWhenOthersSleep::others = 0;

// Thread 0 fails while the five others are asleep waiting for its later
// ops: they are woken and stop, and the run ends with thread 0's error
// (a lost wake-up would hang the test until its time limit).
TEST(ThreadReplayTest, AFailedThreadWakesSleepingWaiters) {
  const std::string path = TempPath("abort.trace");
  auto w = TraceWriter::Create(path, proto::Header(), 64);
  ASSERT_TRUE(w.ok()) << w.status();
  for (uint64_t i = 0; i < 5; ++i) (*w)->Alloc(0, 0, 0x1000 + 0x100 * i, Shape{32, 1, 8});
  (*w)->Alloc(0, 0, 0x8000, Shape{777, 1, 8});
  for (uint64_t t = 1; t <= 5; ++t) (*w)->Alloc(0, 0, 0x10000 + 0x100 * t, Shape{32, 1, 8});
  for (uint32_t t = 1; t <= 5; ++t) {
    ASSERT_TRUE((*w)->Free(t, 0, 0x1000 + 0x100 * (t - 1)));  // before the failure: freed
    ASSERT_TRUE((*w)->Free(t, 0, 0x10000 + 0x100 * t));       // after it: never comes
  }
  ASSERT_TRUE((*w)->Free(0, 0, 0x8000));
  ASSERT_TRUE((*w)->Finish().ok());
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->streams.size(), 6u);
  RunOptions options;
  options.max_passes = 1;
  FailWhenOthersSleep::others = 5 + 1;  // the waiters and the joining thread
  const RunResult r = ReplayPerThreadWith<FailWhenOthersSleep>(ViewOf(*p), ViewOf(*s), options);
  EXPECT_EQ(r.error.words, "allocation of 777 bytes failed at op 5 of thread 0's stream");
  EXPECT_EQ(r.error.Kind(), RunErrorKind::kOpFailed);  // not the waiters' kStopped
}

TEST(ThreadScheduleTest, SharedScheduleMapsBack) {
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("pc2.trace", ProducerConsumer(10)));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<int> shared = ShareThreadSchedule(*s);
  ASSERT_TRUE(shared.ok()) << shared.status();
  const int fd = *shared;
  absl::StatusOr<ThreadScheduleView> v = MapSharedThreadSchedule(fd);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->streams.size(), 2u);
  EXPECT_EQ(v->sync_points, s->sync_points);
  EXPECT_EQ(v->streams[1].num_waits, s->streams[1].waits.size());
  EXPECT_EQ(v->streams[1].waits[0].count, s->streams[1].waits[0].count);
  EXPECT_EQ(v->slot_limit, s->slot_limit);
  close(fd);
}

// Bad input: thread 1 frees an object no thread allocated. The decoder
// refuses the trace before any schedule is built.
TEST(ThreadScheduleTest, FreeBeforeAnyAllocIsRefused) {
  proto::Chunk c;
  testing_util::AddShape(&c, 16, 1, 8);
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kSetThread, 1));
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(1)));  // object 1: never allocated
  const std::string path = testing_util::WriteTrace("free_first.trace", {c}, 2);
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not live"), std::string::npos) << p.status();
}

// Bad input: 100,000 threads, one alloc and free each. The per-thread
// replay refuses it (never 100,000 OS threads), saying what to do.
TEST(ThreadScheduleTest, TooManyThreadsAreRefused) {
  std::vector<Step> steps;
  for (uint32_t t = 0; t < 100000; ++t) {
    steps.push_back({Step::kAlloc, t, 0, 0x10});
    steps.push_back({Step::kFree, t, 0, 0x10});
  }
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(Write("threads100k.trace", steps));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->threads, 100000u);
  absl::StatusOr<ThreadSchedule> s = BuildThreadSchedule(*p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("100000 threads"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("--threads=one"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace alloctrace
