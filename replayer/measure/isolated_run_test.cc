// ProcessCost (isolated_run.h) on real processes: what it returns for a
// probe that cannot start or ends badly. What a library costs is a timing,
// measured by the replayer's runs and reported, never asserted here.
#include "alloctrace/replayer/measure/isolated_run.h"

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

}  // namespace
}  // namespace alloctrace
