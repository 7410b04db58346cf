// The multi-threaded workloads (thread_workloads.h) through the counting
// allocator: they free everything, run on several threads, and free across
// threads exactly where they promise to. recorded_threads_test.cc checks the
// same through the real TraceAllocator and Recorder.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "alloctrace/tracer/workloads/counting_allocator.h"
#include "alloctrace/tracer/workloads/workload_table.h"
#include "alloctrace/tracer/workloads/workloads.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace::workloads {
namespace {

using ::alloctrace::workloads::testing::CountingAllocator;
using ::alloctrace::workloads::testing::CountingEvent;
using ::alloctrace::workloads::testing::CountingLog;
using ::testing::IsEmpty;

const std::vector<WorkloadDef>& Defs() { return MultiThreadedWorkloadDefs<CountingAllocator>(); }

const WorkloadDef& Def(std::string_view name) {
  for (const WorkloadDef& def : Defs()) {
    if (def.name == name) return def;
  }
  ADD_FAILURE() << "no workload " << name;
  std::abort();
}

// What one counted run did, and how its threads shared blocks and arenas.
struct ThreadedRun {
  std::vector<CountingEvent> events;
  std::vector<std::string> errors;
  uint64_t allocs = 0, frees = 0, live = 0;
  uint32_t threads = 0;
  uint64_t cross_thread_frees = 0;                       // freed on another thread than allocated
  std::map<uint32_t, std::set<uint32_t>> arena_threads;  // arena -> threads using it

  bool SomeArenaShared() const {
    for (const auto& [arena, threads] : arena_threads) {
      if (threads.size() > 1) return true;
    }
    return false;
  }
};

ThreadedRun RunCounted(const WorkloadDef& def, const WorkloadParams& params, uint64_t seed) {
  ThreadedRun run;
  CountingLog log;
  def.run(params, seed);
  run.events = log.events();
  run.errors = log.errors();
  run.allocs = log.allocs();
  run.frees = log.frees();
  run.live = log.live_blocks();
  run.threads = log.threads();
  std::map<uint64_t, uint32_t> alloc_thread;  // block ordinal -> thread
  for (const CountingEvent& e : run.events) {
    run.arena_threads[e.arena].insert(e.thread);
    if (e.alloc) {
      alloc_thread[e.block] = e.thread;
    } else if (alloc_thread[e.block] != e.thread) {
      ++run.cross_thread_frees;
    }
  }
  return run;
}

WorkloadParams Params(const WorkloadDef& def, std::vector<std::string> overrides = {}) {
  absl::StatusOr<WorkloadParams> params = ParseWorkloadParams(def.name, def.params, overrides);
  EXPECT_TRUE(params.ok()) << params.status();
  return params.ok() ? *params : WorkloadParams(def.name, def.params);
}

void ExpectClean(const ThreadedRun& run, const std::string& what) {
  EXPECT_THAT(run.errors, IsEmpty()) << what;
  EXPECT_GT(run.allocs, 0u) << what;
  EXPECT_EQ(run.frees, run.allocs) << what;
  EXPECT_EQ(run.live, 0u) << what;
}

// What each thread allocated, in its order, as a multiset over threads: the
// part of a run the seed fixes (thread numbers and the interleaving are the
// scheduler's). producer_consumer's queue (arena 2) is left out: how often
// its deque grows depends on how full the scheduler lets it run.
std::multiset<std::vector<uint64_t>> AllocationsPerThread(const WorkloadDef& def,
                                                          const ThreadedRun& run) {
  const bool skip_queue = def.name == "producer_consumer";
  std::map<uint32_t, std::vector<uint64_t>> per_thread;
  for (const CountingEvent& e : run.events) {
    if (e.alloc && !(skip_queue && e.arena == 2)) per_thread[e.thread].push_back(e.bytes);
  }
  std::multiset<std::vector<uint64_t>> out;
  for (auto& [thread, sizes] : per_thread) out.insert(std::move(sizes));
  return out;
}

class EveryThreadedWorkloadTest : public ::testing::TestWithParam<std::string> {
 protected:
  const WorkloadDef& def() const { return Def(GetParam()); }
};

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : Defs()) names.emplace_back(def.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Workloads, EveryThreadedWorkloadTest, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

TEST_P(EveryThreadedWorkloadTest, DefaultsFreeEverythingOnSeveralThreads) {
  const ThreadedRun run = RunCounted(def(), Params(def()), 1);
  ExpectClean(run, GetParam());
  EXPECT_GT(run.threads, 1u);
  // Defaults are sized for small checked-in traces.
  EXPECT_GE(run.events.size(), 5'000u);
  EXPECT_LE(run.events.size(), 300'000u);
  EXPECT_TRUE(def().multi_threaded);
  EXPECT_TRUE(def().seeded);
}

TEST_P(EveryThreadedWorkloadTest, EachThreadAllocatesWhatTheSeedSays) {
  const WorkloadParams params = Params(def());
  const auto a = AllocationsPerThread(def(), RunCounted(def(), params, 5));
  const auto b = AllocationsPerThread(def(), RunCounted(def(), params, 5));
  const auto c = AllocationsPerThread(def(), RunCounted(def(), params, 6));
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
}

TEST_P(EveryThreadedWorkloadTest, EachParamAtOne) {
  for (const ParamSpec& spec : def().params) {
    WorkloadParams params(def().name, def().params);
    ASSERT_TRUE(params.Set(spec.name, 1).ok()) << spec.name;
    const ThreadedRun run = RunCounted(def(), params, 3);
    EXPECT_THAT(run.errors, IsEmpty()) << params.ToString();
    EXPECT_EQ(run.frees, run.allocs) << params.ToString();
    EXPECT_EQ(run.live, 0u) << params.ToString();
  }
}

TEST_P(EveryThreadedWorkloadTest, AllParamsAtOne) {
  WorkloadParams params(def().name, def().params);
  for (const ParamSpec& spec : def().params) ASSERT_TRUE(params.Set(spec.name, 1).ok());
  ExpectClean(RunCounted(def(), params, 3), params.ToString());
}

TEST_P(EveryThreadedWorkloadTest, SpecsAreConsistent) {
  std::set<std::string_view> names;
  for (const ParamSpec& spec : def().params) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_FALSE(spec.help.empty()) << spec.name;
  }
  EXPECT_FALSE(def().description.empty());
  EXPECT_TRUE(def().source.find("mimalloc-bench") != std::string_view::npos) << def().source;
}

// What each workload promises about threads and arenas.

TEST(ThreadedWorkloadsTest, ProducerConsumerFreesEveryMessageOnAConsumer) {
  const WorkloadDef& def = Def("producer_consumer");
  const ThreadedRun run = RunCounted(
      def, Params(def, {"producers=3", "consumers=2", "messages=2000", "queue_capacity=16"}), 1);
  ExpectClean(run, "producer_consumer");
  // Arena 1: the messages, made by 3 producers and freed by 2 consumers.
  uint64_t messages = 0;
  for (const CountingEvent& e : run.events) messages += e.alloc && e.arena == 1;
  EXPECT_EQ(messages, 3u * 2000);
  // Every producer; a consumer may, in principle, never win a message.
  EXPECT_GE(run.arena_threads.at(1).size(), 4u);
  EXPECT_GE(run.cross_thread_frees, messages);
  EXPECT_GE(run.arena_threads.at(2).size(), 2u) << "the queue's deque";
  for (const CountingEvent& e : run.events) {
    if (e.arena == 1 && e.alloc) {
      EXPECT_GE(e.bytes, 16u);
      EXPECT_LE(e.bytes, 512u);
    }
  }
}

TEST(ThreadedWorkloadsTest, LarsonHandsEachThreadsBlocksToItsSuccessor) {
  const WorkloadDef& def = Def("larson");
  const ThreadedRun run =
      RunCounted(def, Params(def, {"threads=2", "generations=3", "operations=300", "slots=50"}), 1);
  ExpectClean(run, "larson");
  EXPECT_EQ(run.threads, 2u * 3) << "a thread per generation per lineage";
  EXPECT_EQ(run.allocs, 2u * (50 + 3 * 300));
  EXPECT_EQ(run.arena_threads.size(), 1u) << "the global heap only";
  EXPECT_EQ(run.arena_threads.at(0).size(), 6u);
  EXPECT_GT(run.cross_thread_frees, 0u);
}

TEST(ThreadedWorkloadsTest, MigrationSharesOneArenaAcrossThreads) {
  const WorkloadDef& def = Def("migration");
  const ThreadedRun run =
      RunCounted(def, Params(def, {"threads=3", "operations=2000", "slots=100"}), 1);
  ExpectClean(run, "migration");
  EXPECT_EQ(run.allocs, 3u * 2000);
  EXPECT_EQ(run.arena_threads.size(), 1u);
  EXPECT_GE(run.arena_threads.at(1).size(), 3u);
  EXPECT_GT(run.cross_thread_frees, 0u);
  // Sizes below a size_t are raised to one: the block stores its size.
  const ThreadedRun tiny =
      RunCounted(def, Params(def, {"threads=2", "min_size=1", "max_size=4", "slots=3"}), 1);
  ExpectClean(tiny, "migration");
}

TEST(ThreadedWorkloadsTest, ThreadMapChurnKeepsEachMapOnItsThread) {
  const WorkloadDef& def = Def("thread_map_churn");
  const ThreadedRun run = RunCounted(def, Params(def, {"threads=3", "operations=3000"}), 1);
  ExpectClean(run, "thread_map_churn");
  EXPECT_EQ(run.threads, 3u);
  EXPECT_EQ(run.arena_threads.size(), 3u);
  for (const auto& [arena, threads] : run.arena_threads) EXPECT_EQ(threads.size(), 1u) << arena;
  EXPECT_EQ(run.cross_thread_frees, 0u);
}

TEST(ThreadedWorkloadsTest, RegistryMarksThemMultiThreaded) {
  for (const std::string& name : Names()) {
    const WorkloadInfo* info = FindWorkload(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_TRUE(info->multi_threaded) << name;
  }
  EXPECT_FALSE(FindWorkload("simple_map")->multi_threaded);
}

}  // namespace
}  // namespace alloctrace::workloads
