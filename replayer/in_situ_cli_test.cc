// --confirm with a verdict per container whose mix is not the single
// choice: the mix runs in the program itself (ALLOCTRACE_POLICY set to its
// assignment) in the same rounds as the best single choice and std, and
// the verdict says how it did against each, paired. The replay's verdict
// is given here (no replay runs); the program, its runs and the switch are
// the real ones: examples/programs/pipeline, whose two per-thread roles may
// take single-threaded pools and whose hand-off queue may not.
#include "alloctrace/replayer/in_situ_cli.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/alloctrace/", path);
}

// A replay whose single verdict is slab/mt/stack and whose per-container
// verdict is the mix `assignment`.
TraceReport ReplayWithMix(const std::string& assignment) {
  TraceReport replay;
  PolicyResult single;
  single.name = "slab/mt/stack";
  replay.policies.push_back(single);
  replay.verdict.recommended = "slab/mt/stack";
  auto v = std::make_shared<PerContainerVerdict>();
  v->best_single = "slab/mt/stack";
  v->heap = "malloc";
  v->assignment = assignment;
  replay.per_container = v;
  return replay;
}

InSituSettings Quick(const std::string& name) {
  InSituSettings s;
  s.min_runs = 3;
  s.max_runs = 3;
  s.launcher = Runfile("replayer/in_situ_launcher");
  s.log_path = absl::StrCat(testing::TempDir(), "/", name, ".log");
  return s;
}

TEST(ConfirmMixTest, TheMixRunsInTheProgramPairedWithTheSingleChoiceAndStd) {
  TraceReport replay = ReplayWithMix(
      "ParseIndex=slab/st/single;Totals=small_node/st/single;Handoff=slab/mt/stack;*=std");
  const absl::Status s =
      Confirm(replay, 1, {Runfile("examples/programs/pipeline"), "2000", "256"}, Quick("mix"));
  ASSERT_TRUE(s.ok()) << s;
  const PerContainerVerdict& v = *replay.per_container;
  EXPECT_TRUE(v.confirmed);
  EXPECT_EQ(v.in_situ_failure, "");
  EXPECT_GE(v.in_situ_vs_single.n, 3);
  EXPECT_GE(v.in_situ_vs_std.n, 3);
  EXPECT_GT(v.in_situ_vs_single.median, 0);
  // The mix is not one of the single verdict's candidates: the in-situ
  // decision is made without it, and it is listed after.
  ASSERT_NE(replay.in_situ, nullptr);
  EXPECT_NE(replay.verdict.recommended, kMixCandidate);
  ASSERT_NE(FindInSitu(*replay.in_situ, kMixCandidate), nullptr);
}

// An assignment the program refuses (a class it never used): the mix's
// runs fail with the switch's message, and the rest of the confirmation
// stands.
TEST(ConfirmMixTest, AMixTheProgramRefusesIsAFailureThatSaysWhy) {
  TraceReport replay = ReplayWithMix("Parser=slab/st/single;*=std");
  const absl::Status s =
      Confirm(replay, 1, {Runfile("examples/programs/pipeline"), "2000", "256"}, Quick("bad"));
  ASSERT_TRUE(s.ok()) << s;
  const PerContainerVerdict& v = *replay.per_container;
  EXPECT_TRUE(v.confirmed);
  EXPECT_TRUE(absl::StrContains(v.in_situ_failure, "names class 'Parser'")) << v.in_situ_failure;
  EXPECT_TRUE(absl::StrContains(v.in_situ_failure, "Handoff")) << v.in_situ_failure;
  ASSERT_NE(replay.in_situ, nullptr);
  EXPECT_FALSE(replay.verdict.recommended.empty());
}

}  // namespace
}  // namespace alloctrace
