#include "alloctrace/base/utf8.h"

#include <string_view>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

size_t Len(std::string_view s) { return Utf8SequenceLength(s, 0); }

TEST(Utf8SequenceLengthTest, WellFormedSequences) {
  EXPECT_EQ(Len("a"), 1u);
  EXPECT_EQ(Len(std::string_view("\0", 1)), 1u);
  EXPECT_EQ(Len("\xC2\x80"), 2u);  // U+0080, the smallest two-byte value
  EXPECT_EQ(Len("\xDF\xBF"), 2u);
  EXPECT_EQ(Len("\xE0\xA0\x80"), 3u);  // U+0800
  EXPECT_EQ(Len("\xED\x9F\xBF"), 3u);  // U+D7FF, just below the surrogates
  EXPECT_EQ(Len("\xEF\xBF\xBF"), 3u);
  EXPECT_EQ(Len("\xF0\x90\x80\x80"), 4u);  // U+10000
  EXPECT_EQ(Len("\xF4\x8F\xBF\xBF"), 4u);  // U+10FFFF, the largest
  EXPECT_EQ(Utf8SequenceLength("ab\xC3\xA9", 2), 2u);
}

TEST(Utf8SequenceLengthTest, MalformedSequences) {
  EXPECT_EQ(Len("\x80"), 0u);              // stray continuation byte
  EXPECT_EQ(Len("\xC0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(Len("\xC1\xBF"), 0u);          // overlong
  EXPECT_EQ(Len("\xE0\x9F\xBF"), 0u);      // overlong three-byte form
  EXPECT_EQ(Len("\xED\xA0\x80"), 0u);      // U+D800, a surrogate
  EXPECT_EQ(Len("\xF0\x8F\xBF\xBF"), 0u);  // overlong four-byte form
  EXPECT_EQ(Len("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(Len("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(Len("\xFF"), 0u);
  EXPECT_EQ(Len("\xC3"), 0u);  // cut short at the end
  EXPECT_EQ(Len("\xE2\x82"), 0u);
  EXPECT_EQ(Len("\xE2\x28\xA1"), 0u);  // second byte not a continuation
  EXPECT_EQ(Len("\xE2\x82\x28"), 0u);  // third byte not a continuation
}

}  // namespace
}  // namespace alloctrace
