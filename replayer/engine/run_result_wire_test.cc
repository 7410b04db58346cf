#include "alloctrace/replayer/engine/run_result_wire.h"

#include <string>

#include "absl/status/statusor.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(RunErrorKindWordsTest, EveryKindHasAWordAndReadsBack) {
  for (RunErrorKind kind :
       {RunErrorKind::kNone, RunErrorKind::kOpFailed, RunErrorKind::kOutOfMemory,
        RunErrorKind::kStopped, RunErrorKind::kOther}) {
    const std::string word = WordOf(kRunErrorKindWords, kind);
    EXPECT_NE(word, "?");
    EXPECT_EQ(ParseWord(kRunErrorKindWords, word), kind) << word;
  }
}

// A result's figures, its error's kind and its words come back as sent.
TEST(RunResultWireTest, AResultRoundTripsWithItsErrorsKind) {
  RunResult r;
  r.ops = 1000;
  r.peak_rss = 1 << 20;
  r.threads = 3;
  r.passes.resize(1);
  r.passes[0].wall_seconds = 0.25;
  r.passes[0].thread_cpu_seconds = {0.1, 0.2, 0.3};
  r.rss_course = {1, 2, 3};
  for (RunErrorKind kind :
       {RunErrorKind::kOpFailed, RunErrorKind::kOutOfMemory, RunErrorKind::kOther}) {
    r.error = {kind, "allocation of 64 bytes failed at op 12, under the data limit"};
    absl::StatusOr<RunResult> back = ParseRunResult(SerializeRunResult(r));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->error.kind, kind);
    EXPECT_EQ(back->error.words, r.error.words);
    EXPECT_EQ(back->ops, r.ops);
    EXPECT_EQ(back->peak_rss, r.peak_rss);
    EXPECT_EQ(back->threads, 3u);
    ASSERT_EQ(back->passes.size(), 1u);
    EXPECT_EQ(back->seconds, 0.25);
    EXPECT_EQ(back->passes[0].thread_cpu_seconds, r.passes[0].thread_cpu_seconds);
    EXPECT_EQ(back->rss_course, r.rss_course);
  }
}

TEST(RunResultWireTest, NoErrorIsKindNoneAndNoWords) {
  absl::StatusOr<RunResult> back = ParseRunResult(SerializeRunResult(RunResult()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->error.kind, RunErrorKind::kNone);
  EXPECT_EQ(back->error.words, "");
}

// Words set without a kind (a check of the child's own) come back as they
// were sent, kind and all, and read as kOther.
TEST(RunResultWireTest, WordsWithoutAKindComeBackAsSent) {
  RunResult r;
  r.error.words = "it cannot serve windows";
  absl::StatusOr<RunResult> back = ParseRunResult(SerializeRunResult(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->error.kind, RunErrorKind::kNone);
  EXPECT_EQ(back->error.Kind(), RunErrorKind::kOther);
  EXPECT_TRUE(back->error.failed());
  EXPECT_EQ(back->error.words, r.error.words);
}

TEST(RunResultWireTest, AnotherVersionOrAnUnknownKindIsMalformed) {
  const std::string line = SerializeRunResult(RunResult());
  ASSERT_EQ(line.substr(0, 3), "v5 ");
  EXPECT_FALSE(ParseRunResult("v4" + line.substr(2)).ok());
  const size_t none = line.rfind(" none ");
  ASSERT_NE(none, std::string::npos);
  EXPECT_FALSE(ParseRunResult(line.substr(0, none) + " fatal \n").ok());
  EXPECT_FALSE(ParseRunResult(line.substr(0, none)).ok());  // truncated before the kind
}

}  // namespace
}  // namespace alloctrace
