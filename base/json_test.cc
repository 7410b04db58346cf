#include "alloctrace/base/json.h"

#include <string>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(JsonStringTest, PlainTextIsQuoted) {
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("simple_map"), "\"simple_map\"");
}

TEST(JsonStringTest, QuoteAndBackslashAreEscaped) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("C:\\x\\"), "\"C:\\\\x\\\\\"");
}

TEST(JsonStringTest, EveryControlCharacterIsUnicodeEscaped) {
  EXPECT_EQ(JsonString("a\nb"), "\"a\\u000ab\"");
  EXPECT_EQ(JsonString("\t\r"), "\"\\u0009\\u000d\"");
  EXPECT_EQ(JsonString("\x1f"), "\"\\u001f\"");
  EXPECT_EQ(JsonString(std::string("x\0y", 3)), "\"x\\u0000y\"");
  for (int c = 0; c < 0x20; ++c) {
    const std::string out = JsonString(std::string(1, static_cast<char>(c)));
    ASSERT_EQ(out.size(), 8u) << c;
    EXPECT_EQ(out.substr(0, 5), "\"\\u00") << c;
    EXPECT_EQ(std::stoi(out.substr(5, 2), nullptr, 16), c);
  }
  // DEL and space are not control characters in JSON.
  EXPECT_EQ(JsonString(" \x7f"), "\" \x7f\"");
}

TEST(JsonStringTest, WellFormedUtf8IsKept) {
  EXPECT_EQ(JsonString("caf\xC3\xA9"), "\"caf\xC3\xA9\"");            // é
  EXPECT_EQ(JsonString("\xE2\x82\xAC"), "\"\xE2\x82\xAC\"");          // €
  EXPECT_EQ(JsonString("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");  // U+1F600
}

TEST(JsonStringTest, MalformedUtf8BecomesReplacementCharacters) {
  const std::string kBad = "\xEF\xBF\xBD";
  EXPECT_EQ(JsonString("a\xFF"
                       "b"),
            "\"a" + kBad + "b\"");
  EXPECT_EQ(JsonString("\xC3"), "\"" + kBad + "\"");                        // cut short
  EXPECT_EQ(JsonString("\xC0\xAF"), "\"" + kBad + kBad + "\"");             // overlong '/'
  EXPECT_EQ(JsonString("\xED\xA0\x80"), "\"" + kBad + kBad + kBad + "\"");  // surrogate
  EXPECT_EQ(JsonString("\xE2\x82"), "\"" + kBad + kBad + "\"");
}

TEST(JsonStringsTest, AnArrayOfEscapedStrings) {
  EXPECT_EQ(JsonStrings({}), "[]");
  EXPECT_EQ(JsonStrings({"a", "say \"b\""}), "[\"a\", \"say \\\"b\\\"\"]");
}

}  // namespace
}  // namespace alloctrace
