// docs/usage.md documents the replayer's command line: every flag the
// replayer defines has a row in its flag table, and
// every row names a flag that exists.
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "alloctrace/base/string_test_util.h"
#include "alloctrace/replayer/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

std::string Underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// The flags of the replayer's command line: those config.cc defines (every
// flag in this binary but Abseil's own).
std::set<std::string> ReplayerFlags() {
  std::set<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::StrContains(flag->Filename(), "absl/")) continue;
    names.insert(std::string(name));
  }
  return names;
}

// The flags the first cell of each row of the "Replayer flags" table names
// (`--min_runs=N`, `--max_runs=N` names two).
std::set<std::string> DocumentedFlags(const std::string& doc) {
  std::set<std::string> names;
  const size_t start = doc.find("\n### Replayer flags\n");
  if (start == std::string::npos) return names;
  const size_t end = doc.find("\n#", start + 1);
  std::istringstream lines(doc.substr(start, end == std::string::npos ? end : end - start));
  const std::regex flag("`--([a-z_-]+)");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    const std::string first_cell = line.substr(0, line.find(" | ", 2));
    for (std::sregex_iterator it(first_cell.begin(), first_cell.end(), flag), e; it != e; ++it) {
      names.insert(Underscored((*it)[1]));
    }
  }
  return names;
}

TEST(UsageDocTest, EveryReplayerFlagHasARow) {
  ASSERT_TRUE(ReplayerConfigFromFlags().ok());  // (and links config.cc, where the flags are)
  const std::set<std::string> flags = ReplayerFlags();
  ASSERT_GE(flags.size(), 25u) << "the replayer's flags are not linked into this test";
  ASSERT_TRUE(flags.count("policies") && flags.count("total_budget") && flags.count("confirm"));
  const std::set<std::string> documented = DocumentedFlags(ReadRunfile("docs/usage.md"));
  ASSERT_FALSE(documented.empty()) << "docs/usage.md has no \"### Replayer flags\" table";
  for (const std::string& name : flags) {
    EXPECT_TRUE(documented.count(name))
        << "--" << name << " has no row in docs/usage.md's \"Replayer flags\" table";
  }
}

TEST(UsageDocTest, EveryRowNamesAFlag) {
  const std::set<std::string> flags = ReplayerFlags();
  for (const std::string& name : DocumentedFlags(ReadRunfile("docs/usage.md"))) {
    EXPECT_TRUE(flags.count(name))
        << "docs/usage.md documents --" << name << ", which the replayer does not define";
  }
}

}  // namespace
}  // namespace alloctrace
