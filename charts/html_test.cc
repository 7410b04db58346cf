#include "alloctrace/charts/html.h"

#include <string>

#include "gtest/gtest.h"

namespace alloctrace::charts {
namespace {

constexpr char kScript[] = "<script>alert(1)</script>";
constexpr char kImg[] = "\"><img src=x onerror=alert(1)>";

TEST(EscapeTest, MarkupBecomesText) {
  EXPECT_EQ(Escape(kScript), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(Escape(kImg), "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(Escape("a & b 'c'"), "a &amp; b &#39;c&#39;");
  EXPECT_EQ(Escape("&amp;"), "&amp;amp;");
}

TEST(EscapeTest, KeepsValidUtf8AndReplacesTheRest) {
  EXPECT_EQ(Escape("caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(Escape("a\xFF"
                   "b"),
            "a" + fffd + "b");
  EXPECT_EQ(Escape("\xC3"), fffd);                        // cut short
  EXPECT_EQ(Escape("\xC0\xBC"), fffd + fffd);             // overlong '<'
  EXPECT_EQ(Escape("\xED\xA0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(Escape(std::string("a\0b", 3)), "a" + fffd + "b");
  EXPECT_EQ(Escape("\x1b[31m"), fffd + "[31m");
  EXPECT_EQ(Escape("tab\tnl\n"), "tab\tnl\n");
}

TEST(TruncateTest, CutsByCodePointsWithAnEllipsis) {
  EXPECT_EQ(Truncate("short", 10), "short");
  EXPECT_EQ(Truncate("exactly10!", 10), "exactly10!");
  EXPECT_EQ(Truncate("pool/boundary/exp/st/single/keep", 10), "pool/boun\xE2\x80\xA6");
  // Never splits a multi-byte character.
  EXPECT_EQ(Truncate("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xE2\x80\xA6");
  EXPECT_EQ(Truncate("abc", 1), "\xE2\x80\xA6");
}

TEST(HtmlTableTest, EscapesCellsAndHeaders) {
  HtmlTable t({"policy", "<ns/op>"}, {false, true});
  t.AddRow({kScript, "12.5"}, "tied");
  t.AddRowHtml({"<b>bold</b>", "1"});
  const std::string html = t.Render();
  EXPECT_EQ(t.rows(), 2u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<th class=\"num\">&lt;ns/op&gt;</th>"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"tied\">"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">12.5</td>"), std::string::npos);
  EXPECT_NE(html.find("<b>bold</b>"), std::string::npos);
}

TEST(HtmlPageTest, SelfContainedAndEscaped) {
  HtmlPage page(kScript);
  page.AddSubtitle(kImg);
  page.AddSection("s1\"x", kScript, "<p>body</p>");
  const std::string html = page.Render();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  // Nothing from the strings became markup, and nothing external is named.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("http:"), std::string::npos);
  EXPECT_EQ(html.find("https:"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("id=\"s1&quot;x\""), std::string::npos);
  EXPECT_NE(html.find("<p>body</p>"), std::string::npos);
  EXPECT_NE(html.find("</html>\n"), std::string::npos);
}

}  // namespace
}  // namespace alloctrace::charts
