#include "alloctrace/base/enum_words.h"

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

enum class Shade { kLight, kDark, kNone };
constexpr EnumWord<Shade> kShadeWords[] = {
    {Shade::kLight, "light"}, {Shade::kDark, "dark"}, {Shade::kNone, "none"}};

TEST(EnumWordsTest, WordAndParseAreInverse) {
  for (const EnumWord<Shade>& e : kShadeWords) {
    EXPECT_EQ(ParseWord(kShadeWords, WordOf(kShadeWords, e.value)), e.value);
  }
}

TEST(EnumWordsTest, UnknownWordIsNullopt) {
  EXPECT_FALSE(ParseWord(kShadeWords, "Light").has_value());
  EXPECT_FALSE(ParseWord(kShadeWords, "").has_value());
}

TEST(EnumWordsTest, ValueMissingFromTableIsQuestionMark) {
  constexpr EnumWord<Shade> kPartial[] = {{Shade::kLight, "light"}};
  EXPECT_STREQ(WordOf(kPartial, Shade::kDark), "?");
}

TEST(EnumWordsTest, ListsAlternativesInOrder) {
  EXPECT_EQ(WordList(kShadeWords), "light, dark or none");
  constexpr EnumWord<Shade> kTwo[] = {{Shade::kLight, "light"}, {Shade::kDark, "dark"}};
  EXPECT_EQ(WordList(kTwo), "light or dark");
}

}  // namespace
}  // namespace alloctrace
