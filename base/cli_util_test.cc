#include "alloctrace/base/cli_util.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

// Flags of this test binary, for CheckCommandLineFlags.
ABSL_FLAG(std::string, policies, "default", "test: a string flag");
ABSL_FLAG(double, budget, 3, "test: a double flag");
ABSL_FLAG(int, min_runs, 10, "test: an int flag");
ABSL_FLAG(uint64_t, seed, 1, "test: an unsigned flag");
ABSL_FLAG(bool, quiet, false, "test: a boolean flag");
ABSL_FLAG(std::string, internal_run_policy, "", "test: never suggested");

namespace alloctrace {
namespace {

// Runs CheckCommandLineFlags on `args` (argv[0] added).
std::string Check(std::vector<std::string> args) {
  args.insert(args.begin(), "test");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return CheckCommandLineFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(CheckCommandLineFlagsTest, AcceptsWellFormedFlagsInEverySpelling) {
  EXPECT_EQ(Check({}), "");
  EXPECT_EQ(
      Check({"--policies=slab", "--budget=1.5", "--min_runs=3", "--seed=7", "--quiet", "trace"}),
      "");
  EXPECT_EQ(Check({"--min-runs=3", "-budget=2", "--noquiet"}), "");
  EXPECT_EQ(Check({"--budget", "4", "--quiet=false"}), "");
  EXPECT_EQ(Check({"trace", "-", "--", "--not-a-flag=x"}), "");  // "--" ends the flags
  EXPECT_EQ(Check({"--help"}), "");                              // Abseil's own
  EXPECT_EQ(Check({"--undefok=nosuch", "--nosuch=1"}), "");
}

TEST(CheckCommandLineFlagsTest, UnknownFlagGetsTheNearestNameInTheSpellingTyped) {
  EXPECT_EQ(Check({"--polices=slab"}), "unknown flag --polices; did you mean --policies?");
  EXPECT_EQ(Check({"--min-rus=3"}), "unknown flag --min-rus; did you mean --min-runs?");
  EXPECT_EQ(Check({"-quite"}), "unknown flag -quite; did you mean -quiet?");
  EXPECT_EQ(Check({"--frobnicate"}), "unknown flag --frobnicate; see --help");
  // Internal flags are known but never suggested.
  EXPECT_EQ(Check({"--internal_run_policy=x"}), "");
  EXPECT_EQ(Check({"--run_policy=x"}), "unknown flag --run_policy; see --help");
}

TEST(CheckCommandLineFlagsTest, MalformedValueSaysWhatIsExpected) {
  EXPECT_EQ(Check({"--budget=abc"}), "--budget=abc: 'abc' is not a number");
  EXPECT_EQ(Check({"--min_runs=1.5"}), "--min_runs=1.5: '1.5' is not an integer");
  EXPECT_EQ(Check({"--seed=-1"}), "--seed=-1: '-1' is not a non-negative integer");
  EXPECT_EQ(Check({"--quiet=maybe"}), "--quiet=maybe: 'maybe' is not true or false");
  EXPECT_EQ(Check({"--budget", "abc"}), "--budget abc: 'abc' is not a number");
  EXPECT_EQ(Check({"--budget"}), "--budget needs a value (--budget=...)");
  EXPECT_EQ(Check({"--noquiet=1"}), "--noquiet takes no value");
}

// Abseil would keep the last of a flag given twice and drop the first
// without a word; here it is a usage error, in any spelling.
TEST(CheckCommandLineFlagsTest, AFlagGivenTwiceIsAnError) {
  EXPECT_EQ(Check({"--policies=a", "trace", "--policies=b"}),
            "--policies=a and --policies=b: the same flag twice; give it once");
  EXPECT_EQ(Check({"--min_runs=3", "--min-runs=4"}),
            "--min_runs=3 and --min-runs=4: the same flag twice; give it once");
  EXPECT_EQ(Check({"-budget=2", "--budget", "4"}),
            "-budget=2 and --budget: the same flag twice; give it once");
  EXPECT_EQ(Check({"--quiet", "--noquiet"}),
            "--quiet and --noquiet: the same flag twice; give it once");
  EXPECT_EQ(Check({"--quiet", "--", "--quiet"}), "");  // the program's, not ours
}

// Flags read from a --flagfile or taken from the environment by --fromenv
// are checked as if typed, the message saying where each came from.
TEST(CheckCommandLineFlagsTest, FlagsFromAFileOrTheEnvironmentAreCheckedToo) {
  const std::string file = testing::TempDir() + "/flags.txt";
  {
    std::ofstream out(file);
    out << "# defaults\n\n  --policies=a  \n--min_runs=3\n";
  }
  EXPECT_EQ(Check({"--flagfile=" + file, "--budget=2"}), "");
  EXPECT_EQ(Check({"--flagfile=" + file, "--policies=b"}),
            "--policies=a (in " + file + ") and --policies=b: the same flag twice; give it once");
  {
    std::ofstream out(file);
    out << "--min_runs=x\n";
  }
  EXPECT_EQ(Check({"--flagfile=" + file}), "--min_runs=x (in " + file + "): 'x' is not an integer");
  ASSERT_EQ(::setenv("FLAGS_budget", "5", 1), 0);
  EXPECT_EQ(Check({"--fromenv=budget"}), "");
  EXPECT_EQ(Check({"--fromenv=budget", "--budget=2"}),
            "--budget=5 (from the environment) and --budget=2: the same flag twice; give it "
            "once");
  EXPECT_EQ(Check({"--tryfromenv=budget,seed", "--seed=2"}), "");  // FLAGS_seed unset
  ASSERT_EQ(::unsetenv("FLAGS_budget"), 0);
}

// argv of literal words, as main gets it.
struct Argv {
  explicit Argv(std::vector<std::string> w) : words(std::move(w)) {
    for (std::string& word : words) pointers.push_back(word.data());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  std::vector<std::string> words;
  std::vector<char*> pointers;
};

TEST(TakeProgramArgsTest, WhatFollowsTheDashesIsTheProgram) {
  Argv a({"replayer", "--quiet", "t.trace", "--", "ls", "-l", "--", "x"});
  int argc = a.argc();
  EXPECT_EQ(TakeProgramArgs(argc, a.pointers.data()),
            (std::vector<std::string>{"ls", "-l", "--", "x"}));
  EXPECT_EQ(argc, 3);
  Argv none({"replayer", "t.trace"});
  argc = none.argc();
  EXPECT_TRUE(TakeProgramArgs(argc, none.pointers.data()).empty());
  EXPECT_EQ(argc, 2);
}

TEST(TakeProgramArgsTest, FromTheFirstPositionalWhenAsked) {
  Argv a({"capture", "--out=x.trace", "ls", "-l"});
  int argc = a.argc();
  EXPECT_EQ(TakeProgramArgs(argc, a.pointers.data(), /*from_first_positional=*/true),
            (std::vector<std::string>{"ls", "-l"}));
  EXPECT_EQ(argc, 2);
  Argv dashes({"capture", "--out=x.trace", "--", "ls"});
  argc = dashes.argc();
  EXPECT_EQ(TakeProgramArgs(argc, dashes.pointers.data(), true), (std::vector<std::string>{"ls"}));
}

}  // namespace
}  // namespace alloctrace
