// The search in a real program and the per-container search in it:
// examples/programs/pipeline, whose two per-thread roles may take
// single-threaded pools and whose hand-off queue (a list a parser thread
// fills and an aggregator thread frees, interleaved) may not. Its trace is
// recorded here; the program, its runs and the switch are the real ones.
#include "alloctrace/replayer/in_situ_cli.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/in_situ/per_container_search.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/alloctrace/", path);
}

std::vector<std::string> Pipeline() {
  return {Runfile("examples/programs/pipeline"), "2000", "256"};
}

InSituSettings Quick(const std::string& name) {
  InSituSettings s;
  s.race = true;
  s.min_runs = 3;
  s.max_runs = 5;
  s.total_budget_seconds = 30;
  s.max_total_runs = 40;
  s.launcher = Runfile("replayer/in_situ_launcher");
  s.log_path = absl::StrCat(testing::TempDir(), "/", name, ".log");
  return s;
}

// pipeline's trace, recorded once.
const ReplayProgram& PipelineProgram() {
  static const ReplayProgram* program = [] {
    const std::string path = absl::StrCat(testing::TempDir(), "/pipeline.trace");
    const std::string command =
        absl::StrCat("ALLOCTRACE_OUT=", path, " ", Pipeline()[0], " 2000 256 >/dev/null");
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
    EXPECT_TRUE(p.ok()) << p.status();
    return new ReplayProgram(p.ok() ? *std::move(p) : ReplayProgram());
  }();
  return *program;
}

// The search without a replay's figures: every malloc and our pools, in
// the program's own runs; what it recommends is one of them or std.
TEST(SearchTest, TheFamiliesRaceInTheProgram) {
  TraceReport replay;
  replay.trace.arena_events = 1;
  for (const char* name : {"slab/mt/stack", "slab/st/stack"}) {
    PolicyResult p;
    p.name = name;
    replay.policies.push_back(p);
  }
  replay.verdict.recommended = "slab/mt/stack";
  const absl::Status s = Search(replay, 1, Pipeline(), Quick("search"));
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_NE(replay.in_situ, nullptr);
  const InSituSummary& r = *replay.in_situ;
  EXPECT_TRUE(r.instrumented);
  for (const char* name : {"tcmalloc", "jemalloc", "mimalloc", "slab/mt/stack", "slab/st/stack"}) {
    EXPECT_NE(FindInSitu(r, name), nullptr) << name;
  }
  EXPECT_FALSE(r.recommended.empty());
  EXPECT_EQ(replay.verdict.recommended, r.recommended);
  EXPECT_EQ(replay.verdict.replay_recommended, "slab/mt/stack");
  EXPECT_LE(r.runs, 40 + 12) << "the runs' budget (a round in course may finish)";
  EXPECT_GE(r.noise_floor.n, 3) << "the reference's second run set pairs with it";
}

TEST(PerContainerInProgramTest, EachClassRacesItsSafePoliciesInTheProgram) {
  const ReplayProgram& program = PipelineProgram();
  InSituSummary single;
  single.instrumented = true;
  single.reference = "std";
  single.recommended = "std";
  const PerContainerVerdict v =
      SearchPerContainerInProgram(program, single, Pipeline(), Quick("per_container"), 0.01);
  ASSERT_EQ(v.why_not, "");
  EXPECT_TRUE(v.in_program);
  EXPECT_GE(v.races, 2);
  EXPECT_EQ(v.in_situ_failure, "");
  // The final race: the mix against std, unless no class moved (the mix is
  // std itself, the single choice here).
  if (!v.mix_is_single) {
    EXPECT_GE(v.final_rounds, 3);
    EXPECT_GE(v.in_situ_vs_std.n, 3);
  }
  bool saw_handoff = false, saw_parse = false;
  for (const ClassVerdict& c : v.classes) {
    if (absl::StrContains(c.facts.def.name, "Handoff")) {
      saw_handoff = true;
      // Its nodes are allocated by one thread and freed by the other,
      // interleaved: no single-threaded pool is offered.
      for (const ClassCandidate& cc : c.candidates) {
        if (absl::StrContains(cc.policy, "/st/")) {
          EXPECT_TRUE(absl::StrContains(cc.skipped, "several threads")) << cc.policy;
        }
      }
      EXPECT_EQ(c.policy.find("/st/"), std::string::npos) << c.policy;
    }
    if (absl::StrContains(c.facts.def.name, "ParseIndex")) {
      saw_parse = true;
      bool st_ran = false;
      for (const ClassCandidate& cc : c.candidates) {
        st_ran |= cc.policy == "slab/st/stack" && cc.skipped.empty() && cc.seconds.has_data();
      }
      EXPECT_TRUE(st_ran);
    }
  }
  EXPECT_TRUE(saw_handoff);
  EXPECT_TRUE(saw_parse);
  EXPECT_TRUE(absl::StrContains(v.assignment, "*=std")) << v.assignment;
}

TEST(PerContainerInProgramTest, AnUninstrumentedProgramOrOneClassHasNoSearch) {
  const ReplayProgram& program = PipelineProgram();
  InSituSummary single;
  single.instrumented = false;
  single.reference = "malloc";
  single.recommended = "jemalloc";
  EXPECT_TRUE(absl::StrContains(
      SearchPerContainerInProgram(program, single, Pipeline(), Quick("none"), 0.05).why_not,
      "not instrumented"));
  ReplayProgram one = program;
  one.classes.clear();
  for (uint32_t& c : one.arena_classes) c = 0;
  single.instrumented = true;
  EXPECT_TRUE(absl::StrContains(
      SearchPerContainerInProgram(one, single, Pipeline(), Quick("one"), 0.05).why_not,
      "names no class"));
}

std::vector<ClassDef> ClassDefs(const ReplayProgram& program) {
  std::vector<ClassDef> defs;
  for (const auto& [id, def] : program.classes) defs.push_back(def);
  return defs;
}

// --shipped_build: a build command whose executable still has
// TraceAllocator in it (it copies the instrumented program: nothing was
// pasted) is caught on its first run, never measured as a shipped build.
TEST(ShippedSearchTest, AShippedBuildThatStillRecordsIsFailed) {
  TraceReport replay;
  replay.verdict.recommended = "jemalloc";
  InSituSettings s = Quick("shipped_unpasted");
  s.shipped = std::make_shared<ShippedBuilds>(
      absl::StrCat("cp ", Pipeline()[0], " \"$ALLOCTRACE_SHIPPED\""), ClassDefs(PipelineProgram()),
      absl::StrCat(testing::TempDir(), "/unpasted_builds.log"), testing::TempDir());
  const absl::Status st = Search(replay, 1, Pipeline(), s);
  ASSERT_TRUE(st.ok()) << st;
  const InSituPolicy* ref = FindInSitu(*replay.in_situ, "std");
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->status, RunStatus::kFailed);
  EXPECT_TRUE(absl::StrContains(ref->failure, "did not paste $ALLOCTRACE_ALIASES")) << ref->failure;
  EXPECT_GE(replay.in_situ->shipped_builds, 1);
}

// A build that fails for the reference stops the search with the build's
// own last line; nothing is measured under the switch instead.
TEST(ShippedSearchTest, AFailedReferenceBuildIsAnError) {
  TraceReport replay;
  replay.verdict.recommended = "jemalloc";
  InSituSettings s = Quick("shipped_failed");
  s.shipped = std::make_shared<ShippedBuilds>(
      "echo 'pipeline.cc:82: error: RegistryAlloc was not declared' >&2; exit 1",
      ClassDefs(PipelineProgram()), absl::StrCat(testing::TempDir(), "/failed_builds.log"),
      testing::TempDir());
  const absl::Status st = Search(replay, 1, Pipeline(), s);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "the reference std: its shipped build failed")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "RegistryAlloc was not declared")) << st;
  EXPECT_EQ(replay.in_situ, nullptr);
}

}  // namespace
}  // namespace alloctrace
