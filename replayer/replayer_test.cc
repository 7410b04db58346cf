// End to end: the replayer binary on checked-in traces, and on bad input.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

struct Output {
  int exit_code;
  std::string out;
  std::string err;
};

// Runs the replayer with `args` (a shell word list, no quoting needed).
Output RunReplayer(const std::string& args) {
  const std::string dir = testing::TempDir();
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string cmd =
      absl::StrCat("replayer/replayer --quiet ", args, " >", out, " 2>", err);
  const int status = std::system(cmd.c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  return Output{WIFEXITED(status) ? WEXITSTATUS(status) : 128, slurp(out), slurp(err)};
}

#if defined(__SANITIZE_ADDRESS__)
// Few policies, and no preloaded mallocs: they cannot load beside ASan.
constexpr const char* kPolicies = "malloc,slab,bump,pool/boundary/exp/st/stack/free";
#else
constexpr const char* kPolicies = "*";
#endif

// Every checked-in trace through every policy (a few under ASan), one run
// each: every policy produces figures, none fails.
TEST(ReplayerTest, EveryCheckedInTraceThroughEveryPolicy) {
  const char* const traces[] = {
      "simple_map",         "fixed_priority_queue", "remove_if",       "random",
      "shared_ptr_new",     "make_shared",          "allocate_shared", "single",
      "bulk",               "bulk_reversed",        "butterfly",       "records_by_value",
      "records_shared_new", "records_make_shared",  "list_churn",      "unordered_map",
      // Real programs, captured whole: calloc, realloc, arena 0.
      "capture_sort",       "capture_python"};
  for (const char* t : traces) {
    const std::string policies = kPolicies;
    const Output o = RunReplayer(absl::StrCat("--repeat=1 --rss_samples=100 --format=csv --policies='",
                                      policies, "' traces/", t, ".trace"));
    ASSERT_EQ(o.exit_code, 0) << t << "\n" << o.err;
    int rows = 0;
    for (absl::string_view line : absl::StrSplit(o.out, '\n')) {
      if (line.empty() || absl::StartsWith(line, "trace,")) continue;
      ++rows;
      EXPECT_NE(line.find(",ok,"), absl::string_view::npos) << t << ": " << line;
    }
    EXPECT_GE(rows, 4) << t;
  }
}

TEST(ReplayerTest, TableHasTheFiguresAndFitsEightyColumns) {
  const Output o = RunReplayer("--repeat=2 --policies=malloc,slab,bump traces/simple_map.trace");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("harness floor (bump allocator)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("machine: "), std::string::npos);
  EXPECT_NE(o.out.find("ideal: "), std::string::npos);
  for (absl::string_view line : absl::StrSplit(o.out, '\n')) {
    // Count characters, not bytes: the RSS course uses block characters.
    size_t chars = 0;
    for (unsigned char c : line) chars += (c & 0xC0) != 0x80;
    EXPECT_LE(chars, 80u) << line;
  }
}

TEST(ReplayerTest, ListsPoliciesAndTakesDashedFlags) {
  const Output o = RunReplayer("--list-policies");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* name : {"malloc", "slab", "tcmalloc", "pool/boundary/exp/st/stack/free"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
  const Output dashed =
      RunReplayer("--repeat=1 --rss-samples=100 --policies=slab --format=csv traces/single.trace");
  EXPECT_EQ(dashed.exit_code, 0) << dashed.err;
}

TEST(ReplayerTest, JsonCarriesEveryRunFigure) {
  const Output o = RunReplayer("--repeat=1 --policies=slab --format=json traces/bulk.trace");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* key : {"\"ns_per_op\"", "\"peak_rss_bytes\"", "\"minor_faults\"",
                          "\"rss_course_bytes\"", "\"ideal_peak_live_bytes\"", "\"machine\""}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
  }
}

TEST(ReplayerTest, OutWritesTheFileWhole) {
  const std::string path = testing::TempDir() + "/report.md";
  const Output o =
      RunReplayer(absl::StrCat("--repeat=1 --policies=malloc --format=markdown --out=", path,
                       " traces/single.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("| malloc |"), std::string::npos) << ss.str();
}

TEST(ReplayerTest, BadInputGivesAClearErrorAndNonZeroExit) {
  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  const std::string dir = testing::TempDir();
  {
    std::ofstream(dir + "/garbage.trace") << "this is not a trace";
    std::ifstream in("traces/simple_map.trace", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes[bytes.size() / 2] ^= 0x40;
    std::ofstream(dir + "/flipped.trace", std::ios::binary) << bytes;
  }
  const Case cases[] = {
      {"traces/no_such.trace", 1, "traces/no_such.trace: cannot open trace"},
      {dir + "/garbage.trace", 1, "not an alloctrace trace"},
      {"--policies=nosuch traces/single.trace", 2, "nosuch"},
      {"--repeat=0 traces/single.trace", 2, "--repeat=0"},
      {"--touch=some traces/single.trace", 2, "--touch=some"},
      {"--format=xml traces/single.trace", 2, "--format=xml"},
      {"", 2, "no trace file given"},
      {"--out=/nonexistent/dir/x.csv --policies=malloc --repeat=1 traces/single.trace", 1,
       "cannot write /nonexistent/dir/x.csv"},
  };
  for (const Case& c : cases) {
    const Output o = RunReplayer(c.args);
    EXPECT_EQ(o.exit_code, c.code) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << c.args << "\ngot: " << o.err;
    EXPECT_TRUE(o.out.empty()) << c.args;
  }
  // A flipped byte: an error naming the byte offset, or (if the flip lands
  // somewhere harmless) a clean run; never a crash.
  const Output o = RunReplayer("--repeat=1 --policies=malloc " + dir + "/flipped.trace");
  EXPECT_TRUE(o.exit_code == 0 || (o.exit_code == 1 && o.err.find("byte ") != std::string::npos))
      << o.exit_code << " " << o.err;
}

}  // namespace
}  // namespace alloctrace
