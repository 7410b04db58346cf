#include "alloctrace/replayer/engine/allocators/registry.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace::allocators {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RegistryTest, ListsEveryAllocatorOnceWithItsFamily) {
  const std::vector<AllocatorInfo> all = AllAllocators();
  ASSERT_EQ(all.size(), 67u);
  std::set<std::string> names;
  int baseline = 0, external = 0, article = 0, ours = 0;
  for (const AllocatorInfo& info : all) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    baseline += info.family == Family::kBaseline;
    article += info.family == Family::kArticle;
    ours += info.family == Family::kOurs;
    external += info.family == Family::kExternal;
    EXPECT_EQ(info.preload.empty(), info.family != Family::kExternal) << info.name;
  }
  EXPECT_EQ(baseline, 8);
  EXPECT_EQ(external, 3);
  EXPECT_EQ(article, 48);
  EXPECT_EQ(ours, 8);  // slab, small_node: st/mt x stack/single
  EXPECT_EQ(all.front().name, "malloc");
  for (const char* name :
       {"malloc", "new", "boost_pool", "boost_fast_pool", "boost_fast_pool_nolock",
        "pmr_unsync_pool", "pmr_monotonic", "bump", "slab/st/stack", "slab/mt/single",
        "small_node/st/stack", "small_node/mt/single", "tcmalloc", "jemalloc", "mimalloc",
        "pool/simple/lin/st/stack/free", "pool/ordered/exp/mt/single/keep",
        "pool/boundary/exp/st/stack/free"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

struct RecordName {
  std::vector<std::string>* names;
  template <typename A>
  void operator()(const AllocatorInfo& info) {
    EXPECT_EQ(A::Info().name, info.name);
    names->push_back(info.name);
  }
};

TEST(RegistryTest, DispatchesToTheTypeByName) {
  std::vector<std::string> seen;
  EXPECT_TRUE(WithAllocatorType("pool/ordered/lin/mt/stack/free", RecordName{&seen}));
  EXPECT_TRUE(WithAllocatorType("slab/st/single", RecordName{&seen}));
  EXPECT_FALSE(WithAllocatorType("hoard", RecordName{&seen}));
  EXPECT_FALSE(WithAllocatorType("slab", RecordName{&seen}));  // the holding is part of it
  EXPECT_THAT(seen, ElementsAre("pool/ordered/lin/mt/stack/free", "slab/st/single"));

  std::vector<std::string> all;
  ForEachAllocatorType(RecordName{&all});
  EXPECT_EQ(all.size(), AllAllocators().size());
}

TEST(MatchesGlobTest, MatchesStarsAndQuestionMarks) {
  EXPECT_TRUE(MatchesGlob("malloc", "malloc"));
  EXPECT_FALSE(MatchesGlob("malloc", "mallocx"));
  EXPECT_FALSE(MatchesGlob("malloc", "malloc_"));
  EXPECT_TRUE(MatchesGlob("*", "pool/simple/lin/st/stack/free"));
  EXPECT_TRUE(MatchesGlob("pool/*", "pool/simple/lin/st/stack/free"));
  EXPECT_TRUE(MatchesGlob("pool/*/exp/*", "pool/ordered/exp/mt/stack/free"));
  EXPECT_FALSE(MatchesGlob("pool/*/exp/*", "pool/ordered/lin/mt/stack/free"));
  EXPECT_TRUE(MatchesGlob("*keep", "pool/ordered/exp/mt/stack/keep"));
  EXPECT_TRUE(MatchesGlob("*/free", "pool/ordered/exp/mt/stack/free"));
  EXPECT_FALSE(MatchesGlob("*/free", "pool/ordered/exp/mt/stack/keep"));
  EXPECT_TRUE(MatchesGlob("boost_?ool", "boost_pool"));
  EXPECT_TRUE(MatchesGlob("b*t*pool", "boost_fast_pool"));
  EXPECT_TRUE(MatchesGlob("**a**", "slab"));
  EXPECT_FALSE(MatchesGlob("?", ""));
  EXPECT_TRUE(MatchesGlob("", ""));
  EXPECT_TRUE(MatchesGlob("*", ""));
  EXPECT_FALSE(MatchesGlob("", "x"));
}

TEST(SelectAllocatorsTest, SelectsInPatternOrderWithoutDuplicates) {
  auto selected = SelectAllocators(" slab/st/*, malloc ,pool/*/lin/st/stack/*,slab/st/stack");
  ASSERT_TRUE(selected.ok()) << selected.status();
  EXPECT_THAT(*selected,
              ElementsAre("slab/st/stack", "slab/st/single", "malloc",
                          "pool/simple/lin/st/stack/free", "pool/simple/lin/st/stack/keep",
                          "pool/boundary/lin/st/stack/free", "pool/boundary/lin/st/stack/keep",
                          "pool/ordered/lin/st/stack/free", "pool/ordered/lin/st/stack/keep"));
  auto all = SelectAllocators("*");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), AllAllocators().size());
  auto article = SelectAllocators("pool/*");
  ASSERT_TRUE(article.ok());
  EXPECT_EQ(article->size(), 48u);
}

TEST(SelectAllocatorsTest, NamesThePatternThatMatchesNothing) {
  auto selected = SelectAllocators("malloc,foo,bar");
  ASSERT_FALSE(selected.ok());
  EXPECT_EQ(selected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(selected.status().message(), "unknown policy 'foo'; see --list-policies");
  // A plain name near a policy's is taken for a typo of it; a glob is not.
  EXPECT_EQ(SelectAllocators("slabb").status().message(),
            "unknown policy 'slabb'; did you mean slab/*? See --list-policies");
  EXPECT_EQ(SelectAllocators("slab/st/stak").status().message(),
            "unknown policy 'slab/st/stak'; did you mean slab/st/stack? See --list-policies");
  EXPECT_EQ(SelectAllocators("tcmaloc").status().message(),
            "unknown policy 'tcmaloc'; did you mean tcmalloc? See --list-policies");
  EXPECT_EQ(SelectAllocators("slabb*").status().message(),
            "unknown policy 'slabb*'; see --list-policies");
  auto empty = SelectAllocators(" , ");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("--list-policies"));
}

TEST(RegistryTest, DefaultSetIsBaselinesButBumpExternalAndOurSingleThreadedPools) {
  const std::vector<std::string> names = DefaultPolicyNames();
  const std::set<std::string> set(names.begin(), names.end());
  EXPECT_EQ(set.count("bump"), 0u) << "bump never frees: not a contender";
  for (const char* name :
       {"malloc", "new", "boost_pool", "boost_fast_pool", "boost_fast_pool_nolock",
        "pmr_unsync_pool", "pmr_monotonic", "tcmalloc", "jemalloc", "mimalloc", "slab/st/stack",
        "slab/st/single", "small_node/st/stack", "small_node/st/single"}) {
    EXPECT_EQ(set.count(name), 1u) << name;
  }
  // Both holdings are measured, so the verdict chooses between them.
  EXPECT_EQ(set.count("slab/mt/stack"), 0u);
  EXPECT_EQ(set.count("slab/mt/single"), 0u);
  for (const std::string& name : names) EXPECT_NE(name.rfind("pool/", 0), 0u) << name;
  for (const std::string& kind : ArticleStorageKinds()) {
    absl::StatusOr<std::vector<std::string>> grid = SelectAllocators("pool/" + kind + "/*");
    ASSERT_TRUE(grid.ok()) << kind;
    EXPECT_EQ(grid->size(), 16u) << kind;
  }
}

}  // namespace
}  // namespace alloctrace::allocators
