#include "alloctrace/base/did_you_mean.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("slab", "slab"), 0u);
  EXPECT_EQ(EditDistance("", "slab"), 4u);
  EXPECT_EQ(EditDistance("slab", ""), 4u);
  EXPECT_EQ(EditDistance("slabb", "slab"), 1u);        // deletion
  EXPECT_EQ(EditDistance("polices", "policies"), 1u);  // insertion
  EXPECT_EQ(EditDistance("budgat", "budget"), 1u);     // substitution
  EXPECT_EQ(EditDistance("budgte", "budget"), 2u);     // a transposition is two edits
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("sitting", "kitten"), 3u);  // symmetric
}

TEST(NearestNameTest, SuggestsOnlyWhatIsNearEnough) {
  const std::vector<std::string> names = {"malloc", "slab", "tcmalloc", "jemalloc"};
  EXPECT_EQ(NearestName("slabb", names), "slab");
  EXPECT_EQ(NearestName("maloc", names), "malloc");
  EXPECT_EQ(NearestName("tcmaloc", names), "tcmalloc");
  EXPECT_EQ(NearestName("nosuch", names), "");
  EXPECT_EQ(NearestName("x", {}), "");
  // A tie goes to the one listed first.
  EXPECT_EQ(NearestName("ab", {"ac", "ad"}), "ac");
}

TEST(NearestNameTest, LongNamesAllowAThirdOfTheirLengthInEdits) {
  const std::vector<std::string> names = {"std", "slab/st/stack", "slab/st/single",
                                          "slab/mt/single"};
  EXPECT_EQ(NearestName("slab/st/singel", names), "slab/st/single");  // 2 edits of 14
  EXPECT_EQ(NearestName("slab/st/stak", names), "slab/st/stack");
  EXPECT_EQ(NearestName("slab/xx/sngl", names), "slab/st/single");  // 4 of 12: the most
  EXPECT_EQ(NearestName("sl/xx/sngl", names), "");                  // 6 of 10: too far
}

}  // namespace
}  // namespace alloctrace
