// Runs each example program at a tiny size, as a user would (no flags, the
// trace path in $ALLOCTRACE_OUT), and checks that it exits 0, prints its
// result line and leaves a complete trace the reader accepts, with every
// block freed. The programs with an alias per container role also name
// those roles in the trace's class table, and print the same result under a
// per-role ALLOCTRACE_POLICY assignment as under std.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/inspect/trace_stats.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

struct Result {
  int exit_code = -1;
  std::string output;
};

// Runs examples/programs/NAME with `args` and ALLOCTRACE_OUT=trace, and
// ALLOCTRACE_POLICY=policy if `policy` is not empty.
Result RunProgram(const std::string& name, const std::vector<std::string>& args,
                  const std::string& trace, const std::string& policy = "") {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string command = absl::StrCat(
      policy.empty() ? "" : absl::StrCat("ALLOCTRACE_POLICY='", policy, "' "), "ALLOCTRACE_OUT='",
      trace, "' '", srcdir != nullptr ? srcdir : ".", "/alloctrace/examples/programs/", name, "'");
  for (const std::string& a : args) absl::StrAppend(&command, " ", a);
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), pipe) != nullptr) r.output += buf;
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return r;
}

// threads: the threads expected in the trace, 0 for "more than one".
TraceStats ExpectCompleteTrace(const std::string& name, const std::vector<std::string>& args,
                               uint64_t threads = 1) {
  const std::string trace = absl::StrCat(::testing::TempDir(), "/", name, ".trace");
  const Result r = RunProgram(name, args, trace);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StartsWith(r.output, name + ": ")) << r.output;
  absl::StatusOr<TraceStats> stats = ComputeTraceStats(trace);
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (!stats.ok()) return {};
  EXPECT_TRUE(stats->has_footer) << name;
  EXPECT_GT(stats->allocs, 100u) << name;
  EXPECT_EQ(stats->frees, stats->allocs) << name << ": containers are destroyed before exit";
  if (threads == 0) {
    EXPECT_GT(stats->threads, 1u) << name;
  } else {
    EXPECT_EQ(stats->threads, threads) << name;
  }
  EXPECT_EQ(stats->header.workload(), name);
  return *stats;
}

TEST(ProgramsTest, LruCacheGivesEveryStringAnArena) {
  const TraceStats stats = ExpectCompleteTrace("lru_cache", {"3000", "100"});
  // At least one name string per operation, each its own allocator.
  EXPECT_GT(stats.arenas_created, 3000u);
  EXPECT_EQ(stats.arenas_destroyed, stats.arenas_created);
}

TEST(ProgramsTest, GraphSearch) {
  const TraceStats stats = ExpectCompleteTrace("graph_search", {"300", "3"});
  EXPECT_GT(stats.arenas_created, 100u) << "an adjacency set per vertex";
}

TEST(ProgramsTest, TextIndex) { ExpectCompleteTrace("text_index", {"3000", "500"}); }

// The names in the trace's class table.
std::vector<std::string> ClassNames(const TraceStats& stats) {
  std::vector<std::string> names;
  for (const ClassSummary& c : stats.classes) names.push_back(c.def.name);
  return names;
}

// The class named `name` (a default one, with a failure, if none is).
ClassSummary ClassNamed(const TraceStats& stats, const std::string& name) {
  for (const ClassSummary& c : stats.classes) {
    if (c.def.name == name) return c;
  }
  ADD_FAILURE() << "no class " << name << " among " << absl::StrJoin(ClassNames(stats), ", ");
  return {};
}

// The program prints the same line under `assignment` as under std, and
// writes no trace under either.
void ExpectSameResultUnder(const std::string& name, const std::vector<std::string>& args,
                           const std::string& assignment) {
  const std::string trace = absl::StrCat(::testing::TempDir(), "/", name, ".policy.trace");
  const Result under_std = RunProgram(name, args, trace, "std");
  const Result assigned = RunProgram(name, args, trace, assignment);
  EXPECT_EQ(under_std.exit_code, 0) << under_std.output;
  EXPECT_EQ(assigned.exit_code, 0) << assigned.output;
  EXPECT_TRUE(absl::StrContains(under_std.output, "checksum")) << under_std.output;
  EXPECT_EQ(assigned.output, under_std.output) << assignment;
  EXPECT_NE(access(trace.c_str(), F_OK), 0) << "nothing is recorded under a policy";
}

TEST(ProgramsTest, ServiceNamesItsRolesAndSharesItsRegistry) {
  const TraceStats stats = ExpectCompleteTrace("service", {"2", "3000", "64"}, /*threads=*/0);
  EXPECT_TRUE(stats.has_class_table);
  // Each worker's index and queue are its own; the one registry is shared.
  for (const char* role : {"WorkerIndex", "WorkerQueue"}) {
    const ClassSummary c = ClassNamed(stats, role);
    EXPECT_TRUE(c.def.tagged) << role;
    EXPECT_EQ(c.arenas, 2u) << role;
    EXPECT_EQ(c.shared_arenas, 0u) << role;
    EXPECT_EQ(c.churned_arenas, 2u) << role;
  }
  const ClassSummary registry = ClassNamed(stats, "Registry");
  EXPECT_EQ(registry.arenas, 1u);
  // Both workers allocate in the registry: interleaved, or (so short a run
  // that one worker ends before the other starts) handed off.
  EXPECT_EQ(registry.shared_arenas + registry.handed_off_arenas, 1u);
  EXPECT_GE(registry.threads.size(), 2u);
  EXPECT_EQ(stats.arenas_destroyed, stats.arenas_created) << "every allocator copy released";
}

TEST(ProgramsTest, ServiceUnderAPolicyPerRole) {
  ExpectSameResultUnder(
      "service", {"2", "3000", "64"},
      "WorkerIndex=slab/st/stack;WorkerQueue=slab/st/stack;Registry=slab/mt/stack;*=std");
}

TEST(ProgramsTest, SearchServiceNamesItsRolesAndHandsOverItsResults) {
  const TraceStats stats =
      ExpectCompleteTrace("search_service", {"2", "1000", "256"}, /*threads=*/0);
  EXPECT_TRUE(stats.has_class_table);
  // Each worker's index and cache are its own; the statistics are shared.
  for (const char* role : {"role::Postings", "role::QueryCache"}) {
    const ClassSummary c = ClassNamed(stats, role);
    EXPECT_TRUE(c.def.tagged) << role;
    EXPECT_EQ(c.arenas, 2u) << role;
    EXPECT_EQ(c.shared_arenas, 0u) << role;
    EXPECT_EQ(c.churned_arenas, 2u) << role;
  }
  const ClassSummary shared_stats = ClassNamed(stats, "role::SharedStats");
  EXPECT_EQ(shared_stats.arenas, 1u);
  EXPECT_EQ(shared_stats.shared_arenas, 1u) << "both workers allocate in the statistics";
  // Each worker's results, then the main thread's merged ones: a worker's
  // map is used by its thread, then by the main thread after join().
  const ClassSummary results = ClassNamed(stats, "role::Results");
  EXPECT_EQ(results.arenas, 3u);
  EXPECT_EQ(results.shared_arenas, 0u) << "never used by two threads at once";
  EXPECT_EQ(results.handed_off_arenas, 2u)
      << "each worker's, walked and freed by the main thread after join()";
  EXPECT_EQ(results.threads.size(), 3u) << "the two workers and the main thread";
  EXPECT_EQ(stats.arenas_destroyed, stats.arenas_created) << "every allocator copy released";
}

TEST(ProgramsTest, SearchServiceUnderAPolicyPerRole) {
  ExpectSameResultUnder("search_service", {"2", "1000", "256"},
                        "role::Postings=slab/st/stack;role::QueryCache=slab/st/stack;"
                        "role::Results=slab/st/stack;role::SharedStats=slab/mt/stack;*=std");
}

TEST(ProgramsTest, CatalogNamesItsRoles) {
  const TraceStats stats = ExpectCompleteTrace("catalog", {"2000", "5000"});
  EXPECT_TRUE(stats.has_class_table);
  const ClassSummary catalog = ClassNamed(stats, "Catalog");
  EXPECT_EQ(catalog.arenas, 1u);
  EXPECT_EQ(catalog.built_once_arenas, 1u);
  const ClassSummary session = ClassNamed(stats, "Session");
  EXPECT_EQ(session.arenas, 1u);
  EXPECT_EQ(session.churned_arenas, 1u);
  EXPECT_EQ(stats.arenas_destroyed, stats.arenas_created);
}

TEST(ProgramsTest, CatalogUnderAPolicyPerRole) {
  ExpectSameResultUnder("catalog", {"2000", "5000"},
                        "Catalog=slab/st/stack;Session=slab/st/stack;*=std");
}

TEST(ProgramsTest, PipelineNamesItsRolesAndSharesItsHandoff) {
  const TraceStats stats = ExpectCompleteTrace("pipeline", {"1000", "256"}, /*threads=*/0);
  EXPECT_TRUE(stats.has_class_table);
  // The parser's map is its own, the aggregator's its own; the queue's
  // nodes are allocated by the parser and freed by the aggregator.
  for (const char* role : {"ParseIndex", "Totals"}) {
    const ClassSummary c = ClassNamed(stats, role);
    EXPECT_TRUE(c.def.tagged) << role;
    EXPECT_EQ(c.arenas, 1u) << role;
    EXPECT_EQ(c.shared_arenas, 0u) << role;
    EXPECT_EQ(c.churned_arenas, 1u) << role;
    EXPECT_EQ(c.threads.size(), 1u) << role << ": one thread reaches the class";
  }
  EXPECT_NE(ClassNamed(stats, "ParseIndex").threads, ClassNamed(stats, "Totals").threads)
      << "the two per-thread roles are different threads'";
  // Both threads reach it: shared where their turns interleave, handed off
  // where the parser sent all its records (fewer than the queue holds)
  // before the aggregator first ran.
  const ClassSummary handoff = ClassNamed(stats, "Handoff");
  EXPECT_EQ(handoff.arenas, 1u);
  EXPECT_EQ(handoff.shared_arenas + handoff.handed_off_arenas, 1u)
      << "allocated by the parser, freed by the aggregator";
  EXPECT_GE(handoff.threads.size(), 2u);
  EXPECT_EQ(stats.arenas_destroyed, stats.arenas_created) << "every allocator copy released";
}

TEST(ProgramsTest, PipelineUnderAPolicyPerRole) {
  ExpectSameResultUnder(
      "pipeline", {"1000", "256"},
      "ParseIndex=slab/st/single;Totals=small_node/st/single;Handoff=slab/mt/stack;*=std");
}

TEST(ProgramsTest, PipelineBadSizeIsAUsageError) {
  const Result r = RunProgram("pipeline", {"3000", "x"}, ::testing::TempDir() + "/bad.trace");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ProgramsTest, BadSizeIsAUsageError) {
  const Result r = RunProgram("lru_cache", {"0"}, ::testing::TempDir() + "/bad.trace");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace alloctrace
