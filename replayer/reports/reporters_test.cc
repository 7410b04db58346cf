#include "alloctrace/replayer/reports/reporters.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/report_html.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

MeasuredTrace Measured(const ReplayProgram& program, std::vector<PolicyRuns> runs, int rounds) {
  MeasuredTrace m;
  m.trace = TraceFactsOf(program);
  m.policies = std::move(runs);
  m.rounds = rounds;
  return m;
}

TEST(ReportersTest, EveryFormatIsFoundByItsNameAndNothingElse) {
  EXPECT_EQ(ReportFormatNames(), (std::vector<std::string>{"table", "markdown", "csv", "csv-runs",
                                                           "csv-classes", "json", "html"}));
  for (const std::string& name : ReportFormatNames()) {
    const ReportFormat* f = FindReportFormat(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->name, name);
  }
  EXPECT_EQ(FindReportFormat("xml"), nullptr);
  EXPECT_EQ(FindReportFormat(""), nullptr);
  EXPECT_EQ(ReportFormatList(), "table, markdown, csv, csv-runs, csv-classes, json or html");
}

// --format's help names every format of the table, in its order.
TEST(ReportersTest, TheHelpNamesEveryFormat) {
  const std::string help = ReportFormatHelp();
  EXPECT_EQ(help,
            "table, markdown, csv (one row per policy), csv-runs (one row per run and pass), "
            "csv-classes (one row per class, --per_container), json or html (one "
            "self-contained page with charts)");
  size_t at = 0;
  for (const std::string& name : ReportFormatNames()) {
    at = help.find(name, at);
    ASSERT_NE(at, std::string::npos) << name;
  }
}

// Each entry of the table renders what its format's renderer renders, byte
// for byte; an entry with no renderer listed here fails.
TEST(ReportersTest, EachEntryRendersItsFormat) {
  ReplayProgram program;
  program.path = "empty.trace";
  TraceReport report;
  report.trace.path = "empty.trace";  // no memory ops
  const std::vector<TraceReport> reports = {report};
  const std::vector<ReplayProgram> programs = {program};
  ReportContext ctx;
  ctx.machine = "test";
  const std::string command_line = "replayer empty.trace";
  const ReportInput in{reports, programs, ctx, command_line};
  const std::map<std::string, std::string (*)(const ReportInput&)> renderers = {
      {"table", &TableReport},      {"markdown", &MarkdownReport},      {"csv", &CsvReport},
      {"csv-runs", &CsvRunsReport}, {"csv-classes", &CsvClassesReport}, {"json", &JsonReport},
      {"html", &HtmlReport},
  };
  for (const std::string& name : ReportFormatNames()) {
    const auto it = renderers.find(name);
    ASSERT_NE(it, renderers.end()) << "--format=" << name << " has no renderer listed here";
    const std::string text = FindReportFormat(name)->render(in);
    EXPECT_FALSE(text.empty()) << name;
    EXPECT_EQ(text, it->second(in)) << name;
  }
  EXPECT_EQ(renderers.size(), ReportFormatNames().size());
}

// In the program too, a candidate the race eliminated after a few runs is
// marked, and why is said: its median over those runs may read faster than
// the pick's (a captured python3: jemalloc 0.443 s over 4 runs against
// tcmalloc's 0.467 s over 55).
TEST(ReportersTest, TheInSituTableSaysWhoTheRaceEliminatedAndWhy) {
  InSituSummary s;
  s.argv = {"prog"};
  s.clock = TimingClock::kCpu;
  s.reference = "malloc";
  for (const char* name : {"malloc", "tcmalloc", "jemalloc"}) {
    InSituPolicy p;
    p.name = name;
    p.reference = p.name == "malloc";
    for (int r = 1; r <= (p.name == "jemalloc" ? 4 : 12); ++r) {
      InSituRun run;
      run.round = r;
      run.cpu_s = run.wall_s = p.name == "malloc" ? 1.0 : 0.9;
      p.runs.push_back(run);
    }
    p.attempts = static_cast<int>(p.runs.size());
    p.ranked = p.cpu_s = p.wall_s = Estimate{0.9, 0.85, 0.95, static_cast<int>(p.runs.size())};
    if (p.name == "jemalloc") {
      p.eliminated = true;
      p.stop_reason = "eliminated after 4 runs: 1.05x [1.03, 1.08] slower than tcmalloc";
    }
    s.policies.push_back(p);
  }
  const std::vector<TraceReport> reports;
  const std::vector<ReplayProgram> programs;
  ReportContext ctx;
  const std::string command_line = "replayer --in_situ -- prog";
  ReportInput in{reports, programs, ctx, command_line};
  in.in_situ_only = &s;
  const std::string table = TableReport(in);
  EXPECT_NE(table.find("  4x\n"), std::string::npos) << table;
  EXPECT_NE(table.find("x eliminated by the race in the program"), std::string::npos) << table;
  EXPECT_NE(table.find("jemalloc: eliminated after 4 runs: 1.05x [1.03, 1.08] slower than "
                       "tcmalloc"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("tcmalloc: eliminated"), std::string::npos) << table;
  const std::string json = JsonReport(in);
  EXPECT_NE(json.find("\"eliminated\": true, \"stop\": \"eliminated after 4 runs: 1.05x"),
            std::string::npos)
      << json;
  // Markdown and HTML say it in the status column, CSV in two columns.
  const std::string md = MarkdownReport(in);
  EXPECT_NE(md.find("| 4 | eliminated after 4 runs: 1.05x [1.03, 1.08] slower than tcmalloc |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("| 12 | eliminated"), std::string::npos) << md;
  const std::string csv = CsvReport(in);
  EXPECT_NE(csv.find(",tied_fastest,reference,eliminated,stop\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1,\"eliminated after 4 runs: 1.05x [1.03, 1.08] slower than tcmalloc\"\n"),
            std::string::npos)
      << csv;
  const size_t tcmalloc_row = csv.find("\ntcmalloc,");
  ASSERT_NE(tcmalloc_row, std::string::npos) << csv;
  const std::string row =
      csv.substr(tcmalloc_row + 1, csv.find('\n', tcmalloc_row + 1) - tcmalloc_row);
  EXPECT_EQ(row.substr(row.size() - 4), ",0,\n") << row;
  const std::string html = HtmlReport(in);
  EXPECT_NE(html.find("<td>4</td><td>eliminated after 4 runs: 1.05x [1.03, 1.08] slower than "
                      "tcmalloc</td>"),
            std::string::npos);
}

// --in_situ alone: a recommendation from fewer than 3 rounds paired with
// the reference is PROVISIONAL in every format, as the replay's verdict
// (--in_situ_budget=5 printed slab/mt/stack at "1.12x (n = 2: ...)" and
// nothing else); from 12 steady rounds it is not.
TEST(ReportersTest, AnInSituVerdictFromTooFewRoundsIsProvisionalInEveryFormat) {
  auto summary = [](int rounds) {
    InSituSummary s;
    s.argv = {"prog"};
    s.clock = TimingClock::kCpu;
    s.reference = "std";
    for (const char* name : {"std", "slab/mt/stack"}) {
      InSituPolicy p;
      p.name = name;
      p.reference = p.name == "std";
      // The budget spent in the last round before the reference's turn.
      for (int r = 1; r <= rounds - (p.reference ? 1 : 0); ++r) {
        InSituRun run;
        run.round = r;
        run.cpu_s = run.wall_s = (p.reference ? 1.12 : 1.0) * (1 + 0.001 * r);
        p.runs.push_back(run);
      }
      p.attempts = static_cast<int>(p.runs.size());
      std::vector<double> cpu;
      for (const InSituRun& run : p.runs) cpu.push_back(run.cpu_s);
      p.ranked = p.cpu_s = p.wall_s = MedianWithCi(cpu);
      s.policies.push_back(p);
    }
    s.policies[1].vs_reference = PairedSlowdown(s.policies[1], s.policies[0], s.clock);
    DecideInSitu(s, "", 0.10);
    return s;
  };
  const std::vector<TraceReport> reports;
  const std::vector<ReplayProgram> programs;
  ReportContext ctx;
  const std::string command_line = "replayer --in_situ -- prog";
  ReportInput in{reports, programs, ctx, command_line};

  const InSituSummary few = summary(3);
  ASSERT_EQ(few.recommended, "slab/mt/stack");
  ASSERT_EQ(FindInSitu(few, "slab/mt/stack")->vs_reference.n, 2);
  in.in_situ_only = &few;
  const std::string rest = "the figures rest on 2 rounds paired with the reference std's (3 make";
  const std::string table = TableReport(in);
  EXPECT_NE(table.find("\n  PROVISIONAL: the figures rest on 2 rounds paired with the"),
            std::string::npos)
      << table;
  EXPECT_NE(MarkdownReport(in).find("\n\n**Provisional:** " + rest), std::string::npos)
      << MarkdownReport(in);
  EXPECT_NE(JsonReport(in).find("\"provisional\": \"" + rest), std::string::npos) << JsonReport(in);
  EXPECT_NE(HtmlReport(in).find("<strong>Provisional:</strong> the figures rest on 2 rounds "
                                "paired with the reference std"),
            std::string::npos);

  const InSituSummary enough = summary(13);
  ASSERT_EQ(enough.recommended, "slab/mt/stack");
  in.in_situ_only = &enough;
  EXPECT_EQ(TableReport(in).find("PROVISIONAL"), std::string::npos) << TableReport(in);
  EXPECT_EQ(MarkdownReport(in).find("Provisional"), std::string::npos);
  EXPECT_NE(JsonReport(in).find("\"provisional\": null"), std::string::npos);
  EXPECT_EQ(HtmlReport(in).find("Provisional:"), std::string::npos);
}

// A policy the race's time limit stopped in its first run (measure.h) has
// no figures: every format shows its row and reason without inventing
// any, and none counts it failed or recommends it.
TEST(ReportersTest, EveryFormatCopesWithAnEliminatedPolicyWithoutRuns) {
  ReplayProgram program;
  program.path = "t.trace";
  program.allocs = 500;
  program.frees = 500;
  program.peak_live_bytes = 1 << 20;
  PolicyRuns malloc;
  malloc.name = "malloc";
  malloc.role = Role::kReference;
  malloc.family = allocators::Family::kBaseline;
  for (int round = 0; round < 5; ++round) {
    RunRecord r;
    r.round = round;
    r.result.ops = 1000;
    PassFigures f;
    f.cpu_seconds = f.wall_seconds = 20e-6 * (1 + 0.01 * round);
    r.result.passes = {f, f};
    r.result.peak_rss = 1 << 20;
    malloc.runs.push_back(r);
  }
  malloc.attempts = 5;
  PolicyRuns slow;
  slow.name = "boost_pool";
  slow.family = allocators::Family::kBaseline;
  slow.attempts = 1;
  slow.eliminated = true;
  slow.stop_reason =
      "eliminated in round 1: its run passed 20x the fastest policy's run time (malloc: 0.30 s) "
      "and was stopped at 6.0 s";
  ReportContext ctx;
  ctx.clock = TimingClock::kCpu;
  ctx.machine = "test";
  const TraceReport t = Summarize(Measured(program, {slow, malloc}, 5), ctx);
  ASSERT_EQ(t.policies.size(), 2u);
  EXPECT_EQ(t.policies[0].name, "malloc");
  EXPECT_EQ(t.policies[1].name, "boost_pool");
  EXPECT_TRUE(t.policies[1].ok());
  EXPECT_EQ(t.failed_policies, 0);
  EXPECT_EQ(t.verdict.recommended, "malloc");

  const std::vector<TraceReport> reports = {t};
  const std::vector<ReplayProgram> programs = {program};
  const ReportInput in{reports, programs, ctx, "replayer t.trace"};
  const std::string table = FindReportFormat("table")->render(in);
  EXPECT_NE(table.find("\nboost_pool                          -      -x      - -              "
                       "     -    0\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("  boost_pool: eliminated in round 1"), std::string::npos) << table;
  EXPECT_EQ(table.find("FAILED"), std::string::npos) << table;
  const std::string md = FindReportFormat("markdown")->render(in);
  EXPECT_NE(md.find("| boost_pool | baseline | - | - | - | - | - | - | 0 | 0 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("boost_pool: eliminated in round 1"), std::string::npos) << md;
  const std::string csv = FindReportFormat("csv")->render(in);
  EXPECT_NE(csv.find("t.trace,,boost_pool,baseline,eliminated,eliminated in round 1: its run "
                     "passed 20x the fastest policy's run time (malloc: 0.30 s) and was "
                     "stopped at 6.0 s,0,1,0,0,0,,,,,,,,,,,,,,,,0,0,0,1048576,,,,,,1000,"),
            std::string::npos)
      << csv;
  const std::string json = FindReportFormat("json")->render(in);
  EXPECT_NE(json.find("{\"policy\": \"boost_pool\", \"family\": \"baseline\", \"note\": \"\", "
                      "\"status\": \"eliminated\", \"error\": \"eliminated in round 1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ns_per_op\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"overhead\": null"), std::string::npos) << json;
  const std::string html = FindReportFormat("html")->render(in);
  EXPECT_NE(html.find("eliminated in round 1"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("FAILED"), std::string::npos);
}

// A keep pool 5% faster than slab in every round is passed over: the table's
// verdict says so on a line of its own, the JSON in a field, the Markdown in
// its sentence.
TEST(ReportersTest, EveryFormatSaysWhatTheNeverFreeingMarginPassedOver) {
  ReplayProgram program;
  program.path = "t.trace";
  program.allocs = 500;
  program.frees = 500;
  program.arena_events = 2;  // its blocks in a container's arena: a pool is adoptable
  program.peak_live_bytes = 1 << 20;
  auto runs = [](const std::string& name, double us, bool frees) {
    PolicyRuns p;
    p.name = name;
    if (name == "malloc") p.role = Role::kReference;
    p.family = allocators::Family::kOurs;
    p.frees_blocks = frees;
    for (int round = 0; round < 8; ++round) {
      RunRecord r;
      r.round = round;
      r.result.ops = 1000;
      PassFigures f;
      f.cpu_seconds = f.wall_seconds = us * 1e-6 * (1 + 0.1 * (round % 3));
      r.result.passes = {f, f};
      r.result.peak_rss = 1 << 20;
      p.runs.push_back(r);
    }
    p.attempts = 8;
    return p;
  };
  ReportContext ctx;
  ctx.clock = TimingClock::kCpu;
  const TraceReport t =
      Summarize(Measured(program,
                         {runs("malloc", 20, true), runs("slab/st/single", 10, true),
                          runs("pool/simple/exp/st/single/keep", 9.5, false)},
                         8),
                ctx);
  ASSERT_EQ(t.verdict.recommended, "slab/st/single");
  const std::vector<TraceReport> reports = {t};
  const std::vector<ReplayProgram> programs = {program};
  const ReportInput in{reports, programs, ctx, "replayer t.trace"};
  const std::string table = FindReportFormat("table")->render(in);
  EXPECT_NE(table.find("  passed over:  pool/simple/exp/st/single/keep, 1.05x [1.05, 1.05]\n"
                       "                slab/st/single's speed, never frees its blocks"),
            std::string::npos)
      << table;
  // The verdict says how many rounds its interval rests on.
  std::string unwrapped = table;
  for (size_t at; (at = unwrapped.find("\n                ")) != std::string::npos;) {
    unwrapped.replace(at, 17, " ");
  }
  EXPECT_NE(unwrapped.find("glibc malloc's speed, over 8 rounds\n"), std::string::npos) << table;
  const std::string json = FindReportFormat("json")->render(in);
  EXPECT_NE(json.find("\"passed_over\": \"pool/simple/exp/st/single/keep, 1.05x"),
            std::string::npos)
      << json;
  const std::string md = FindReportFormat("markdown")->render(in);
  EXPECT_NE(md.find("(pool/simple/exp/st/single/keep, 1.05x"), std::string::npos) << md;

  // Replayed per thread, the disturbance of a run is its own threads'.
  TraceReport per_thread = t;
  per_thread.replay_threads = 4;
  const std::vector<TraceReport> mt = {per_thread};
  const std::string mt_table = FindReportFormat("table")->render({mt, programs, ctx, "r"});
  EXPECT_NE(mt_table.find("  disturbed:    not checked: a per-thread replay's 4 threads preempt"),
            std::string::npos)
      << mt_table;
}

}  // namespace
}  // namespace alloctrace
