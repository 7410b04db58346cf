#include "alloctrace/replayer/engine/child_request.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// argv as the child sees it: its path, the words, result_fd= appended.
std::vector<char*> Argv(std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return argv;
}

TEST(ChildRequestTest, WordsReadBackAsTheRequest) {
  ChildRequest r;
  r.policy = "pool/boundary/exp/st/stack/free";
  r.program_fd = 5;
  r.schedule_fd = 6;
  r.attempt = 12;
  r.windows = "0:10:20:15,20:30:40:15";
  r.mix = "3=slab/st/stack;*=malloc";
  r.states_fd = 7;
  r.options.touch = Touch::kWhole;
  r.options.rss_samples = 17;
  r.options.max_passes = 3;
  r.options.min_warm_seconds = 0.0123456789012345;
  std::vector<std::string> words = ChildArgs(r);
  words.insert(words.begin(), "/path/replayer");
  words.push_back(std::string(kChildResultFdWord) + "9");
  std::vector<char*> argv = Argv(words);
  const int argc = static_cast<int>(words.size());
  ASSERT_TRUE(IsChildInvocation(argc, argv.data()));
  absl::StatusOr<ChildRequest> back = ParseChildArgs(argc, argv.data());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->policy, r.policy);
  EXPECT_EQ(back->program_fd, 5);
  EXPECT_EQ(back->schedule_fd, 6);
  EXPECT_EQ(back->result_fd, 9);
  EXPECT_EQ(back->attempt, 12);
  EXPECT_EQ(back->windows, r.windows);
  EXPECT_EQ(back->mix, r.mix);
  EXPECT_EQ(back->states_fd, 7);
  EXPECT_EQ(back->options.touch, Touch::kWhole);
  EXPECT_EQ(back->options.rss_samples, 17);
  EXPECT_EQ(back->options.max_passes, 3);
  EXPECT_EQ(back->options.min_warm_seconds, r.options.min_warm_seconds);
}

// A walk replays whole runs on one thread: a child asked for one with a
// thread schedule or windows refuses, rather than replay without it.
TEST(ChildRequestTest, AWalkIsAWholeOneThreadRun) {
  for (int variant = 0; variant < 3; ++variant) {
    ChildRequest r;
    r.policy = "malloc";
    r.program_fd = 3;
    r.options.touch = Touch::kWalk;
    std::vector<std::string> words = ChildArgs(r);
    words.insert(words.begin(), "replayer");
    words.push_back(std::string(kChildResultFdWord) + "9");
    {
      std::vector<char*> argv = Argv(words);
      ASSERT_TRUE(ParseChildArgs(static_cast<int>(words.size()), argv.data()).ok());
    }
    if (variant == 0) r.schedule_fd = 6;
    if (variant == 1) r.windows = "0:10:20:15";
    words = ChildArgs(r);
    words.insert(words.begin(), "replayer");
    words.push_back(std::string(kChildResultFdWord) + "9");
    if (variant == 2) words.push_back("command_fd=8");  // a serving child's, added apart
    std::vector<char*> argv = Argv(words);
    absl::StatusOr<ChildRequest> back = ParseChildArgs(static_cast<int>(words.size()), argv.data());
    ASSERT_FALSE(back.ok()) << variant;
    EXPECT_EQ(back.status().message(),
              "child run: touch=walk replays whole runs on one thread, not with schedule_fd=, "
              "windows= or command_fd=");
  }
}

TEST(ChildRequestTest, AMissingOrMalformedWordIsNamed) {
  std::vector<std::string> words =
      ChildArgs(ChildRequest{"malloc", 3, -1, -1, 1, "", -1, "", RunOptions()});
  words.insert(words.begin(), "replayer");
  std::vector<char*> argv = Argv(words);
  absl::StatusOr<ChildRequest> r = ParseChildArgs(static_cast<int>(words.size()), argv.data());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "child run: missing or malformed result_fd=");
  words.push_back("result_fd=x");
  argv = Argv(words);
  r = ParseChildArgs(static_cast<int>(words.size()), argv.data());
  EXPECT_EQ(r.status().message(), "child run: missing or malformed result_fd=");
}

// A serving child's command pipe comes after the request's words, as its
// result pipe does; without it the child runs once.
TEST(ChildRequestTest, AServingChildsCommandFdIsReadBack) {
  std::vector<std::string> words =
      ChildArgs(ChildRequest{"malloc", 3, -1, -1, 1, "", -1, "", RunOptions()});
  words.insert(words.begin(), "replayer");
  words.push_back("result_fd=9");
  std::vector<char*> argv = Argv(words);
  absl::StatusOr<ChildRequest> r = ParseChildArgs(static_cast<int>(words.size()), argv.data());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->command_fd, -1);
  words.push_back(absl::StrCat(kChildCommandFdWord, 8));
  argv = Argv(words);
  r = ParseChildArgs(static_cast<int>(words.size()), argv.data());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->command_fd, 8);
  words.back() = "command_fd=-2";
  argv = Argv(words);
  r = ParseChildArgs(static_cast<int>(words.size()), argv.data());
  EXPECT_EQ(r.status().message(), "child run: missing or malformed command_fd=");
}

TEST(ChildRequestTest, AUserCommandLineIsNotAChildRun) {
  std::vector<std::string> words = {"replayer", "traces/simple_map.trace"};
  std::vector<char*> argv = Argv(words);
  EXPECT_FALSE(IsChildInvocation(2, argv.data()));
  EXPECT_FALSE(IsChildInvocation(1, argv.data()));
}

}  // namespace
}  // namespace alloctrace
