#include "alloctrace/inspect/trace_html.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/string_test_util.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/format/hostile_trace.h"
#include "alloctrace/inspect/trace_stats.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

class TraceHtmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/hostile.trace");
    ASSERT_TRUE(WriteHostileTrace(path_).ok());
    absl::StatusOr<TraceStats> st = ComputeTraceStats(path_);
    ASSERT_TRUE(st.ok()) << st.status();
    stats_ = *std::move(st);
  }
  std::string path_;
  TraceStats stats_;
};

TEST_F(TraceHtmlTest, LiveCourseKeepsThePeakAndCoversEveryEvent) {
  ASSERT_FALSE(stats_.live_course.empty());
  EXPECT_LE(stats_.live_course.size(), 2 * TraceStats::kLiveCoursePoints);
  uint64_t peak_bytes = 0, peak_objects = 0, prev = 0;
  for (const LivePoint& p : stats_.live_course) {
    EXPECT_GT(p.end_event, prev);
    prev = p.end_event;
    peak_bytes = std::max(peak_bytes, p.live_bytes);
    peak_objects = std::max(peak_objects, p.live_objects);
  }
  EXPECT_EQ(prev, stats_.events);
  EXPECT_EQ(peak_bytes, stats_.peak_live_bytes);
  EXPECT_EQ(peak_objects, stats_.peak_live_objects);
}

TEST_F(TraceHtmlTest, ArenaLifetimes) {
  ASSERT_EQ(stats_.arenas.count(1), 1u);
  ASSERT_EQ(stats_.arenas.count(2), 1u);
  const ArenaStats& a1 = stats_.arenas.at(1);
  const ArenaStats& a2 = stats_.arenas.at(2);
  EXPECT_TRUE(a1.destroyed);
  EXPECT_FALSE(a2.destroyed);
  EXPECT_EQ(a1.first_event, 0u);  // created first
  EXPECT_EQ(a2.first_event, 1u);
  EXPECT_LT(a1.last_event, a2.last_event);
  EXPECT_GT(a1.last_event, stats_.events / 3);
  EXPECT_LT(a2.last_event, stats_.events);
}

TEST_F(TraceHtmlTest, ChartsPresentAndEverythingEscaped) {
  const std::string html = FormatTraceStatsHtml(stats_, std::string("dir/") + kHostileImg);
  for (const char* id : {"id=\"live-bytes\"", "id=\"live-objects\"", "id=\"size-histogram\"",
                         "id=\"arena-lifetimes\"", "id=\"arena-table\"", "id=\"facts\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  EXPECT_EQ(CountSubstrings(html, "class=\"series\""), 2u);
  EXPECT_EQ(CountSubstrings(html, "class=\"bar\""), stats_.size_histogram.size());
  EXPECT_EQ(CountSubstrings(html, "class=\"span\""), stats_.arenas.size());
  // No string from the trace became markup.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b "), std::string::npos);
  EXPECT_EQ(html.find("http:"), std::string::npos);
  EXPECT_NE(html.find("<title>alloctrace trace: dir/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"
                      "</title>\n<style>"),
            std::string::npos);
  // They are shown as text.
  EXPECT_NE(html.find(charts::Escape(kHostileScript)), std::string::npos);
  EXPECT_NE(html.find(charts::Escape(kHostileImg)), std::string::npos);
  EXPECT_NE(html.find(charts::Escape(kHostileTitle)), std::string::npos);
  EXPECT_NE(html.find("&#39;single&#39; &amp; &quot;double&quot;"), std::string::npos);
}

}  // namespace
}  // namespace alloctrace
