// ProcessCost (isolated_run.h) on real processes: what it returns for a
// probe that cannot start or ends badly, and where its probes run. What a library costs is a
// timing, measured by the replayer's runs and reported, never asserted here.
#include "alloctrace/replayer/measure/isolated_run.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(ProcessCostTest, AProbeThatCannotStartIsNotFound) {
  absl::StatusOr<double> cost = ProcessCost({"/nonexistent/probe"}, "", 1);
  ASSERT_FALSE(cost.ok());
  EXPECT_TRUE(absl::IsNotFound(cost.status())) << cost.status();
}

TEST(ProcessCostTest, AProbeThatFailsSaysHowItEnded) {
  absl::StatusOr<double> cost = ProcessCost({"/bin/false"}, "", 1);
  ASSERT_FALSE(cost.ok());
  EXPECT_TRUE(absl::IsAborted(cost.status())) << cost.status();
  EXPECT_TRUE(absl::StrContains(cost.status().message(), "/bin/false started alone"))
      << cost.status();
  EXPECT_TRUE(absl::StrContains(cost.status().message(), "exited with code 1")) << cost.status();
}

// With no preload, both probes of a round are the same process: the cost is
// the difference of two runs of one program, a small number (a second of
// CPU time would mean the pairs were not compared), and never below 0, so
// that it cannot take a short trace's figures below 0.
TEST(ProcessCostTest, NoLibraryCostsAboutNothing) {
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<double> cost = ProcessCost({"/bin/true"}, "", 3);
    ASSERT_TRUE(cost.ok()) << cost.status();
    EXPECT_LT(*cost, 1.0);
    EXPECT_GE(*cost, 0.0);
  }
}

// Pinned, every probe runs on the CPU asked for: unpinned, successive
// children alternate between CPUs, and the two of a pair would always run
// on different ones.
TEST(ProcessCostTest, PinnedProbesRunOnTheCpuAskedFor) {
  const int cpu = ReplayCpu();
  ASSERT_GE(cpu, 0);
  const std::string log = testing::TempDir() + "/probe_cpus.txt";
  std::remove(log.c_str());
  // The shell's own /proc/PID/stat: field 39 is the CPU it last ran on.
  const std::vector<std::string> probe = {
      "/bin/sh", "-c", "set -- $(cat /proc/$$/stat); eval echo \\${39} >> " + log};
  absl::StatusOr<double> cost = ProcessCost(probe, "", 4, cpu);
  ASSERT_TRUE(cost.ok()) << cost.status();
  std::ifstream in(log);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) EXPECT_EQ(line, std::to_string(cpu));
  EXPECT_EQ(lines, 8);
}

}  // namespace
}  // namespace alloctrace
