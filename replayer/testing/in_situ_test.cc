// End to end: replayer --confirm and --in_situ on real programs, and the
// bad inputs: an unknown ALLOCTRACE_POLICY, a program that does not exist,
// one that exits 1 on every run, one that hangs. No timing is asserted.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/testing/run_command_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

using testing_util::Output;
using testing_util::RunShell;
using testing_util::Slurp;

constexpr char kReplayer[] = "replayer/replayer --quiet";
constexpr char kDemo[] = "replayer/testing/lru_cache_demo";
constexpr char kTestProg[] = "replayer/testing/in_situ_testprog";
// Few short runs: the tests check behaviour, not figures.
constexpr char kFew[] = "--min_runs=2 --max_runs=2 --max_reruns=0 --passes=1 --budget=0";

std::string Log(const std::string& name) { return testing::TempDir() + "/" + name + ".log"; }

TEST(InSituTest, UnknownPolicyStopsTheInstrumentedProgram) {
  const Output o = RunShell(absl::StrCat("env ALLOCTRACE_POLICY=slab/nope ", kDemo, " 1000"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err,
            "alloctrace: unknown policy 'slab/nope' in ALLOCTRACE_POLICY; see replayer "
            "--list-policies\n");
  EXPECT_EQ(o.out, "");
}

TEST(InSituTest, MissingProgramIsBadInput) {
  Output o = RunShell(absl::StrCat(kReplayer, " --in_situ -- /no/such/program"));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, "replayer: cannot run /no/such/program: no such file\n");
  o = RunShell(
      absl::StrCat(kReplayer, " --confirm=3 traces/simple_map.trace -- no-such-program-x"));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, "replayer: cannot run no-such-program-x: not found on PATH\n");
}

// Each says what is wrong, then the two forms.
TEST(InSituTest, UsageErrors) {
  const struct {
    std::string args, what;
  } cases[] = {
      {" --confirm=3 traces/simple_map.trace",
       "--confirm needs the program to run: -- PROGRAM [ARGS...]; usage: replayer "
       "[--confirm=N] TRACE -- PROGRAM"},
      {absl::StrCat(" --in_situ traces/simple_map.trace -- ", kDemo),
       "--in_situ takes no trace (got 1); usage:"},
      {" --in_situ", "--in_situ needs the program to run"},
      {" --in_situ --", "--in_situ needs the program to run"},
      {" traces/simple_map.trace --", "-- is followed by no program; usage:"},
      {absl::StrCat(" --confirm=2 --in_situ -- ", kDemo), "--confirm goes with a trace"},
      {absl::StrCat(" traces/simple_map.trace traces/single.trace -- ", kDemo),
       "the search in the program takes one trace (got 2)"},
  };
  for (const auto& c : cases) {
    const Output o = RunShell(absl::StrCat(kReplayer, c.args));
    EXPECT_EQ(o.exit_code, 2) << c.args << ": " << o.err;
    EXPECT_THAT(o.err, HasSubstr("replayer: " + c.what)) << c.args;
    EXPECT_EQ(o.out, "") << c.args;
  }
}

TEST(InSituTest, ProgramThatExits1IsAFailedRowWithItsStderr) {
  const Output o =
      RunShell(absl::StrCat(kReplayer, " --in_situ --policies=slab/st/single ", kFew,
                            " --in_situ_log=", Log("exit1"), " -- ", kTestProg, " exit1"));
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_THAT(o.out, HasSubstr("FAILED run 1: exited with code 1"));
  EXPECT_THAT(o.out, HasSubstr("stderr: in_situ_testprog: cannot open input.cfg"));
  EXPECT_THAT(o.out, HasSubstr("not run: the reference"));
  EXPECT_THAT(o.err, HasSubstr("a policy FAILED in situ"));
  EXPECT_THAT(Slurp(Log("exit1")), HasSubstr("cannot open input.cfg"));
}

TEST(InSituTest, ProgramThatHangsIsKilledAtTheTimeLimit) {
  const Output o =
      RunShell(absl::StrCat(kReplayer, " --in_situ --policies=slab/st/single --run_timeout=1 ",
                            kFew, " --in_situ_log=", Log("hang"), " -- ", kTestProg, " hang"));
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_THAT(o.out, HasSubstr("FAILED run 1: killed after the time limit of 1 s per run"));
}

TEST(InSituTest, UninstrumentedProgramSkipsPoolPolicies) {
  const Output o =
      RunShell(absl::StrCat(kReplayer, " --in_situ --policies=slab/st/single ", kFew,
                            " --in_situ_log=", Log("plain"), " -- ", kTestProg, " ok"));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("reference malloc (not instrumented"));
  EXPECT_THAT(o.out, HasSubstr("skipped the program is not instrumented"));
  EXPECT_EQ(o.err, "");  // the program's output went to the log
  EXPECT_THAT(Slurp(Log("plain")), HasSubstr("ok\n"));
}

// --in_situ_runs=N counts every run of the program, the warm-up's and the
// noise floor's too, and the runs never pass it (7 made 8, and the report
// said 9). Below a round's runs, those whose turn did not come are skipped
// rows that say why.
TEST(InSituTest, InSituRunsIsEveryRunOfTheProgramAndNeverOneMore) {
  for (const int n : {7, 3}) {
    const std::string log = Log(absl::StrCat("runs", n));
    const Output o = RunShell(
        absl::StrCat(kReplayer, " --in_situ --policies=slab/st/single,slab/st/stack --min_runs=50 ",
                     "--max_runs=50 --format=json --in_situ_runs=", n, " --in_situ_log=", log,
                     " -- ", kDemo, " 2000 50"));
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat("\"runs\": ", n, ", \"noise_floor\"")));
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat("\"max_total_runs\": ", n, ",")));
    const std::string program_output = Slurp(log);
    int runs = 0;
    for (size_t at = program_output.find("): stdout\n"); at != std::string::npos;
         at = program_output.find("): stdout\n", at + 1)) {
      ++runs;
    }
    EXPECT_EQ(runs, n) << program_output;
    if (n == 3) {
      EXPECT_THAT(o.out, HasSubstr("\"status\": \"skipped\", \"eliminated\": true, \"stop\": "
                                   "\"not run: the first round made the total budget of 3 runs "
                                   "before its turn\""));
    }
  }
}

// In situ's budget is --in_situ_budget, and its stop reasons say so (they
// named --total_budget, which only the replay reads).
TEST(InSituTest, TheStopReasonsNameInSitusBudgetFlag) {
  const Output o = RunShell(
      absl::StrCat(kReplayer, " --in_situ --policies=slab/st/single,slab/st/stack --min_runs=50 ",
                   "--max_runs=50 --format=json --in_situ_budget=1 --in_situ_log=", Log("budget"),
                   " -- ", kDemo, " 2000 50"));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("\"stop\": \"total budget of 1 s spent (--in_situ_budget)\""));
  EXPECT_THAT(o.out, Not(HasSubstr("--total_budget")));
}

// The reference recommended (the only policy run): the verdict's Adopt
// line says what to adopt (it was blank).
TEST(InSituTest, ConfirmedReferenceHasAnAdoptLine) {
  const Output o = RunShell(absl::StrCat(kReplayer, " --confirm=1 --policies=malloc ", kFew,
                                         " --in_situ_log=", Log("ref"),
                                         " traces/simple_map.trace -- ", kTestProg, " ok"));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("Adopt:        nothing to change: glibc malloc serves"));
}

TEST(InSituTest, ConfirmRunsTheReplaysPicksAndReportsWhetherTheyHeld) {
  const std::string dir = testing::TempDir();
  const std::string trace = dir + "/lru.trace";
  ASSERT_EQ(
      RunShell(absl::StrCat("env ALLOCTRACE_OUT=", trace, " ", kDemo, " 20000 500")).exit_code, 0);
  const std::string outs =
      absl::StrCat(dir, "/r.json,", dir, "/r.md,", dir, "/r.csv,", dir, "/r.html,", dir, "/r.txt");
  const Output o = RunShell(absl::StrCat(
      kReplayer, " --confirm=2 --policies=malloc,slab/st/single,pool/boundary/exp/st/stack/free ",
      kFew, " --format=json,markdown,csv,html,table --out=", outs,
      " --in_situ_log=", Log("confirm"), " ", trace, " -- ", kDemo, " 20000 500"));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::string json = Slurp(dir + "/r.json");
  EXPECT_THAT(json, HasSubstr("\"in_situ_fastest\": ["));
  EXPECT_THAT(json, HasSubstr("\"replay_pick_held\": "));
  EXPECT_THAT(json, HasSubstr("\"instrumented\": true"));
  EXPECT_THAT(json, HasSubstr("\"in_situ\": {\"wall_s\": {\"median\": "));
  EXPECT_THAT(json, HasSubstr("\"status\": \"ok\""));
  EXPECT_THAT(Slurp(dir + "/r.md"), HasSubstr("| policy | replay rank | replay ns/op | in-situ"));
  EXPECT_THAT(Slurp(dir + "/r.csv"), HasSubstr("policy,replay_rank,replay_ns_per_op,"));
  EXPECT_THAT(Slurp(dir + "/r.html"), HasSubstr("<section class=\"in-situ\">"));
  const std::string table = Slurp(dir + "/r.txt");
  EXPECT_THAT(table, HasSubstr("IN SITU: "));
  EXPECT_THAT(table, HasSubstr("reference std (instrumented: ALLOCTRACE_POLICY)"));
  // The reference's row has the replay's rank of its counterpart there (malloc).
  EXPECT_THAT(table, ContainsRegex("\nstd +[1-9]"));
  // The pool policies ran through the switch: the replay's pick is in situ.
  EXPECT_THAT(table, HasSubstr("slab/st/single"));
  EXPECT_THAT(Slurp(Log("confirm")), HasSubstr("hits of 20000"));
}

}  // namespace
}  // namespace alloctrace
