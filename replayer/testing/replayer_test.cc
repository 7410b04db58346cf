// End to end: the replayer binary on checked-in traces, and on bad input.
// (Over 500 lines: one binary's whole-process behaviour, each test a
// command line and what it must print, sharing the helpers above them.)
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/proto/trace.pb.h"
#include "alloctrace/replayer/testing/run_command_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::Output;
using testing_util::RunReplayer;
using testing_util::RunShell;

#if defined(__SANITIZE_ADDRESS__)
// Few policies, and no preloaded mallocs: they cannot load beside ASan.
constexpr const char* kPolicies = "malloc,slab/st/single,bump,pool/boundary/exp/st/stack/free";
constexpr bool kAsan = true;
#else
constexpr const char* kPolicies = "*";
constexpr bool kAsan = false;
#endif

// One cold pass, one run per policy: the fastest way through every policy.
// One run of each policy, however long the first round takes (no total
// budget: on a slow machine its cap would leave some policies not run).
constexpr const char* kOneRun =
    "--min_runs=1 --max_runs=1 --max_reruns=0 --passes=1 --budget=0 --total_budget=0";
// A few runs of two passes: enough for medians, intervals and ties.
constexpr const char* kFewRuns =
    "--min_runs=3 --max_runs=3 --max_reruns=0 --passes=2 --warm_ms=0 --budget=0";

// The rows of a CSV report, as maps from column name to value.
std::vector<std::map<std::string, std::string>> CsvRows(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    // No field of these reports holds a comma but the quoted error, which
    // is the last one looked at; split plainly.
    std::vector<std::string> fields = absl::StrSplit(line, ',');
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

// Allocators that never free (bump, pmr_monotonic, the article's `keep`
// policies) need every byte a trace ever allocates: on a trace that
// allocates more in all than its child's data limit (records_by_value: 595
// MiB over a 1.5 MiB live set) they fail, by design, at that limit. The
// only failure the end-to-end runs accept.
bool NeverFreeingPastItsLimit(const std::map<std::string, std::string>& row) {
  const std::string& name = row.at("policy");
  const bool never_frees =
      name == "bump" || name == "pmr_monotonic" || absl::EndsWith(name, "/keep");
  // (CsvRows splits at every comma, so the error may end before the words
  // "under the child's memory limit": its allocation failure is the sign.)
  const std::string& error = row.at("error");
  return never_frees && row.at("status") == "over limit" &&
         (error.find("memory limit") != std::string::npos ||
          error.find("bytes failed at op") != std::string::npos);
}

// Every checked-in trace through every policy (a few under ASan), one run
// each: every policy produces figures, none fails (but those that never
// free, at their limit). No race: it stops a child past 20x the fastest's
// time (at least 5 s) and eliminates its policy, and boost_pool's run of
// capture_python takes about 4 s (32x the fastest's) on a quiet machine,
// so a loaded one would eliminate it. One test case per trace, so that a
// failure names it and the test's shards share the traces out.
class EveryPolicyTest : public testing::TestWithParam<std::string> {};

TEST_P(EveryPolicyTest, EveryPolicyRunsAndNoneFails) {
  const std::string& t = GetParam();
  const Output o =
      RunReplayer(absl::StrCat(kOneRun, " --race=false --rss_samples=100 --format=csv --policies='",
                               kPolicies, "' traces/", t, ".trace"));
  const auto csv = CsvRows(o.out);
  int rows = 0;
  for (const auto& row : csv) {
    ++rows;
    if (NeverFreeingPastItsLimit(row)) continue;
    EXPECT_EQ(row.at("status"), "ok") << t << ": " << row.at("policy") << " " << row.at("error");
  }
  // A policy past its limit is a measured outcome, not a failure.
  EXPECT_EQ(o.exit_code, 0) << t << "\n" << o.err;
  EXPECT_GE(rows, 4) << t;
}

INSTANTIATE_TEST_SUITE_P(CheckedInTraces, EveryPolicyTest,
                         testing::Values("simple_map", "fixed_priority_queue", "remove_if",
                                         "random", "shared_ptr_new", "make_shared",
                                         "allocate_shared", "single", "bulk", "bulk_reversed",
                                         "butterfly", "records_by_value", "records_shared_new",
                                         "records_make_shared", "list_churn", "unordered_map",
                                         // Real programs, captured whole: calloc, realloc, arena 0.
                                         "capture_sort", "capture_python"),
                         [](const auto& info) { return info.param; });

TEST(ReplayerTest, TableHasTheVerdictFiguresAndFitsEightyColumns) {
  const Output o = RunReplayer(
      absl::StrCat(kFewRuns, " --policies=malloc,slab/st/single,bump traces/simple_map.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // The verdict comes first, then the table.
  const size_t verdict = o.out.find("VERDICT");
  ASSERT_NE(verdict, std::string::npos) << o.out;
  EXPECT_LT(verdict, o.out.find("policy "));
  for (const char* line : {"fastest:", "smallest RSS:", "recommended:", "rule:", "noise floor:",
                           "disturbed:", "Adopt:", "adopt (T: your container's element type):",
                           "  slab/st/single: alloctrace::pool::SlabAllocator<T,"}) {
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
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
  for (const char* name :
       {"malloc", "slab/st/single", "tcmalloc", "pool/boundary/exp/st/stack/free"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
  const Output dashed = RunReplayer(
      "--min-runs=1 --max-runs=1 --rss-samples=100 --policies=slab/st/single --format=csv "
      "traces/single.trace");
  EXPECT_EQ(dashed.exit_code, 0) << dashed.err;
}

// --help shows the replayer's own flags (defined in config.cc, not in the
// file with main), and nothing of the libraries it links.
TEST(ReplayerTest, HelpListsTheReplayersFlags) {
  const Output o = RunReplayer("--help");
  const std::string text = o.out + o.err;
  for (const char* flag :
       {"--policies", "--budget", "--format", "--confirm", "--threads", "--race"}) {
    EXPECT_TRUE(absl::StrContains(text, flag)) << flag << " missing from --help:\n" << text;
  }
  EXPECT_FALSE(absl::StrContains(text, "No flags matched")) << text;
}

TEST(ReplayerTest, JsonCarriesTheVerdictIntervalsAndEveryRun) {
  const Output o = RunReplayer(
      absl::StrCat(kFewRuns, " --policies=slab/st/single --format=json traces/bulk.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* key :
       {"\"verdict\": {\"fastest\": [",
        "\"smallest_rss\": [",
        "\"recommended\": \"",
        "\"equally_fast\": [\"",
        "\"memory_passed_over\": ",
        "\"rule\": \"",
        "\"ns_per_op\": {\"median\": ",
        "\"ci95\": [",
        "\"vs_malloc\": {\"median\": ",
        "\"noise_floor\": {\"median\": ",
        "\"runs\": [{\"round\": ",
        "\"kind\": \"cold\"",
        "\"kind\": \"warm\"",
        "\"cpu_s\": ",
        "\"wall_s\": ",
        "\"minor_faults\": ",
        "\"involuntary_switches\": ",
        "\"peak_rss_bytes\": ",
        "\"rss_course_bytes\"",
        "\"ideal_peak_live_bytes\"",
        "\"machine\"",
        "\"adopt\": {\"policy\": \"slab/st/single\", \"cpp_type\": "
        "\"alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded, "
        "alloctrace::pool::HoldingSingleton>\", \"header\": \"alloctrace/pool/pool_allocator.h\", "
        "\"bazel_target\": \"@alloctrace//pool\", \"cmake_target\": \"alloctrace::pool\"}",
        "\"adopt\": {\"policy\": \"malloc\", \"how\": "}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
  }
  // slab and malloc (always run: the reference), three runs of two passes.
  size_t passes = 0;
  for (size_t at = o.out.find("\"pass\": "); at != std::string::npos;
       at = o.out.find("\"pass\": ", at + 1)) {
    ++passes;
  }
  EXPECT_EQ(passes, 2u * 3u * 2u);
}

// --windows=always on a checked-in trace: the runs are served windows (a
// process per contender replays the trace on from round to round), the
// reports say so, and each policy left has one whole run for its memory
// figures.
TEST(ReplayerTest, SampledWindowsAreStatedInTheTableAndTheJson) {
  const Output table = RunReplayer(absl::StrCat(
      kFewRuns, " --windows=always --policies=slab/st/single traces/simple_map.trace"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  // 30,000 objects live beside 4096-op windows: the shape of a large live
  // heap (engine/windows.h), served, 4 strata.
  EXPECT_NE(table.out.find("  measured:     served windows: each contender's own process "
                           "replays the trace\n"),
            std::string::npos)
      << table.out;
  const Output json = RunReplayer(absl::StrCat(
      kFewRuns,
      " --windows=always --policies=slab/st/single --format=json traces/simple_map.trace"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"sampling\": {\"windowed\": true, \"strata\": 4, "
                          "\"windows_per_run\": 1, "),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"served\": true"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"whole_runs\": 1, "), std::string::npos);
  const Output whole = RunReplayer(
      absl::StrCat(kFewRuns, " --policies=slab/st/single --format=json traces/simple_map.trace"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(whole.out.find("\"sampling\": {\"windowed\": false}"), std::string::npos);
}

// A multi-threaded trace in windows: served, replayed per thread, the
// measured line saying how they are cut.
TEST(ReplayerTest, PerThreadWindowsAreStated) {
  const Output json =
      RunReplayer(absl::StrCat(kFewRuns,
                               " --windows=always --policies=slab/mt/single --format=json "
                               "traces/producer_consumer.trace"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"sampling\": {\"windowed\": true, \"strata\": 4, "
                          "\"windows_per_run\": 1, "),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"served\": true"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("Each window is cut at points of the trace's global order and "
                          "replayed on 5 threads, which live through the trace"),
            std::string::npos)
      << json.out;
  EXPECT_EQ(json.out.find("FAILED"), std::string::npos) << json.out;
}

TEST(ReplayerTest, CsvHasIntervalsAndCsvRunsOneRowPerRunAndPass) {
  const Output o = RunReplayer(
      absl::StrCat(kFewRuns, " --policies=malloc,slab/st/single --format=csv traces/bulk.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto rows = CsvRows(o.out);
  ASSERT_EQ(rows.size(), 2u) << o.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok");
    EXPECT_EQ(row.at("runs"), "3");
    EXPECT_LE(std::stod(row.at("ns_per_op_lo")), std::stod(row.at("ns_per_op")));
    EXPECT_GE(std::stod(row.at("ns_per_op_hi")), std::stod(row.at("ns_per_op")));
  }
  const Output runs = RunReplayer(absl::StrCat(
      kFewRuns, " --policies=malloc,slab/st/single --format=csv-runs traces/bulk.trace"));
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_EQ(CsvRows(runs.out).size(), 2u * 3u * 2u) << runs.out;
}

// No failure hidden: a child that really crashes (SIGSEGV raised in the
// child of slab's second run) makes slab FAILED, unranked, and the exit
// status 3.
TEST(ReplayerTest, InjectedCrashIsFailedNeverRankedAndExitStatusSaysSo) {
  const Output o = RunReplayer(
      absl::StrCat(kFewRuns,
                   " --policies=malloc,slab/st/single,pmr_monotonic traces/simple_map.trace"),
      "ALLOCTRACE_TEST_FAULT=slab/st/single:2:segv");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("a policy FAILED"), std::string::npos) << o.err;
  // ASan turns the signal into its own report and abort; the run still fails.
  const std::string expected =
      kAsan ? "FAILED slab/st/single: 1 of 3 runs failed; first: run 2: "
            : "FAILED slab/st/single: 1 of 3 runs failed; first: run 2: crashed "
              "with signal 11";
  EXPECT_NE(o.out.find(expected), std::string::npos) << o.out;
  for (absl::string_view line : absl::StrSplit(o.out, '\n')) {
    if (absl::StartsWith(line, "slab/st/single ")) ADD_FAILURE() << "slab ranked: " << line;
    if (absl::StartsWith(line, "  fastest:") || absl::StartsWith(line, "  recommended:")) {
      EXPECT_EQ(line.find("slab"), absl::string_view::npos) << line;
    }
  }
  const Output json = RunReplayer(
      absl::StrCat(kFewRuns,
                   " --policies=malloc,slab/st/single --format=json traces/simple_map.trace"),
      "ALLOCTRACE_TEST_FAULT=slab/st/single:1:exit");
  EXPECT_EQ(json.exit_code, 3);
  EXPECT_NE(json.out.find("\"status\": \"FAILED\", \"error\": \"1 of 3 runs failed; first: run 1: "
                          "exited with code 7\""),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"fastest\": [\"malloc\"]"), std::string::npos) << json.out;
}

// The same for a serving child (served windows): one that crashes as it
// starts fails its run; the next round starts another.
TEST(ReplayerTest, AServingChildsCrashIsFailedAndTheNextRoundStartsAnother) {
  const Output o = RunReplayer(absl::StrCat(kFewRuns,
                                            " --windows=always --policies=malloc,slab/st/single "
                                            "traces/simple_map.trace"),
                               "ALLOCTRACE_TEST_FAULT=slab/st/single:1:segv");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  const std::string expected =
      kAsan ? "FAILED slab/st/single: 1 of 3 runs failed; first: run 1: "
            : "FAILED slab/st/single: 1 of 3 runs failed; first: run 1: crashed "
              "with signal 11";
  EXPECT_NE(o.out.find(expected), std::string::npos) << o.out;
  const Output hang =
      RunReplayer(absl::StrCat(kFewRuns,
                               " --windows=always --run_timeout=2 --policies=malloc,slab/st/single "
                               "traces/simple_map.trace"),
                  "ALLOCTRACE_TEST_FAULT=slab/st/single:1:hang");
  EXPECT_EQ(hang.exit_code, 0) << hang.err;
  EXPECT_NE(hang.out.find("over limit slab/st/single: 1 of 1 runs stopped at a limit; first: run "
                          "1: killed\n    after the time limit of 2 s per run"),
            std::string::npos)
      << hang.out;
}

TEST(ReplayerTest, ChildPastItsTimeLimitIsKilledAndReported) {
  const Output o =
      RunReplayer(absl::StrCat(kFewRuns,
                               " --run_timeout=2 --format=csv --policies=malloc,slab/st/single "
                               "traces/single.trace"),
                  "ALLOCTRACE_TEST_FAULT=slab/st/single:1:hang");
  // A policy past the time limit is an outcome of the measurement: its row
  // says so, and the command succeeds with malloc's verdict.
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // A time-out stops the policy at once: each would cost the limit again.
  EXPECT_NE(o.out.find(",slab/st/single,ours,over limit,1 of 1 runs stopped at a limit; first: run "
                       "1: killed after the time limit of 2 s per run,"),
            std::string::npos)
      << o.out;
}

TEST(ReplayerTest, ChildPastItsMemoryLimitIsAnOutcomeWithTheReason) {
  if (kAsan) GTEST_SKIP() << "ASan's shadow memory leaves no room for a memory limit";
  // bump never frees: 50 passes over simple_map need about 60 MiB.
  const Output o = RunReplayer(
      "--min_runs=1 --max_runs=1 --passes=50 --warm_ms=100000 --memory_limit_mb=24 "
      "--policies=bump traces/simple_map.trace");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("over limit:   1 policy passed the time or memory limit of a run"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("over limit bump: 1 of 1 runs stopped at a limit; first: run 1: killed "
                       "when its"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("memory limit of 24 MiB"), std::string::npos) << o.out;
}

// The limit is on resident memory, not on address space: slab/st/stack maps
// a 1 MiB slab for each of 2000 arenas (2 GiB) and touches a page or two of
// each. Under the address-space limit used before it FAILED at the 60th
// arena; it is measured now, its peak RSS the cost it really has.
TEST(ReplayerTest, MappedButUntouchedMemoryIsNotOverTheLimit) {
  if (kAsan) GTEST_SKIP() << "ASan's shadow memory leaves no room for a memory limit";
  const std::string path = absl::StrCat(testing::TempDir(), "/many_arenas.trace");
  ASSERT_TRUE(testing_util::WriteManyArenasTrace(path, 2000, 64).ok());
  const Output o = RunReplayer(
      absl::StrCat(kOneRun, " --memory_limit_mb=64 --policies=malloc,slab/st/stack ", path));
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("FAILED"), std::string::npos) << o.out;
}

// RSS that is true: with every block touched whole, no allocator's peak
// RSS reads below the bytes the trace has live at its peak.
// Traces whose live set spans many pages: the kernel counts RSS in pages,
// and in per-CPU batches of up to 32 pages that a reading may not yet
// include, so a live set of a dozen pages (list_churn's 48 KiB) can read
// a page low whatever the allocator does. Without the race: its time
// limit (20x the fastest run, at least 5 s) stops a pool's 1.5 to 2.7 s
// runs of records_by_value (every block touched whole, 140,000 page
// faults a run) on a loaded machine, and a stopped run has no peak.
// Every policy on the two small traces; on records_by_value (every
// policy: about 2 minutes; 3 to 5 s each), one of each family (the
// mallocs only where they can load: not beside ASan), in two cases so that
// the test's shards share them out: glibc malloc, tcmalloc and mimalloc,
// the bump, the slab with and without a lock, the small-node pool, boost,
// pmr, an article pool that keeps its chunks.
struct PeakCase {
  const char* trace;
  const char* policies;
};

class NoPeakRssBelowLiveBytesTest : public testing::TestWithParam<PeakCase> {};

TEST_P(NoPeakRssBelowLiveBytesTest, WhenBlocksAreTouchedWhole) {
  const std::string t = GetParam().trace;
  const Output o =
      RunReplayer(absl::StrCat(kOneRun, " --race=false --touch=whole --format=csv --policies='",
                               GetParam().policies, "' traces/", t, ".trace"));
  const auto rows = CsvRows(o.out);
  ASSERT_GE(rows.size(), 4u) << o.out;
  for (const auto& row : rows) {
    if (NeverFreeingPastItsLimit(row)) continue;
    ASSERT_EQ(row.at("status"), "ok") << t << " " << row.at("policy");
    EXPECT_GE(std::stod(row.at("peak_rss_bytes")), std::stod(row.at("ideal_bytes")))
        << t << ": " << row.at("policy");
  }
  EXPECT_EQ(o.exit_code, 0) << t << "\n" << o.err;  // past a limit: an outcome
}

INSTANTIATE_TEST_SUITE_P(
    Traces, NoPeakRssBelowLiveBytesTest,
    testing::Values(PeakCase{"simple_map", kPolicies}, PeakCase{"make_shared", kPolicies},
                    PeakCase{"records_by_value",
                             kAsan ? kPolicies
                                   : "malloc,tcmalloc,mimalloc,bump,slab/st/single,slab/mt/stack"},
                    PeakCase{"records_by_value",
                             "small_node/st/single,boost_fast_pool,pmr_unsync_pool,"
                             "pool/ordered/exp/st/stack/keep"}),
    [](const auto& info) { return absl::StrCat(info.param.trace, "_", info.index); });

// Without the race, the screen adds one article policy per storage kind;
// with it (the default), every article policy the trace does not rule out
// races and keeps its row: on this one-thread trace, the 8 single-threaded
// ones of each kind (the 8 thread-safe ones are their twins plus a lock,
// counted in the trace's note).
TEST(ReplayerTest, DefaultSetHasNoBumpAndTheArticlePoliciesOfEachStorageKind) {
  if (kAsan) GTEST_SKIP() << "the default set preloads mallocs, which cannot load beside ASan";
  for (const bool race : {false, true}) {
    const Output o = RunReplayer(
        absl::StrCat("--race=", race ? "true" : "false",
                     " --min_runs=2 --max_runs=2 --passes=2 --warm_ms=0 --budget=0 --screen_runs=1 "
                     "--format=csv traces/single.trace"));
    ASSERT_EQ(o.exit_code, 0) << o.err;
    int simple = 0, boundary = 0, ordered = 0;
    for (const auto& row : CsvRows(o.out)) {
      const std::string& name = row.at("policy");
      EXPECT_NE(name, "bump");
      EXPECT_NE(name, "malloc (again)");
      simple += absl::StartsWith(name, "pool/simple/");
      boundary += absl::StartsWith(name, "pool/boundary/");
      ordered += absl::StartsWith(name, "pool/ordered/");
    }
    EXPECT_EQ(simple, race ? 8 : 1);
    EXPECT_EQ(boundary, race ? 8 : 1);
    EXPECT_EQ(ordered, race ? 8 : 1);
    const Output table = RunReplayer(
        absl::StrCat("--race=", race ? "true" : "false",
                     " --min_runs=2 --max_runs=2 --passes=2 --warm_ms=0 --budget=0 --screen_runs=1 "
                     "traces/single.trace"));
    EXPECT_NE(table.out.find("note: the default set leaves out 24 thread-safe ones (mt: "),
              std::string::npos)
        << table.out;
  }
}

// The race's total budget stops every policy where it is, but never before
// each has made a run: none is left unmeasured (and so reported FAILED).
TEST(ReplayerTest, TheTotalBudgetLeavesNoPolicyWithoutARun) {
  const Output o = RunReplayer(
      "--total_budget=0.001 --policies=malloc,slab/st/single,new,pool/simple/exp/st/stack/free "
      "--min_runs=3 --max_runs=3 --max_reruns=0 --passes=1 --format=csv traces/single.trace");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto rows = CsvRows(o.out);
  ASSERT_EQ(rows.size(), 4u) << o.out;
  // Every policy has its first-round run; the budget, stretched to the
  // race's kStretchRounds rounds at the first round's pace, ends the
  // rest before --min_runs is reached anywhere past it.
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok") << row.at("policy");
    EXPECT_GE(std::stoi(row.at("runs")), 1) << row.at("policy");
    EXPECT_LE(std::stoi(row.at("runs")), 6) << row.at("policy");
  }
}

// A producer/consumer trace: thread 1 allocates in the global heap, thread
// 2 frees. A pool without a lock would have its free lists changed by two
// threads at once in the program: it is skipped, with why, never run or
// recommended; the exit status is 0 (a skip is not a failure).
TEST(ReplayerTest, PolicyThatIsNotThreadSafeIsSkippedOnASharedArena) {
  const std::string path = absl::StrCat(testing::TempDir(), "/two_threads.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    for (uint64_t i = 0; i < 2000; ++i) (*w)->Alloc(1, 0, 0x10000 + 64 * i, Shape{48, 1, 8});
    for (uint64_t i = 0; i < 2000; ++i) (*w)->Free(2, 0, 0x10000 + 64 * i);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const Output o =
      RunReplayer(absl::StrCat(kOneRun, " --policies=slab/st/stack,slab/mt/stack ", path));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(
      o.out.find("skipped slab/st/stack: not thread-safe: arena 0 is used by threads 1 and 2"),
      std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("note: arena 0 is used by threads 1 and 2: policies that are not "
                       "thread-safe are"),
            std::string::npos)
      << o.out;
  for (absl::string_view line : absl::StrSplit(o.out, '\n')) {
    if (absl::StartsWith(line, "  recommended:")) {
      EXPECT_EQ(line.find("slab/st/"), absl::string_view::npos) << line;
    }
  }
  const Output json =
      RunReplayer(absl::StrCat(kOneRun, " --policies=slab/st/stack --format=json ", path));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"status\": \"skipped\", \"error\": \"not thread-safe: arena 0 is "
                          "used by threads 1 and 2\""),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"arena_sharing\": \"arena 0 is used by threads 1 and 2\""),
            std::string::npos)
      << json.out;
}

TEST(ReplayerTest, TraceWithNoMemoryOpsSaysSoAndRanksNothing) {
  const std::string path = absl::StrCat(testing::TempDir(), "/arenas_only.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    (*w)->ArenaCreate(0, 1);
    (*w)->ArenaDestroy(0, 1);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const Output o = RunReplayer(absl::StrCat(kOneRun, " --policies=malloc,slab/st/single ", path));
  // Nothing to recommend: the status says so (3), as for no verdict.
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("none could be recommended"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("no memory operations in this trace"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("VERDICT"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("recommended"), std::string::npos) << o.out;
}

// A recording cut short after some chunks: those are replayed, and the
// verdict says it rests on them alone, in every format.
TEST(ReplayerTest, ATraceCutShortIsReplayedAsFarAsItGoesAndTheVerdictSaysSo) {
  const std::string path = absl::StrCat(testing::TempDir(), "/cut_short.trace");
  {
    std::ifstream in("traces/records_by_value.trace", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 5000u);
    std::ofstream(path, std::ios::binary) << bytes.substr(0, 5000);
  }
  const std::string flags = absl::StrCat(kOneRun, " --policies=malloc,slab/st/single ");
  const Output table = RunReplayer(flags + path);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.err.find("replaying the 3310 complete events"), std::string::npos) << table.err;
  EXPECT_NE(table.out.find("  INCOMPLETE:   the trace ends early (file ends inside the packet at "
                           "byte 4699"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("rests on its 3035\n                memory ops recorded before the cut"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("the trace ends before its footer"), std::string::npos) << table.out;
  const Output json = RunReplayer(flags + "--format=json " + path);
  EXPECT_NE(json.out.find("\"incomplete\": \"the trace ends early"), std::string::npos) << json.out;
  const Output md = RunReplayer(flags + "--format=markdown " + path);
  EXPECT_NE(md.out.find("**Incomplete:** the trace ends early"), std::string::npos) << md.out;
  // A complete trace has none of it.
  const Output whole = RunReplayer(flags + "--format=json traces/records_by_value.trace");
  EXPECT_NE(whole.out.find("\"incomplete\": null"), std::string::npos) << whole.out;
}

// A whole-program capture has one arena: a per-container pool policy gets
// one pool in the replay, and every report says so; a workload trace whose
// containers are arenas of their own does not get the note.
TEST(ReplayerTest, TraceOfOneHeapSaysItCannotTellContainersApart) {
  const std::string flags =
      absl::StrCat(kOneRun, " --policies=malloc,pool/simple/exp/st/stack/free ");
  const Output table = RunReplayer(flags + "traces/capture_sort.trace");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("note: one arena: the trace cannot tell containers apart"),
            std::string::npos)
      << table.out;
  const Output json = RunReplayer(flags + "--format=json traces/capture_sort.trace");
  EXPECT_NE(json.out.find("\"one_heap_note\": \"one arena:"), std::string::npos) << json.out;
  const Output workload =
      RunReplayer(absl::StrCat(kOneRun, " --policies=malloc traces/simple_map.trace"));
  ASSERT_EQ(workload.exit_code, 0) << workload.err;
  EXPECT_EQ(workload.out.find("one arena"), std::string::npos) << workload.out;
}

TEST(ReplayerTest, OutWritesTheFileWhole) {
  const std::string path = testing::TempDir() + "/report.md";
  const Output o = RunReplayer(absl::StrCat(
      kOneRun, " --policies=malloc --format=markdown --out=", path, " traces/single.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("| malloc "), std::string::npos) << ss.str();
  EXPECT_NE(ss.str().find("**Verdict**"), std::string::npos) << ss.str();
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
    // Cut inside its one chunk: no complete chunk, nothing to replay.
    std::ofstream(dir + "/cut_in_first_chunk.trace", std::ios::binary) << bytes.substr(0, 1000);
    // Four bytes changed after the magic: a header that does not parse.
    std::string damaged = bytes;
    damaged.replace(20, 4, "\xff\xff\xff\xff");
    std::ofstream(dir + "/damaged_header.trace", std::ios::binary) << damaged;
    std::ofstream(dir + "/self.trace", std::ios::binary) << bytes;
    bytes[bytes.size() / 2] ^= 0x40;
    std::ofstream(dir + "/flipped.trace", std::ios::binary) << bytes;
  }
  {
    // A trace this build writes (its chunks carry checksums), one byte of
    // its one chunk changed.
    const std::string path = dir + "/checksummed.trace";
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    for (uint64_t i = 0; i < 2000; ++i) (*w)->Alloc(1, 0, 0x10000 + 64 * i, Shape{48, 1, 8});
    for (uint64_t i = 0; i < 2000; ++i) (*w)->Free(1, 0, 0x10000 + 64 * i);
    ASSERT_TRUE((*w)->Finish().ok());
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes[bytes.size() / 2] ^= 0x20;
    std::ofstream(dir + "/changed_byte.trace", std::ios::binary) << bytes;
  }
  const Case cases[] = {
      {"traces/no_such.trace", 1, "traces/no_such.trace: cannot open trace"},
      {dir + "/garbage.trace", 1, "not an alloctrace trace"},
      {dir + "/damaged_header.trace", 1,
       "damaged_header.trace: damaged header: the packet at byte 0 (134 bytes) names the trace "
       "magic but does not parse"},
      {dir + "/cut_in_first_chunk.trace", 1,
       "cut_in_first_chunk.trace: truncated: file ends inside the packet at byte 137 (859 of "},
      {dir + "/changed_byte.trace", 1,
       "(chunk 0): checksum mismatch: the chunk's bytes changed after they were written (stored "
       "0x"},
      {"--policies=nosuch traces/single.trace", 2, "nosuch"},
      // Usage errors exit 2 (not Abseil's 1) and suggest the nearest name.
      {"--polices=slab traces/single.trace", 2,
       "replayer: unknown flag --polices; did you mean --policies?"},
      {"--min-rus=1 traces/single.trace", 2,
       "replayer: unknown flag --min-rus; did you mean --min-runs?"},
      {"--budget=abc traces/single.trace", 2, "replayer: --budget=abc: 'abc' is not a number"},
      {"--min_runs=1.5 traces/single.trace", 2, "--min_runs=1.5: '1.5' is not an integer"},
      {"--policies=slabb traces/single.trace", 2,
       "replayer: unknown policy 'slabb'; did you mean slab/*?"},
      {"--policies=tcmaloc traces/single.trace", 2,
       "replayer: unknown policy 'tcmaloc'; did you mean tcmalloc?"},
      {"--min_runs=0 traces/single.trace", 2, "--min_runs=0"},
      {"--precision=0 traces/single.trace", 2, "--precision=0"},
      {"--passes=0 traces/single.trace", 2, "--passes=0"},
      {"--clock=tsc traces/single.trace", 2, "--clock=tsc"},
      {"--rank_by=best traces/single.trace", 2, "--rank_by=best"},
      {"--touch=some traces/single.trace", 2, "--touch=some"},
      {"--format=xml traces/single.trace", 2, "--format=xml"},
      {"--confirm=-2 traces/single.trace", 2, "replayer: --confirm=-2: must be 0 to 100"},
      {"--run_timeout=-1 traces/single.trace", 2,
       "replayer: --run_timeout=-1: must be 0 to 86400 seconds (0: from the trace)"},
      {"--memory_limit_mb=-5 traces/single.trace", 2,
       "replayer: --memory_limit_mb=-5: must be >= 0 (0: from the trace), or -1 (no limit)"},
      {"", 2, "no trace file given"},
      {"--run_timeout=1e300 traces/single.trace", 2,
       "replayer: --run_timeout=1e+300: must be 0 to 86400 seconds"},
      {"--in_situ_budget=1e300 traces/single.trace -- /bin/true", 2,
       "replayer: --in_situ_budget must be above 0, at most 86400 seconds"},
      // Where the report cannot go is said before anything is measured.
      {"--out=/nonexistent/dir/x.csv --policies=malloc --min_runs=1 --max_runs=1 "
       "traces/single.trace",
       1,
       "replayer: cannot write /nonexistent/dir/x.csv: its directory /nonexistent/dir: No such "
       "file or directory; nothing measured"},
      {"--out=" + dir + " traces/single.trace", 1, dir + " is a directory, not a file to write"},
      {"--out=" + dir + "/self.trace " + dir + "/self.trace", 2,
       "self.trace is being read: writing there would destroy it; nothing measured"},
      {"--format=json,csv --out=" + dir + "/a.out," + dir + "/a.out traces/single.trace", 2,
       "/a.out twice: each --format needs a file of its own"},
      {"--list-policies --out=/nonexistent/dir/p.md", 1, "cannot write /nonexistent/dir/p.md"},
      {"--format=csv-classes traces/single.trace", 2,
       "replayer: --format=csv-classes is the per-class table: it needs --per_container"},
      {"--shipped_build=true traces/capture_sort.trace -- /bin/true", 1,
       "capture_sort.trace: --shipped_build pastes an alias line per class of containers, and the "
       "trace names none"},
  };
  ::unlink((dir + "/fifo.trace").c_str());
  ASSERT_EQ(::mkfifo((dir + "/fifo.trace").c_str(), 0644), 0);
  for (const Case& c : cases) {
    const Output o = RunReplayer(c.args);
    EXPECT_EQ(o.exit_code, c.code) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << c.args << "\ngot: " << o.err;
    EXPECT_TRUE(o.out.empty()) << c.args;
    // One line: the replayer's, no library's before it.
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c.args << "\ngot: " << o.err;
  }
  // A FIFO as the trace: refused at once, not waited on (124: it waited).
  const Output fifo = RunShell("timeout 20 replayer/replayer --quiet " + dir + "/fifo.trace");
  EXPECT_EQ(fifo.exit_code, 1) << fifo.err;
  EXPECT_NE(fifo.err.find("fifo.trace: not a regular file (a FIFO)"), std::string::npos)
      << fifo.err;
  // A flipped byte: an error naming the byte offset, or (if the flip lands
  // somewhere harmless) a clean run; never a crash.
  const Output o = RunReplayer(absl::StrCat(kOneRun, " --policies=malloc ", dir, "/flipped.trace"));
  EXPECT_TRUE(o.exit_code == 0 || (o.exit_code == 1 && o.err.find("byte ") != std::string::npos))
      << o.exit_code << " " << o.err;
}

// boost::pool_allocator frees in address order (ordered_free walks the free
// list): a trace that frees 120,000 blocks in shuffled order makes it about
// 700x slower than malloc (measured: 21 s for one run, malloc's 0.05 s).
// With the race, its run is stopped at the race's time limit (20x the
// fastest run, at least 5 s): eliminated, not FAILED, exit status 0, malloc
// recommended, in about 6 s.
TEST(ReplayerTest, APathologicallySlowPolicyIsStoppedByTheRace) {
  const std::string path = absl::StrCat(testing::TempDir(), "/shuffled_frees.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    constexpr uint64_t kBlocks = 120000;
    std::vector<uint64_t> order(kBlocks);
    for (uint64_t i = 0; i < kBlocks; ++i) order[i] = i;
    uint64_t x = 88172645463325252ull;  // xorshift: a fixed shuffle
    for (uint64_t i = kBlocks - 1; i > 0; --i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::swap(order[i], order[x % (i + 1)]);
    }
    for (uint64_t i = 0; i < kBlocks; ++i) (*w)->Alloc(1, 0, 0x10000 + 64 * i, Shape{48, 1, 8});
    for (uint64_t i : order) (*w)->Free(1, 0, 0x10000 + 64 * i);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Output o = RunReplayer(
      absl::StrCat("--min_runs=3 --budget=0.5 --policies=malloc,boost_pool --format=json ", path));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(o.exit_code, 0) << o.err << o.out;
  EXPECT_NE(o.out.find("\"recommended\": \"malloc\""), std::string::npos) << o.out;
  const size_t row = o.out.find("{\"policy\": \"boost_pool\"");
  ASSERT_NE(row, std::string::npos) << o.out;
  const std::string boost = o.out.substr(row, o.out.find("\"runs\": [", row) - row);
  EXPECT_NE(boost.find("\"status\": \"eliminated\", \"error\": \"eliminated in round 1: its "
                       "run passed "),
            std::string::npos)
      << boost;
  EXPECT_NE(boost.find("\"runs_ok\": 0, \"attempts\": 1, \"runs_failed\": 0"), std::string::npos)
      << boost;
  EXPECT_NE(boost.find("\"eliminated\": true"), std::string::npos) << boost;
  std::printf("malloc,boost_pool with the race: %.1f s\n", seconds);
}

}  // namespace
}  // namespace alloctrace
