// Test helpers for the end-to-end tests that run the replayer (or any
// program) as a user would: a shell command with its exit status, stdout
// and stderr captured.
//
// Thread-safety: one command at a time (it forks).
#ifndef ALLOCTRACE_REPLAYER_TESTING_RUN_COMMAND_TEST_UTIL_H_
#define ALLOCTRACE_REPLAYER_TESTING_RUN_COMMAND_TEST_UTIL_H_

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace alloctrace::testing_util {

struct Output {
  int exit_code;  // 128 if the command did not exit normally
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `cmd` (a shell command line) with stdout and stderr captured.
inline Output RunShell(const std::string& cmd) {
  const std::string dir = ::testing::TempDir();
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const int status = std::system(absl::StrCat(cmd, " >", out, " 2>", err).c_str());
  return Output{WIFEXITED(status) ? WEXITSTATUS(status) : 128, Slurp(out), Slurp(err)};
}

// Runs the replayer (replayer/replayer in the test's runfiles) with `args`
// (a shell word list) and `env` ("NAME=value ...") set for it, --quiet.
inline Output RunReplayer(const std::string& args, const std::string& env = "") {
  return RunShell(
      absl::StrCat(env.empty() ? "" : "env " + env + " ", "replayer/replayer --quiet ", args));
}

}  // namespace alloctrace::testing_util

#endif  // ALLOCTRACE_REPLAYER_TESTING_RUN_COMMAND_TEST_UTIL_H_
