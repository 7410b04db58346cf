// End to end: replayer --per_container, the verdict per class of
// containers, on a checked-in trace with two tagged classes and on a
// multi-threaded one whose classes differ in what may serve them.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/proto/trace.pb.h"
#include "alloctrace/replayer/testing/run_command_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::Output;
using testing_util::RunReplayer;
using testing_util::Slurp;

// Few, short rounds: these tests check what the search says and when, not
// its figures.
constexpr const char* kQuick =
    "--per_container --total_budget=2 --min_runs=3 --race_min_runs=3 --passes=2 --warm_ms=0 "
    "--max_reruns=0";

// Six policies, one or two of each kind (a malloc, the slab in both
// holdings, the small-node pool, an article pool): the search and its words
// as with every policy, in half the time.
TEST(PerContainerTest, OrderBookGetsAPolicyAndAnAliasPerClass) {
  const std::string json = absl::StrCat(testing::TempDir(), "/order_book.json");
  const std::string table = absl::StrCat(testing::TempDir(), "/order_book.txt");
  Output o = RunReplayer(
      absl::StrCat(kQuick,
                   " --policies=malloc,mimalloc,slab/st/single,slab/st/stack,small_node/st/single,"
                   "pool/simple/exp/st/stack/free --format=table,json --out=",
                   table, ",", json, " traces/order_book.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o.out = Slurp(table);
  EXPECT_TRUE(absl::StrContains(o.out, "PER CONTAINER (a policy per class of containers)"))
      << o.out;
  // The alias lines are printed as the answer only when the mix is shown
  // faster than the best single choice; the JSON always has them.
  EXPECT_EQ(absl::StrContains(o.out, "template <class T> using OrderIndexAlloc ="),
            absl::StrContains(o.out, "Adopt, per container"))
      << o.out;
  EXPECT_TRUE(absl::StrContains(o.out, "3.6% of the memory ops, below the 5% searched: held"))
      << o.out;
  const std::string j = Slurp(json);
  EXPECT_TRUE(absl::StrContains(j, "\"per_container\": [")) << j;
  EXPECT_TRUE(absl::StrContains(j, "\"class\": \"alloctrace::workloads::OrderIndex\"")) << j;
  EXPECT_TRUE(absl::StrContains(j, "\"alias\": \"template <class T> using OrderIndexAlloc =")) << j;
  EXPECT_TRUE(absl::StrContains(j, "\"alias\": \"template <class T> using PriceLevelsAlloc ="))
      << j;
  EXPECT_TRUE(absl::StrContains(j, "\"mix\": {\"why_not\": null, \"assignment\": ")) << j;
  EXPECT_TRUE(absl::StrContains(j, "*=std\", \"heap\": ")) << j;
}

// Two threads, each with its own container of class Worker (arenas 1 and
// 2), and one Registry (arena 3) both use.
std::string WriteService() {
  const std::string path = absl::StrCat(testing::TempDir(), "/service.trace");
  auto w = TraceWriter::Create(path, proto::Header());
  EXPECT_TRUE(w.ok());
  (*w)->DefineClass(ClassDef{1, "app::Worker", 32, true});
  (*w)->DefineClass(ClassDef{2, "app::Registry", 32, true});
  (*w)->ArenaCreate(0, 1, 1);
  (*w)->ArenaCreate(1, 2, 1);
  (*w)->ArenaCreate(0, 3, 2);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t t = static_cast<uint32_t>(i % 2);
    const uint64_t a = 0x100000 * (t + 1) + 64 * static_cast<uint64_t>(i % 64);
    (*w)->Alloc(t, t + 1, a, Shape{1, 32, 8});
    EXPECT_TRUE((*w)->Free(t, t + 1, a));
    if (i % 8 == 0) {
      const uint64_t r = 0x900000 + 64 * static_cast<uint64_t>(i % 32);
      (*w)->Alloc(t, 3, r, Shape{1, 48, 8});
      EXPECT_TRUE((*w)->Free(1 - t, 3, r));
    }
  }
  EXPECT_TRUE((*w)->Finish().ok());
  return path;
}

TEST(PerContainerTest, ASingleThreadedPoolServesOnlyAClassOneThreadReaches) {
  const std::string trace = WriteService();
  const std::string json = absl::StrCat(testing::TempDir(), "/service.json");
  const Output o = RunReplayer(
      absl::StrCat(kQuick, " --policies=slab/mt/stack --format=json --out=", json, " ", trace));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string j = Slurp(json);
  // Registry's arena is both threads': no single-threaded pool may serve it.
  EXPECT_TRUE(absl::StrContains(
      j,
      "\"skipped\": \"slab/st/stack is not thread-safe, and 1 of Registry's arenas are used "
      "by several threads\""))
      << j;
  // Worker's containers are each one thread's: a pool per container may
  // serve them, one pool for the process may not (both threads reach it).
  EXPECT_TRUE(absl::StrContains(
      j,
      "\"skipped\": \"slab/st/single keeps one pool for the process, and threads 0, 1 reach "
      "it (through Worker)\""))
      << j;
  EXPECT_FALSE(absl::StrContains(j, "Registry=slab/st/")) << j;
  EXPECT_FALSE(absl::StrContains(j, "app::Registry=slab/st/")) << j;
}

TEST(PerContainerTest, ATraceWithoutClassesSaysSo) {
  const Output o =
      RunReplayer(absl::StrCat(kQuick, " --policies=slab/st/single traces/single.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(absl::StrContains(o.out,
                                "no per-container verdict: the trace names no class of "
                                "containers"))
      << o.out;
}

TEST(PerContainerTest, BadFlagsAreUsageErrors) {
  Output o = RunReplayer("--per_container --min_share=150 traces/order_book.trace");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(o.err, "--min_share=150: must be a percentage, 0 to 100")) << o.err;
  o = RunReplayer("--per_container --in_situ --policies=malloc -- /bin/true");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(o.err, "--per_container needs a trace")) << o.err;
}

}  // namespace
}  // namespace alloctrace
