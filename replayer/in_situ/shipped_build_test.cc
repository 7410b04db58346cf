#include "alloctrace/replayer/in_situ/shipped_build.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

std::vector<ClassDef> Classes() {
  ClassDef index;
  index.id = 1;
  index.name = "role::WorkerIndex";
  index.tagged = true;
  ClassDef registry;
  registry.id = 2;
  registry.name = "Registry";
  registry.tagged = true;
  return {ClassDef(), index, registry};  // id 0 (arena 0) has no alias
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TempDir() {
  std::string dir = absl::StrCat(testing::TempDir(), "/shippedXXXXXX");
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  return dir;
}

TEST(ShippedAliasLinesTest, OnePolicyGivesEveryClassItsType) {
  absl::StatusOr<std::vector<std::string>> lines = ShippedAliasLines(Classes(), "slab/st/stack");
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0],
            "template <class T> using WorkerIndexAlloc = alloctrace::pool::SlabAllocator<T, "
            "alloctrace::pool::SingleThreaded, alloctrace::pool::HoldingStack>;");
  EXPECT_TRUE(absl::StartsWith((*lines)[1], "template <class T> using RegistryAlloc = "));
}

TEST(ShippedAliasLinesTest, StdIsTheStandardAllocator) {
  absl::StatusOr<std::vector<std::string>> lines = ShippedAliasLines(Classes(), "std");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ((*lines)[1], "template <class T> using RegistryAlloc = std::allocator<T>;");
}

TEST(ShippedAliasLinesTest, AnAssignmentGivesEachClassItsOwn) {
  absl::StatusOr<std::vector<std::string>> lines =
      ShippedAliasLines(Classes(), "WorkerIndex=slab/st/stack;*=std");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_TRUE(absl::StrContains((*lines)[0], "SlabAllocator<T, alloctrace::pool::SingleThreaded"));
  EXPECT_EQ((*lines)[1], "template <class T> using RegistryAlloc = std::allocator<T>;");
  lines = ShippedAliasLines(Classes(), "Registry=slab/mt/stack;*=slab/st/single");
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_TRUE(absl::StrContains((*lines)[0], "HoldingSingleton"));
  EXPECT_TRUE(absl::StrContains((*lines)[1], "MultiThreaded"));
}

TEST(ShippedAliasLinesTest, WhatCannotBePastedIsAnError) {
  EXPECT_FALSE(ShippedAliasLines(Classes(), "slab/st/stak").ok());
  EXPECT_FALSE(ShippedAliasLines(Classes(), "WorkerIndex=nothing;*=std").ok());
  EXPECT_FALSE(ShippedAliasLines({ClassDef()}, "std").ok());
}

// A real build: the system's C++ compiler pastes the lines through the
// macro, as the examples' sources take them, and the program prints them.
TEST(ShippedBuildsTest, BuildsOncePerSetOfLinesWithTheLinesPasted) {
  const std::string dir = TempDir();
  const std::string source = dir + "/prog.cc";
  {
    std::ofstream out(source);
    out << "#include <cstdio>\n#define STR2(...) #__VA_ARGS__\n#define STR(...) "
           "STR2(__VA_ARGS__)\nint main() { std::puts(STR(ALLOCTRACE_ALIASES)); }\n";
  }
  const std::string log = dir + "/builds.log";
  ShippedBuilds builds(
      absl::StrCat("c++ -o \"$ALLOCTRACE_SHIPPED\" \"-DALLOCTRACE_ALIASES=$ALLOCTRACE_ALIASES\" ",
                   source, " && echo built from \"$ALLOCTRACE_ALIASES_FILE\""),
      Classes(), log, dir);
  absl::StatusOr<std::string> program = builds.For("slab/st/stack");
  ASSERT_TRUE(program.ok()) << program.status() << "\n" << Slurp(log);
  EXPECT_EQ(builds.builds(), 1);
  absl::StatusOr<std::string> again = builds.For("slab/st/stack");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *program);
  EXPECT_EQ(builds.builds(), 1) << "the same lines are built once";
  // An assignment that names every class the same way is the same build.
  EXPECT_EQ(*builds.For("WorkerIndex=slab/st/stack;Registry=slab/st/stack;*=std"), *program);
  EXPECT_EQ(builds.builds(), 1);

  const std::string printed = dir + "/printed";
  ASSERT_EQ(std::system((*program + " > " + printed).c_str()), 0);
  const std::vector<std::string> lines = *ShippedAliasLines(Classes(), "slab/st/stack");
  EXPECT_EQ(Slurp(printed), absl::StrCat(absl::StrJoin(lines, " "), "\n"));
  EXPECT_TRUE(absl::StrContains(Slurp(log), "built from " + dir + "/aliases-1.h"));
  EXPECT_EQ(Slurp(dir + "/aliases-1.h"), absl::StrCat(absl::StrJoin(lines, "\n"), "\n"));

  absl::StatusOr<std::string> other = builds.For("std");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(*other, *program);
  EXPECT_EQ(builds.builds(), 2);
  EXPECT_GT(builds.seconds(), 0);
}

TEST(ShippedBuildsTest, AFailedBuildSaysWhyWithItsLastLine) {
  const std::string dir = TempDir();
  ShippedBuilds builds("echo compiling; echo 'app.cc:3: error: no type named Foo' >&2; exit 3",
                       Classes(), dir + "/builds.log", dir);
  absl::StatusOr<std::string> program = builds.For("slab/mt/stack");
  ASSERT_FALSE(program.ok());
  EXPECT_TRUE(absl::StrContains(program.status().message(), "exited with code 3"))
      << program.status();
  EXPECT_TRUE(absl::StrContains(program.status().message(), "error: no type named Foo"));
  EXPECT_EQ(builds.failed_builds(), 1);
  EXPECT_FALSE(builds.For("slab/mt/stack").ok()) << "a failure is kept, not built again";
  EXPECT_EQ(builds.builds(), 1);
  EXPECT_TRUE(absl::StrContains(Slurp(dir + "/builds.log"), "FAILED"));
}

TEST(ShippedBuildsTest, ABuildThatLeavesNoExecutableFails) {
  const std::string dir = TempDir();
  ShippedBuilds builds("true", Classes(), dir + "/builds.log", dir);
  absl::StatusOr<std::string> program = builds.For("std");
  ASSERT_FALSE(program.ok());
  EXPECT_TRUE(absl::StrContains(program.status().message(), "left no executable"))
      << program.status();
}

TEST(ShippedBuildsTest, RestoreRunsTheCommandWithoutTheLines) {
  const std::string dir = TempDir();
  const std::string marker = dir + "/marker";
  ShippedBuilds builds(absl::StrCat("echo \"${ALLOCTRACE_ALIASES-none}\" > ", marker,
                                    " && cp /bin/true \"$ALLOCTRACE_SHIPPED\""),
                       Classes(), dir + "/builds.log", dir);
  ASSERT_TRUE(builds.For("std").ok());
  EXPECT_TRUE(absl::StrContains(Slurp(marker), "std::allocator<T>"));
  builds.Restore();
  EXPECT_EQ(Slurp(marker), "none\n");
}

}  // namespace
}  // namespace alloctrace
