#include "alloctrace/replayer/reports/report_html.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/string_test_util.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/format/hostile_trace.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/summary.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// The text from `from` to the next `to` after it (empty if either is missing).
std::string Between(const std::string& s, const std::string& from, const std::string& to) {
  const size_t a = s.find(from);
  if (a == std::string::npos) return "";
  const size_t b = s.find(to, a);
  return b == std::string::npos ? "" : s.substr(a, b - a);
}

class ReportHtmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/hostile.trace");
    ASSERT_TRUE(WriteHostileTrace(path).ok());
    absl::StatusOr<ReplayProgram> p = LoadReplayProgram(path);
    ASSERT_TRUE(p.ok()) << p.status();
    program_ = *std::move(p);
    program_.path = kHostileImg;  // as if the user named the file so
  }

  static constexpr int kRounds = 12;

  // Runs as the replayer would collect them: one per round, a cold and a
  // warm pass each around `ns` per op, a rising RSS course.
  static PolicyRuns Runs(const std::string& name, double ns, int64_t rss) {
    PolicyRuns pr;
    pr.name = name;
    // The roles MeasureTrace gives glibc malloc and bump.
    if (name == "malloc") pr.role = Role::kReference;
    if (name == "bump") pr.role = Role::kFloor;
    pr.family = allocators::Family::kArticle;
    for (int i = 0; i < kRounds; ++i) {
      RunRecord rec;
      rec.round = i;
      RunResult& r = rec.result;
      r.ops = 10000;
      const double seconds = (ns + 0.05 * ((i % 5) - 2)) * r.ops / 1e9;
      r.passes = {PassFigures{seconds * 1.2, seconds * 1.2}, PassFigures{seconds, seconds}};
      r.seconds = seconds * 1.2;
      r.peak_rss = rss;
      for (int k = 0; k < 50; ++k) r.rss_course.push_back(rss * k / 49);
      pr.runs.push_back(rec);
    }
    pr.attempts = kRounds;
    return pr;
  }

  static ReportContext Context() {
    ReportContext ctx;
    ctx.machine = "test machine <b>";
    ctx.date = "2026-11-22";
    ctx.touch = Touch::kFirst;
    return ctx;
  }

  TraceReport Summarized(const std::vector<PolicyRuns>& runs) {
    MeasuredTrace m;
    m.trace = TraceFactsOf(program_);
    m.policies = runs;
    m.rounds = kRounds;
    return Summarize(m, Context());
  }

  std::vector<PolicyRuns> AllRuns() {
    std::vector<PolicyRuns> runs;
    runs.push_back(Runs("malloc", 30, 200000));
    runs.push_back(Runs("slab", 10, 150000));
    runs.back().family = allocators::Family::kOurs;    // first in the order among the tied
    runs.push_back(Runs(kHostileScript, 10, 400000));  // tied with slab (ratio 1 by round)
    runs.push_back(Runs("bump", 3, 64 << 20));
    runs.push_back(Runs("pool/simple/lin/st/stack/free", 20, 180000));
    runs.push_back(Runs("pool/simple/exp/st/stack/free", 15, 190000));
    runs.push_back(Runs("pool/boundary/exp/st/stack/free", 14, 195000));
    PolicyRuns failed;
    failed.name = kHostileTitle;
    failed.family = allocators::Family::kExternal;
    failed.attempts = 3;
    failed.failed = 3;
    failed.first_error = "run 1: crashed: <signal 11>";
    runs.push_back(failed);
    return runs;
  }

  // The page --format=html writes for `reports` of `programs`.
  static std::string Html(const std::vector<TraceReport>& reports,
                          const std::vector<ReplayProgram>& programs,
                          const std::string& command_line) {
    const ReportContext ctx = Context();
    return HtmlReport(ReportInput{reports, programs, ctx, command_line});
  }

  ReplayProgram program_;
};

TEST_F(ReportHtmlTest, LiveCourseReachesTheIdeal) {
  std::vector<double> x, bytes;
  LiveCourse(program_, 500, &x, &bytes);
  ASSERT_FALSE(x.empty());
  EXPECT_LE(x.size(), 501u);
  EXPECT_EQ(x.back(), static_cast<double>(program_.ops.size()));
  double peak = 0;
  for (const double b : bytes) peak = std::max(peak, b);
  EXPECT_EQ(peak, static_cast<double>(program_.peak_live_bytes));
}

TEST_F(ReportHtmlTest, OneTraceHasEveryChartAndEscapesEverything) {
  const TraceReport report = Summarized(AllRuns());
  const HtmlTrace view = HtmlViewOf(report, program_, Context());
  // slab is fastest, the hostile-named policy's CI overlaps it, malloc's does not.
  ASSERT_GE(view.verdict.fastest.size(), 2u);
  EXPECT_EQ(view.verdict.fastest[0], "slab");
  EXPECT_EQ(view.verdict.fastest[1], kHostileScript);
  EXPECT_EQ(view.verdict.recommended, "slab");
  EXPECT_EQ(view.verdict.smallest_rss, std::vector<std::string>{"slab"});
  EXPECT_EQ(view.interval_kind, "95% CI of the median");

  const std::string html = Html({report}, {program_}, std::string("replayer --out=") + kHostileImg);
  for (const char* id : {"id=\"trace-0\"", "id=\"trace-0-verdict\"", "id=\"trace-0-profile\"",
                         "id=\"trace-0-speed\"", "id=\"trace-0-pareto\"", "id=\"trace-0-table\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("id=\"heatmap\""), std::string::npos);  // one trace: no overview
  // Each dimension compares one pair at most: no effects panel, a note.
  EXPECT_EQ(html.find("id=\"trace-0-effects-"), std::string::npos);
  EXPECT_NE(html.find("Too few article policies"), std::string::npos);
  // Profile: the trace's live bytes, slab (recommended, fastest, smallest)
  // and malloc; the four other contenders in panels of their own, each
  // against the ideal.
  const std::string profile = Between(html, "id=\"trace-0-profile\"", "</figure>");
  EXPECT_EQ(CountSubstrings(profile, "class=\"series\""), 3u);
  EXPECT_EQ(CountSubstrings(profile, "class=\"legend-entry\""), 3u);
  EXPECT_NE(html.find("The other 4 policies' RSS"), std::string::npos);
  EXPECT_EQ(CountSubstrings(html, "class=\"series\""), 3u + 4 * 2);
  // One dot per ranked policy (bump included) in the speed chart, plus the
  // effects panels' marks; 7 ranked policies have ranges.
  EXPECT_GE(CountSubstrings(html, "class=\"ci\""), 7u);
  EXPECT_NE(html.find("class=\"dot pareto\""), std::string::npos);
  EXPECT_GE(CountSubstrings(html, "<tr class=\"tied\">"), 2u);
  EXPECT_NE(html.find("<tr class=\"failed\">"), std::string::npos);
  EXPECT_NE(html.find("FAILED"), std::string::npos);
  // Nothing from the trace, a policy name or the command line became markup.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<b "), std::string::npos);
  EXPECT_EQ(html.find("http:"), std::string::npos);
  EXPECT_NE(html.find(charts::Escape(kHostileScript)), std::string::npos);
  EXPECT_NE(html.find(charts::Escape(kHostileImg)), std::string::npos);
  EXPECT_NE(html.find(charts::Escape(kHostileTitle)), std::string::npos);
  EXPECT_NE(html.find("crashed: &lt;signal 11&gt;"), std::string::npos);
  EXPECT_NE(html.find("95% CI of the median"), std::string::npos);
}

TEST_F(ReportHtmlTest, TheVerdictSaysEachThingOnce) {
  const TraceReport report = Summarized(AllRuns());
  const std::string html = Html({report}, {program_}, "");
  const std::string verdict = Between(html, "id=\"trace-0-verdict\"", "</div>");
  // slab is recommended, the fastest and the smallest: named once; the
  // policy tied with it once; malloc's speed-up figure once; the rule once.
  EXPECT_EQ(CountSubstrings(verdict, "slab"), 1u) << verdict;
  EXPECT_EQ(CountSubstrings(verdict, charts::Escape(kHostileScript)), 1u);
  EXPECT_EQ(CountSubstrings(verdict, "the speed of glibc malloc"), 1u);
  EXPECT_EQ(CountSubstrings(html, ReportRule(report, Context()).substr(0, 40)), 1u);
  EXPECT_NE(verdict.find("Recommended: slab</strong>, the fastest and the smallest peak RSS"),
            std::string::npos);
  // The statistics' sentence repeats it all: not on the page.
  EXPECT_EQ(html.find(ReportSentence(report, Context()).substr(0, 30)), std::string::npos);
}

// A policy tied with the recommended one and also the smallest is named
// once, in the tied line, with its RSS role beside it (as on simple_map:
// slab/st/single recommended, slab/st/stack tied and a page smaller).
TEST_F(ReportHtmlTest, ATiedPolicyThatIsAlsoTheSmallestIsNamedOnce) {
  TraceReport report = Summarized(AllRuns());
  report.verdict.fastest = {"slab", "pool/simple/exp/st/stack/free"};
  report.verdict.recommended = "slab";
  report.verdict.smallest_rss = {"pool/simple/exp/st/stack/free"};
  const std::string html = Html({report}, {program_}, "");
  const std::string verdict = Between(html, "id=\"trace-0-verdict\"", "</div>");
  EXPECT_EQ(CountSubstrings(verdict, "pool/simple/exp/st/stack/free"), 1u) << verdict;
  EXPECT_NE(verdict.find("pool/simple/exp/st/stack/free (the smallest peak RSS"), std::string::npos)
      << verdict;
  EXPECT_EQ(verdict.find("Smallest peak RSS:"), std::string::npos) << verdict;
}

// A keep pool 5% faster than slab, round by round: the fastest, passed
// over; the page says why, without naming it twice.
TEST_F(ReportHtmlTest, AFasterPolicyThatNeverFreesIsSaidWhyNotOnce) {
  std::vector<PolicyRuns> runs = AllRuns();
  PolicyRuns keep = Runs("pool/simple/exp/st/single/keep", 9.5, 150000);
  keep.frees_blocks = false;
  runs.push_back(keep);
  const TraceReport report = Summarized(runs);
  ASSERT_EQ(report.verdict.fastest[0], "pool/simple/exp/st/single/keep");
  ASSERT_EQ(report.verdict.passed_over_name, "pool/simple/exp/st/single/keep");
  const std::string html = Html({report}, {program_}, "");
  const std::string verdict = Between(html, "id=\"trace-0-verdict\"", "</div>");
  EXPECT_EQ(CountSubstrings(verdict, "pool/simple/exp/st/single/keep"), 1u) << verdict;
  EXPECT_NE(verdict.find("It is not recommended: it never frees its blocks"), std::string::npos)
      << verdict;
  EXPECT_NE(verdict.find("faster than the fastest policy that frees; it is 1.05x [1.05x, "
                         "1.05x] as fast."),
            std::string::npos)
      << verdict;
}

TEST_F(ReportHtmlTest, SeveralTracesGetTheHeatMapAndTable) {
  const TraceReport a = Summarized(AllRuns());
  TraceReport b = a;
  b.trace.path = "second.trace";
  const std::string html = Html({a, b}, {program_, program_}, "");
  EXPECT_NE(html.find("id=\"overview\""), std::string::npos);
  EXPECT_NE(html.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(html.find("id=\"overview-table\""), std::string::npos);
  EXPECT_NE(html.find("id=\"trace-1-profile\""), std::string::npos);
  // 2 traces x 6 contenders (bump is not one).
  EXPECT_EQ(CountSubstrings(html, "class=\"cell\""), 12u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST_F(ReportHtmlTest, SixtyPoliciesStayReadable) {
  std::vector<PolicyRuns> runs = {Runs("malloc", 30, 200000)};
  const char* storage[] = {"simple", "boundary", "ordered"};
  const char* growth[] = {"lin", "exp"};
  const char* threading[] = {"st", "mt"};
  const char* holding[] = {"stack", "single"};
  const char* del[] = {"free", "keep"};
  int i = 0;
  for (auto s : storage)
    for (auto g : growth)
      for (auto t : threading)
        for (auto h : holding)
          for (auto d : del) {
            runs.push_back(Runs(absl::StrCat("pool/", s, "/", g, "/", t, "/", h, "/", d),
                                8 + 0.7 * i, 100000 + 3000 * (i % 7)));
            ++i;
          }
  const TraceReport report = Summarized(runs);
  const std::string html = Html({report}, {program_}, "");
  // The profile draws the policies the verdict names and malloc besides the
  // trace; the others, one panel each, on demand.
  const std::string profile = Between(html, "id=\"trace-0-profile\"", "</figure>");
  const size_t drawn = CountSubstrings(profile, "class=\"series\"");
  EXPECT_GE(drawn, 3u);
  EXPECT_LE(drawn, 5u);
  EXPECT_EQ(CountSubstrings(profile, "class=\"legend-entry\""), drawn);
  EXPECT_NE(html.find(absl::StrCat("The other ", 49 - (drawn - 1), " policies")),
            std::string::npos);
  EXPECT_EQ(CountSubstrings(html, "class=\"series\""), drawn + 2 * (49 - (drawn - 1)));
  // Every point of the scatter tagged and keyed.
  const std::string pareto = Between(html, "id=\"trace-0-pareto\"", "</figure>");
  EXPECT_EQ(CountSubstrings(pareto, "class=\"point-label\""), 49u);
  EXPECT_EQ(CountSubstrings(pareto, "class=\"point-key\""), 49u);
  // Every dimension has its pair of panels.
  for (const char* d : {"storage", "growth", "threading", "holding", "delete"}) {
    EXPECT_NE(html.find(absl::StrCat("id=\"trace-0-effects-", d, "-speed\"")), std::string::npos)
        << d;
  }
}

}  // namespace
}  // namespace alloctrace
