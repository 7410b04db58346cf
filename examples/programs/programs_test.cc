// Runs each example program at a tiny size, as a user would (no flags, the
// trace path in $ALLOCTRACE_OUT), and checks that it exits 0, prints its
// result line and leaves a complete trace the reader accepts, with every
// block freed.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/inspect/trace_stats.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

struct Result {
  int exit_code = -1;
  std::string output;
};

// Runs examples/programs/NAME with `args` and ALLOCTRACE_OUT=trace.
Result RunProgram(const std::string& name, const std::vector<std::string>& args,
                  const std::string& trace) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string command =
      absl::StrCat("ALLOCTRACE_OUT='", trace, "' '", srcdir != nullptr ? srcdir : ".",
                   "/alloctrace/examples/programs/", name, "'");
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

TraceStats ExpectCompleteTrace(const std::string& name, const std::vector<std::string>& args) {
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
  EXPECT_EQ(stats->threads, 1u) << name;
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

TEST(ProgramsTest, BadSizeIsAUsageError) {
  const Result r = RunProgram("lru_cache", {"0"}, ::testing::TempDir() + "/bad.trace");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace alloctrace
