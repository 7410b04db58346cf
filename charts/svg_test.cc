#include "alloctrace/charts/svg.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/string_test_util.h"
#include "gtest/gtest.h"

namespace alloctrace::charts {
namespace {

constexpr char kScript[] = "<script>alert(1)</script>";
constexpr char kImg[] = "\"><img src=x onerror=alert(1)>";

// Checks that every element opened is closed in order (self-closing ones
// aside) and that no '<' or '>' stray outside a tag: the markup is well
// formed as XML, so text that came from a name did not become markup.
::testing::AssertionResult WellFormed(const std::string& s) {
  std::vector<std::string> open;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '>') return ::testing::AssertionFailure() << "stray > at " << i;
    if (s[i] != '<') {
      ++i;
      continue;
    }
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unclosed < at " << i;
    std::string tag = s.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) {
      return ::testing::AssertionFailure() << "< inside a tag at " << i;
    }
    i = end + 1;
    if (tag.back() == '/') continue;
    const bool closing = tag[0] == '/';
    std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" /", 1) - (closing ? 1 : 0));
    if (!closing) {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return ::testing::AssertionFailure()
             << "</" << name << "> closes <" << (open.empty() ? "" : open.back()) << ">";
    } else {
      open.pop_back();
    }
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> not closed";
  return ::testing::AssertionSuccess();
}

void ExpectSafe(const std::string& svg) {
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_EQ(svg.find("http:"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
}

TEST(FormatValueTest, UnitsAndSuffixes) {
  EXPECT_EQ(FormatValue(0, Unit::kBytes), "0 B");
  EXPECT_EQ(FormatValue(512, Unit::kBytes), "512 B");
  EXPECT_EQ(FormatValue(1536, Unit::kBytes), "1.5 KiB");
  EXPECT_EQ(FormatValue(3 * 1024 * 1024, Unit::kBytes), "3 MiB");
  EXPECT_EQ(FormatValue(1.25 * 1024 * 1024 * 1024, Unit::kBytes), "1.25 GiB");
  EXPECT_EQ(FormatValue(60000, Unit::kCount), "60k");
  EXPECT_EQ(FormatValue(2500000, Unit::kCount), "2.5M");
  EXPECT_EQ(FormatValue(7, Unit::kCount), "7");
  EXPECT_EQ(FormatValue(12.5, Unit::kNanoseconds), "12.5 ns");
  EXPECT_EQ(FormatValue(1500, Unit::kNanoseconds), "1.5 \xC2\xB5s");
  EXPECT_EQ(FormatValue(2, Unit::kRatio), "2x");
  EXPECT_EQ(FormatValue(1.254, Unit::kRatio), "1.25x");
  EXPECT_EQ(FormatValue(NAN, Unit::kRatio), "n/a");
}

TEST(NiceTicksTest, CoverTheRangeInNiceSteps) {
  EXPECT_EQ(NiceTicks(0, 100, 6, Unit::kPlain), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  const std::vector<double> t = NiceTicks(3.7, 97.2, 6, Unit::kPlain);
  EXPECT_LE(t.front(), 3.7);
  EXPECT_GE(t.back(), 97.2);
  EXPECT_EQ(t[1] - t[0], 20);
  // Bytes step in the binary unit: 0, 0.5 MiB, 1 MiB, 1.5 MiB for 1.1 MiB.
  const std::vector<double> b = NiceTicks(0, 1.1 * 1024 * 1024, 6, Unit::kBytes);
  EXPECT_EQ(b, (std::vector<double>{0, 0.5 * 1048576, 1048576, 1.5 * 1048576}));
  EXPECT_GE(b.back(), 1.1 * 1024 * 1024);
  // Whole objects only, and a flat range still gets an axis.
  EXPECT_EQ(NiceTicks(0, 3, 10, Unit::kCount), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_GE(NiceTicks(5, 5, 5, Unit::kPlain).size(), 2u);
  EXPECT_GE(NiceTicks(0, 0, 5, Unit::kPlain).size(), 2u);
}

TEST(PaletteTest, OkabeItoAndCycles) {
  EXPECT_STREQ(PaletteColor(0), "#000000");
  EXPECT_STREQ(PaletteColor(1), "#E69F00");
  EXPECT_STREQ(PaletteColor(9), PaletteColor(1));
}

TEST(ParetoFrontTest, KeepsThePointsNothingBeats) {
  std::vector<Point> p = {{"a", 10, 100}, {"b", 20, 50}, {"c", 15, 120},
                          {"d", 30, 40},  {"e", 25, 60}, {"f", 10, 90}};
  EXPECT_EQ(ParetoFront(p), (std::vector<size_t>{5, 1, 3}));  // f, b, d
  EXPECT_TRUE(ParetoFront({}).empty());
  EXPECT_EQ(ParetoFront({{"only", 1, 1}}), (std::vector<size_t>{0}));
}

TEST(LineChartTest, OneSeriesAndSixty) {
  LineChart c;
  c.id = "profile";
  c.title = kScript;
  c.x = {"event", Unit::kCount};
  c.y = {"live bytes", Unit::kBytes};
  c.series.push_back({kImg, {0, 1, 2, 3}, {0, 1024, 4096, 512}, true});
  std::string one = RenderLineChart(c);
  ExpectSafe(one);
  EXPECT_EQ(CountSubstrings(one, "class=\"series\""), 1u);
  EXPECT_NE(one.find("id=\"profile\""), std::string::npos);
  EXPECT_NE(one.find("class=\"chart chart-line\""), std::string::npos);
  EXPECT_NE(one.find(">4 KiB<"), std::string::npos);  // a y tick in binary units
  EXPECT_NE(one.find(">0 KiB<"), std::string::npos);  // every tick in the same unit

  for (int i = 1; i < 60; ++i) {
    c.series.push_back(
        {absl::StrCat("pool/boundary/exp/st/single/keep/a-rather-long-variant-number-", i),
         {0, 1, 2, 3},
         {0, 10.0 * i, 20.0 * i, 5.0 * i}});
  }
  const std::string sixty = RenderLineChart(c);
  ExpectSafe(sixty);
  EXPECT_EQ(CountSubstrings(sixty, "class=\"series\""), 60u);
  // Long names are cut in the legend, whole in the tooltip.
  EXPECT_NE(
      sixty.find("<title>pool/boundary/exp/st/single/keep/a-rather-long-variant-number-59</title>"),
      std::string::npos);
  EXPECT_NE(sixty.find("\xE2\x80\xA6</text>"), std::string::npos);
  // Past the palette, series differ by dash pattern too.
  EXPECT_NE(sixty.find("stroke-dasharray"), std::string::npos);
}

TEST(LineChartTest, LongSeriesAreReducedButKeepTheirPeaks) {
  LineChart c;
  c.id = "long";
  Series s;
  s.name = "x";
  for (int i = 0; i < 100000; ++i) {
    s.x.push_back(i);
    s.y.push_back(i == 51234 ? 1e6 : i % 100);
  }
  c.series.push_back(s);
  const std::string svg = RenderLineChart(c);
  ExpectSafe(svg);
  EXPECT_LT(svg.size(), 100000u);
  // The spike's top is at the plot's top edge (y = 12).
  EXPECT_NE(svg.find(" 12L"), std::string::npos);
}

TEST(LineChartTest, NoDataIsANote) {
  LineChart c;
  c.id = "empty";
  const std::string svg = RenderLineChart(c);
  ExpectSafe(svg);
  EXPECT_NE(svg.find("no data"), std::string::npos);
}

TEST(IntervalChartTest, ErrorBarsTiesAndFailures) {
  IntervalChart c;
  c.id = "speed";
  c.x = {"ns/op", Unit::kNanoseconds};
  c.highlight_label = "tied with the fastest";
  c.reference = 11;
  c.reference_label = "fastest's upper bound";
  c.rows.push_back({"slab", {{0, 10, 9, 11, true}}, true, "", "tied"});
  c.rows.push_back({kScript, {{0, 10.5, 10, 12, true}}, true, "", "tied"});
  c.rows.push_back({"malloc", {{0, 30, 28, 33, true}}, false, "", ""});
  c.rows.push_back({kImg, {}, false, "FAILED: 2 of 10 runs: signal 11 <SIGSEGV>", ""});
  const std::string svg = RenderIntervalChart(c);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "class=\"dot\""), 3u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"ci\""), 3u);
  EXPECT_EQ(CountSubstrings(svg, "<rect class=\"band\""), 3u);  // two rows and the legend's
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);
  EXPECT_NE(svg.find("FAILED: 2 of 10 runs: signal 11 &lt;SIGSEGV&gt;"), std::string::npos);
}

TEST(IntervalChartTest, SixtyRowsSeveralSeries) {
  IntervalChart c;
  c.id = "effects";
  c.x = {"ns/op", Unit::kNanoseconds};
  c.series_names = {"lin", "exp"};
  for (int i = 0; i < 60; ++i) {
    c.rows.push_back({absl::StrCat("pool/simple/*/st/stack/free number ", i),
                      {{0, 10.0 + i, 9.0 + i, 11.0 + i, true}, {1, 20.0 + i, 0, 0, false}},
                      false,
                      "",
                      ""});
  }
  const std::string svg = RenderIntervalChart(c);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "class=\"dot\""), 120u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"ci\""), 60u);
  EXPECT_NE(svg.find("class=\"legend\""), std::string::npos);
}

TEST(ScatterChartTest, MarksTheParetoFront) {
  ScatterChart c;
  c.id = "pareto";
  c.x = {"ns/op", Unit::kNanoseconds};
  c.y = {"peak RSS", Unit::kBytes};
  c.points = {{"slab", 10, 1e6}, {"malloc", 30, 0.9e6}, {kScript, 20, 2e6}, {"keep", 8, 5e6}};
  const std::string svg = RenderScatterChart(c);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "class=\"dot\""), 1u);         // off the front
  EXPECT_EQ(CountSubstrings(svg, "class=\"dot pareto\""), 3u);  // keep, slab, malloc
  EXPECT_NE(svg.find("class=\"pareto-line\""), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
}

TEST(HeatMapTest, CellsColoursAndMissing) {
  HeatMap m;
  m.id = "heat";
  m.rows = {"simple_map", kImg};
  m.cols = {"slab", "malloc", kScript};
  m.values = {{4, 1, 0.25}, {2, 1, NAN}};
  m.value_label = "speed-up vs malloc";
  const std::string svg = RenderHeatMap(m);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "class=\"cell\""), 5u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"cell missing\""), 1u);
  EXPECT_NE(svg.find("fill=\"#f7f7f7\""), std::string::npos);  // 1x is neutral
  EXPECT_NE(svg.find("fill=\"#542788\""), std::string::npos);  // 4x: the far end
  EXPECT_NE(svg.find("fill=\"#b35806\""), std::string::npos);  // 0.25x: the other end
}

TEST(BarChartTest, BarsWithValuesAndRotatedLabels) {
  BarChart c;
  c.id = "sizes";
  c.y = {"allocations", Unit::kCount};
  for (int i = 0; i < 20; ++i)
    c.bars.push_back({absl::StrCat(1 << i, "..", (2 << i) - 1), 100.0 * i, ""});
  c.bars.push_back({kScript, 5, kImg});
  const std::string svg = RenderBarChart(c);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "class=\"bar\""), 21u);
  EXPECT_NE(svg.find("rotate(-50)"), std::string::npos);
}

TEST(SpanChartTest, CapsRowsAndSaysSo) {
  SpanChart c;
  c.id = "arenas";
  c.x = {"event", Unit::kCount};
  c.max_rows = 10;
  c.spans.push_back({"global", 0, 1000, true, true, ""});
  for (int i = 1; i < 25; ++i)
    c.spans.push_back({absl::StrCat("arena ", i), i * 10.0, i * 30.0, false, false, kScript});
  const std::string svg = RenderSpanChart(c);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "class=\"span\""), 10u);
  EXPECT_NE(svg.find("Showing 10 of 25."), std::string::npos);
}

TEST(SmallMultiplesTest, WrapsPanels) {
  const std::string html = SmallMultiples({"<figure>a</figure>", "<figure>b</figure>"}, 400);
  EXPECT_TRUE(WellFormed(html));
  EXPECT_NE(html.find("class=\"multiples\" style=\"--panel:400px\""), std::string::npos);
}

}  // namespace
}  // namespace alloctrace::charts

namespace alloctrace::charts {
namespace {

TEST(LogAxisTest, DecadesAndNiceSteps) {
  IntervalChart c;
  c.id = "log";
  c.x = {"ns", Unit::kNanoseconds};
  c.x.log = true;
  c.rows.push_back({"fast", {{0, 12, 11, 13, true}}, false, "", ""});
  c.rows.push_back({"slow", {{0, 40000, 39000, 41000, true}}, false, "", ""});
  const std::string svg = RenderIntervalChart(c);
  // Over more than three decades: ticks at powers of ten only.
  EXPECT_NE(svg.find(">10 ns<"), std::string::npos);
  EXPECT_NE(svg.find(">100 \xC2\xB5s<"), std::string::npos);
  EXPECT_EQ(svg.find(">20 ns<"), std::string::npos);
  // Over one decade, 1-2-5 steps.
  c.rows[1].marks[0] = {0, 60, 55, 65, true};
  const std::string narrow = RenderIntervalChart(c);
  EXPECT_NE(narrow.find(">20 ns<"), std::string::npos);
  EXPECT_NE(narrow.find(">50 ns<"), std::string::npos);
  EXPECT_NE(narrow.find(">100 ns<"), std::string::npos);
  // A value at or below zero cannot go on a log axis: a linear one instead.
  c.rows[1].marks[0] = {0, 60, 0, 65, true};
  const std::string linear = RenderIntervalChart(c);
  EXPECT_NE(linear.find(">0 ns<"), std::string::npos);
}

}  // namespace
}  // namespace alloctrace::charts

namespace alloctrace::charts {
namespace {

// The x of every element of `svg` with `prefix` (e.g. "<circle class=\"dot")
// read from the attribute `attr`.
std::vector<double> Attr(const std::string& svg, const std::string& prefix,
                         const std::string& attr) {
  std::vector<double> out;
  for (size_t at = svg.find(prefix); at != std::string::npos; at = svg.find(prefix, at + 1)) {
    const size_t end = svg.find('>', at);
    const size_t a = svg.find(" " + attr + "=\"", at);
    if (a == std::string::npos || a > end) continue;
    out.push_back(std::stod(svg.substr(a + attr.size() + 3)));
  }
  return out;
}

TEST(FrameLimitTest, CutsTheFewFarOnes) {
  // Seven contenders and two policies 40x slower: the frame ends at the seventh.
  EXPECT_EQ(FrameLimit({12, 13, 14, 15, 17, 20, 24, 600, 650}), 24);
  // A steady spread has no gap: everything stays.
  EXPECT_TRUE(std::isinf(FrameLimit({10, 20, 40, 80, 160, 320})));
  // A gap near the smallest is no reason to cut (within `spread` x of it).
  EXPECT_TRUE(std::isinf(FrameLimit({10, 11, 12, 35, 36})));
  // Most values past the gap: they are the main group, nothing is cut.
  EXPECT_TRUE(std::isinf(FrameLimit({10, 50, 51, 52, 53, 54})));
  // The outliers may be a third of the values, not more: the later gap cuts.
  EXPECT_EQ(FrameLimit({10, 12, 15, 500, 20000}), 500);
  // Too few values, and values that cannot be framed.
  EXPECT_TRUE(std::isinf(FrameLimit({10, 400})));
  EXPECT_TRUE(std::isinf(FrameLimit({})));
  EXPECT_EQ(FrameLimit({NAN, -1, 0, 10, 11, 12, 1000}), 12);
}

TEST(PlaceLabelsTest, NoOverlapEvenWhenPointsCoincide) {
  std::vector<std::pair<double, double>> anchors;
  for (int i = 0; i < 40; ++i) anchors.emplace_back(200 + (i % 4), 100 + (i % 3));
  anchors.emplace_back(20, 20);  // alone: right of its point
  const std::vector<double> widths(anchors.size(), 14);
  const LabelBox bounds{0, 0, 400, 200};
  const std::vector<LabelSpot> spots = PlaceLabels(anchors, widths, 11, 5, bounds);
  ASSERT_EQ(spots.size(), anchors.size());
  for (size_t i = 0; i < spots.size(); ++i) {
    const LabelBox& a = spots[i].box;
    EXPECT_TRUE(spots[i].placed) << i;
    EXPECT_GE(a.x0, bounds.x0);
    EXPECT_LE(a.x1, bounds.x1);
    EXPECT_GE(a.y0, bounds.y0);
    EXPECT_LE(a.y1, bounds.y1);
    for (size_t j = 0; j < i; ++j) {
      const LabelBox& b = spots[j].box;
      EXPECT_FALSE(a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) << i << " " << j;
    }
    for (const auto& [x, y] : anchors) {
      EXPECT_FALSE(x > a.x0 - 5 && x < a.x1 + 5 && y > a.y0 - 5 && y < a.y1 + 5 &&
                   std::hypot(std::clamp(x, a.x0, a.x1) - x, std::clamp(y, a.y0, a.y1) - y) < 5)
          << i;
    }
  }
  // The first of the crowd and the lone point sit right by their marks.
  EXPECT_FALSE(spots[0].leader);
  EXPECT_FALSE(spots.back().leader);
  EXPECT_EQ(spots.back().box.x0, 20 + 5 + 2);
  // The crowd pushed some labels out to a ring with leader lines.
  EXPECT_TRUE(spots[39].leader);
}

TEST(IntervalChartTest, FramedOnTheContendersOutliersPastABreak) {
  IntervalChart c;
  c.id = "speed";
  c.x = {"ns/op", Unit::kNanoseconds, /*include_zero=*/false};
  c.x.frame = true;
  c.x.log_if_wide = true;
  for (int i = 0; i < 7; ++i) {
    c.rows.push_back({absl::StrCat("p", i),
                      {{0, 12.0 + 2 * i, 11.0 + 2 * i, 13.0 + 2 * i, true}},
                      false,
                      "",
                      ""});
  }
  c.rows.push_back({"boost_pool", {{0, 5500, 5400, 5600, true}}, false, "", ""});
  c.rows.push_back({kScript, {{0, 600, 580, 620, true}}, false, "", ""});
  const std::string svg = RenderIntervalChart(c);
  ExpectSafe(svg);
  // Nine dots, two of them off the scale with their values written.
  EXPECT_EQ(CountSubstrings(svg, "class=\"dot"), 9u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"dot offscale\""), 2u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"break\""), 2u);
  EXPECT_NE(svg.find(">5.5 \xC2\xB5s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">600 ns</text>"), std::string::npos);
  EXPECT_NE(svg.find("Off the scale (past the break, value written): boost_pool, &lt;script&gt;"),
            std::string::npos);
  // The scale spans the seven: linear (27/11 < 8), ticks in ns, none in µs.
  EXPECT_EQ(svg.find("log scale"), std::string::npos);
  EXPECT_NE(svg.find(">25 ns<"), std::string::npos);
  EXPECT_EQ(svg.find(">1 \xC2\xB5s<"), std::string::npos);
  // The seven dots spread over most of the plot's width.
  std::vector<double> xs = Attr(svg, "<circle class=\"dot\"", "cx");
  ASSERT_EQ(xs.size(), 7u);
  EXPECT_GT(xs.back() - xs.front(), 0.5 * (c.width - 64 - 130 - 260));
  // Without framing, the same rows take a log axis (5600/11 > 8).
  c.x.frame = false;
  const std::string wide = RenderIntervalChart(c);
  EXPECT_NE(wide.find("ns/op (log scale)"), std::string::npos);
  EXPECT_EQ(wide.find("offscale"), std::string::npos);
}

TEST(ScatterChartTest, EveryPointTaggedAndKeyedOutliersAtTheEdge) {
  ScatterChart c;
  c.id = "pareto";
  c.x = {"ns/op", Unit::kNanoseconds, false};
  c.y = {"peak RSS", Unit::kBytes, false};
  c.x.frame = c.y.frame = true;
  c.x.log_if_wide = c.y.log_if_wide = true;
  // Fourteen policies near 1 MiB and 20 ns, one at 305 MiB, one 40x slower.
  for (int i = 0; i < 14; ++i) {
    c.points.push_back({absl::StrCat("policy-", i), 15.0 + i, (1.0 + 0.02 * i) * 1048576});
  }
  c.points.push_back({"pmr_monotonic", 16, 305.0 * 1048576});
  c.points.push_back({"boost_pool", 800, 1.1 * 1048576});
  const std::string svg = RenderScatterChart(c);
  ExpectSafe(svg);
  EXPECT_EQ(CountSubstrings(svg, "<circle class=\"dot"), 16u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"point-label\""), 16u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"point-key\""), 16u);
  EXPECT_EQ(CountSubstrings(svg, "offscale\""), 2u);
  EXPECT_NE(svg.find("pmr_monotonic: 16 ns, 305 MiB<"), std::string::npos);
  EXPECT_NE(svg.find("Off the scale (in the grey zone at the plot&#39;s edge; figures in the key): "
                     "pmr_monotonic, boost_pool."),
            std::string::npos);
  // No y tick reaches toward 305 MiB: the scale is the fourteen's.
  EXPECT_EQ(svg.find(">100 MiB<"), std::string::npos);
  // No point on an axis line: every dot right of the y axis (x = 78) and
  // above the x axis (y = 354).
  for (const double x : Attr(svg, "<circle class=\"dot", "cx")) EXPECT_GT(x, 78 + 3.5);
  for (const double y : Attr(svg, "<circle class=\"dot", "cy")) EXPECT_LT(y, 354 - 3.5);
  // Sixteen keys fit beside a 400-pixel plot; sixty go under it.
  EXPECT_NE(svg.find("Key (ringed: Pareto front):"), std::string::npos);
  for (int i = 0; i < 44; ++i) c.points.push_back({absl::StrCat("more-", i), 20.0 + i, 2e6});
  const std::string sixty = RenderScatterChart(c);
  ExpectSafe(sixty);
  EXPECT_EQ(CountSubstrings(sixty, "class=\"point-label\""), 60u);
  EXPECT_NE(sixty.find("Key (ringed: on the Pareto front"), std::string::npos);
}

TEST(IntervalChartTest, FineByteTicksStayDistinct) {
  IntervalChart c;
  c.id = "rss";
  c.x = {"peak RSS", Unit::kBytes, /*include_zero=*/false};
  c.rows.push_back({"a", {{0, 1.1445 * 1048576}}, false, "", ""});
  c.rows.push_back({"b", {{0, 1.1605 * 1048576}}, false, "", ""});
  const std::string svg = RenderIntervalChart(c);
  // Steps of 0.005 MiB: three decimals, not "1.15 MiB" twice.
  EXPECT_NE(svg.find(">1.145 MiB<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1.150 MiB<"), std::string::npos);
  EXPECT_EQ(CountSubstrings(svg, ">1.15 MiB<"), 0u);
}

TEST(LineChartTest, TheLegendNamesTheLinesDrawn) {
  LineChart c;
  c.id = "profile";
  c.series.push_back({"ideal", {0, 1}, {0, 5}, true});
  c.series.push_back({"empty", {}, {}});
  c.series.push_back({"malloc", {0, 1}, {0, 6}});
  const std::string svg = RenderLineChart(c);
  EXPECT_EQ(CountSubstrings(svg, "class=\"series\""), 2u);
  EXPECT_EQ(CountSubstrings(svg, "class=\"legend-entry\""), 2u);
  EXPECT_EQ(svg.find(">empty<"), std::string::npos);
  // A shared reach: the axis runs to 100 whatever the data.
  c.y.reach = 100;
  EXPECT_NE(RenderLineChart(c).find(">100<"), std::string::npos);
}

}  // namespace
}  // namespace alloctrace::charts
