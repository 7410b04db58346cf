#include "alloctrace/replayer/verdict/adopt.h"

#include <sstream>
#include <string>
#include <vector>

#include "alloctrace/base/string_test_util.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using allocators::AllAllocators;
using allocators::AllocatorInfo;
using ::testing::HasSubstr;

TEST(AdoptTest, CatalogTypesFileIsUpToDate) {
  EXPECT_EQ(ReadRunfile("replayer/verdict/catalog_types.cc"), CatalogTypesSource(AllAllocators()))
      << "regenerate: bazel run //replayer -- --list-policies --format=cc > "
         "replayer/verdict/catalog_types.cc";
}

// The docs' adopt table is the generated one, and each row the README
// shows (policy and C++ type, the first two columns) begins one of its rows.
TEST(AdoptTest, DocsAndReadmeTablesAreTheCatalogs) {
  const std::string table =
      FormatPolicyList(AllAllocators(), allocators::DefaultPolicyNames(), /*markdown=*/true);
  const std::string docs = ReadRunfile("docs/adopt.md");
  EXPECT_THAT(docs, HasSubstr("\n\n" + table))
      << "regenerate the table in docs/adopt.md: bazel run //replayer -- --list-policies "
         "--format=markdown";
  EXPECT_TRUE(docs.size() >= table.size() &&
              docs.compare(docs.size() - table.size(), table.size(), table) == 0)
      << "docs/adopt.md ends with the table";
  const std::string readme = ReadRunfile("README.md");
  int rows = 0;
  std::istringstream lines(readme);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0 || line.find("alloctrace::pool::") == std::string::npos) continue;
    ++rows;
    EXPECT_EQ(line.back(), '|') << "README row ends mid-cell: " << line;
    EXPECT_THAT(table, HasSubstr("\n" + line)) << "README row not in the catalog: " << line;
  }
  EXPECT_GE(rows, 4) << "README's \"Adopt the exact type\" shows catalog rows";
}

TEST(AdoptTest, EveryPolicySaysHowToAdoptIt) {
  for (const AllocatorInfo& info : AllAllocators()) {
    EXPECT_FALSE(AdoptWords(info.adopt).empty()) << info.name;
    if (info.family == allocators::Family::kArticle || info.family == allocators::Family::kOurs) {
      EXPECT_THAT(info.adopt.cpp_type, HasSubstr("alloctrace::pool::")) << info.name;
      EXPECT_EQ(info.adopt.header, "alloctrace/pool/pool_allocator.h") << info.name;
      EXPECT_EQ(info.adopt.cmake_target, "alloctrace::pool") << info.name;
    }
    if (info.family == allocators::Family::kExternal) {
      EXPECT_TRUE(info.adopt.cpp_type.empty()) << info.name;
      EXPECT_THAT(info.adopt.how, HasSubstr("LD_PRELOAD=" + info.preload)) << info.name;
    }
  }
}

TEST(AdoptTest, SlabAndSmallNodeHaveBothHoldingsAndThreadings) {
  std::vector<std::string> names;
  for (const AllocatorInfo& info : AllAllocators()) names.push_back(info.name);
  for (const char* pool : {"slab", "small_node"}) {
    for (const char* threading : {"st", "mt"}) {
      for (const char* holding : {"stack", "single"}) {
        const std::string name = std::string(pool) + "/" + threading + "/" + holding;
        EXPECT_THAT(names, ::testing::Contains(name));
      }
    }
  }
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("slab")));
}

TEST(AdoptTest, TheTypeNamesItsHolding) {
  for (const AllocatorInfo& info : AllAllocators()) {
    if (info.name == "slab/st/single") {
      EXPECT_EQ(info.adopt.cpp_type,
                "alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded, "
                "alloctrace::pool::HoldingSingleton>");
      EXPECT_FALSE(info.thread_safe);
    }
    if (info.name == "slab/mt/stack") {
      EXPECT_EQ(info.adopt.cpp_type,
                "alloctrace::pool::SlabAllocator<T, alloctrace::pool::MultiThreaded, "
                "alloctrace::pool::HoldingStack>");
      EXPECT_TRUE(info.thread_safe);
    }
  }
}

TEST(AdoptTest, AdoptWordsNamesHeaderAndTargets) {
  allocators::Adoption a{"alloctrace::pool::SlabAllocator<T>", "alloctrace/pool/pool_allocator.h",
                         "@alloctrace//pool", "alloctrace::pool", ""};
  EXPECT_EQ(
      AdoptWords(a),
      "alloctrace::pool::SlabAllocator<T> (#include \"alloctrace/pool/pool_allocator.h\"; Bazel "
      "@alloctrace//pool; CMake alloctrace::pool)");
  allocators::Adoption std_alloc{"std::allocator<T>", "memory", "", "", ""};
  EXPECT_EQ(AdoptWords(std_alloc), "std::allocator<T> (#include <memory>)");
}

TEST(AdoptTest, ListShowsEveryPolicyWithItsType) {
  const std::vector<AllocatorInfo> all = AllAllocators();
  const std::string list = FormatPolicyList(all, allocators::DefaultPolicyNames(), false);
  const std::string markdown = FormatPolicyList(all, allocators::DefaultPolicyNames(), true);
  for (const AllocatorInfo& info : all) {
    EXPECT_THAT(list, HasSubstr(info.name + " ")) << info.name;
    EXPECT_THAT(list, HasSubstr("    adopt: " + AdoptWords(info.adopt) + "\n")) << info.name;
    EXPECT_THAT(markdown, HasSubstr("| `" + info.name + "` |")) << info.name;
  }
}

}  // namespace
}  // namespace alloctrace
