// The HTML report's page (--format=html): each trace's verdict, facts,
// charts (html_charts.cc) and table, an overview of several traces, and
// the in-situ section under --confirm (alone under --in_situ). The view
// it draws from is made in html_view.cc.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/html_parts.h"
#include "alloctrace/replayer/reports/report_html.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/choice.h"

namespace alloctrace {
namespace {

using charts::Escape;
using charts::FormatValue;
using charts::Unit;
using html_internal::Contains;
using html_internal::Contender;
using html_internal::Find;
using html_internal::Interval;
using html_internal::Names;
using html_internal::Without;

// The recommendation with its figures and roles, and how to adopt it.
std::string RecommendedHtml(const HtmlTrace& t) {
  const HtmlVerdict& v = t.verdict;
  const std::string& rec = v.recommended;
  if (rec.empty()) return "<p><strong>Recommended:</strong> none.</p>";
  std::vector<std::string> roles, figures;
  if (v.fastest[0] == rec) roles.push_back("the fastest");
  if (v.fastest[0] != rec && Contains(v.fastest, rec)) roles.push_back("tied with the fastest");
  if (Contains(v.smallest_rss, rec)) roles.push_back("the smallest peak RSS");
  if (const HtmlPolicy* r = Find(t, rec); r != nullptr && r->ok) {
    if (r->vs_malloc.has_value() && !r->reference) {
      figures.push_back(
          absl::StrCat(Escape(Interval(r->vs_malloc, Unit::kRatio)), " the speed of glibc malloc"));
    }
    if (r->peak_rss.has_value()) {
      figures.push_back(absl::StrCat(
          Escape(FormatValue(r->peak_rss.value, Unit::kBytes)), " peak RSS",
          std::isfinite(r->overhead) ? absl::StrFormat(" (%.2fx the ideal)", r->overhead) : ""));
    }
  }
  std::string o = absl::StrCat(
      "<p><strong>Recommended: ", Escape(rec), "</strong>",
      roles.empty() ? "" : absl::StrCat(", ", absl::StrJoin(roles, " and ")),
      figures.empty() ? "" : absl::StrCat(": ", absl::StrJoin(figures, ", ")), ".</p>");
  if (!v.decided_in_program.empty()) {
    absl::StrAppend(&o, "<p class=\"note\">", Escape(v.decided_in_program), ".</p>");
  }
  if (!v.disagreement.empty()) {
    absl::StrAppend(&o, "<p><strong>Disagree:</strong> ", Escape(v.disagreement), ".</p>");
  }
  if (!v.adopt.empty()) {
    absl::StrAppend(&o, "<p><strong>Adopt:</strong> <code>", Escape(v.adopt), "</code></p>");
  }
  return o;
}

// Why the fastest (or, if its memory left it out, the next) is not the
// recommendation: it never frees its blocks.
std::string PassedOverHtml(const HtmlVerdict& v) {
  if (v.passed_over.empty()) return "";
  const std::string who =
      v.passed_over == v.fastest[0] ? "It" : absl::StrCat(Escape(v.passed_over), ", faster,");
  return absl::StrCat(
      "<p class=\"note\">", who,
      " is not recommended: it never frees its blocks, so its memory grows with every block the "
      "program allocates, and such a policy is recommended only when shown more than ",
      static_cast<int>(std::lround(100 * kNeverFreesMargin)),
      "% faster than the fastest policy that frees",
      v.passed_over_edge.has_value()
          ? absl::StrCat("; it is ", Escape(Interval(v.passed_over_edge, Unit::kRatio)), " as fast")
          : "",
      ".</p>");
}

// The fastest and those tied with it, where they are not the recommended
// policy; a policy both fast and smallest is named once, with its RSS role
// beside it. Sets *named to the policies named.
std::string FastestHtml(const HtmlVerdict& v, std::vector<std::string>* named) {
  const std::string& rec = v.recommended;
  const bool rec_fastest = !rec.empty() && v.fastest[0] == rec;
  const std::string rss_words =
      std::isfinite(v.smallest_rss_bytes)
          ? absl::StrCat("the smallest peak RSS, ", FormatValue(v.smallest_rss_bytes, Unit::kBytes))
          : "the smallest peak RSS";
  auto marked = [&](std::vector<std::string> names) {
    for (std::string& n : names) {
      if (n != rec && Contains(v.smallest_rss, n)) n = absl::StrCat(n, " (", rss_words, ")");
    }
    return names;
  };
  const std::vector<std::string> tied = Without(v.fastest, {v.fastest[0], rec});
  std::string o;
  if (!rec_fastest) {
    std::string line =
        absl::StrCat("<strong>Fastest:</strong> ", Escape(marked({v.fastest[0]})[0]));
    // (None when the fastest is the reference: summary.cc.)
    if (v.fastest_vs_malloc.has_value()) {
      absl::StrAppend(&line, ", ", Escape(Interval(v.fastest_vs_malloc, Unit::kRatio)),
                      " the speed of glibc malloc");
    }
    if (!tied.empty()) absl::StrAppend(&line, "; tied with it: ", Names(marked(tied), 5));
    absl::StrAppend(&o, "<p>", line, " (shaded below).</p>", PassedOverHtml(v));
  } else if (!tied.empty()) {
    absl::StrAppend(&o, "<p><strong>Tied with it</strong> (shaded below): ", Names(marked(tied), 5),
                    ".</p>");
  }
  *named = {v.fastest[0], rec};
  if (!rec_fastest || !tied.empty()) {
    named->insert(named->end(), tied.begin(), tied.begin() + std::min<size_t>(tied.size(), 5));
  }
  return o;
}

// The smallest peak RSS, where those are others than the policies named.
std::string SmallestHtml(const HtmlVerdict& v, const std::vector<std::string>& named) {
  const std::vector<std::string> small = Without(v.smallest_rss, named);
  if (small.empty()) return "";
  return absl::StrCat(
      "<p><strong>", Contains(v.smallest_rss, v.recommended) ? "As small" : "Smallest peak RSS",
      ":</strong> ", Names(small, 6),
      std::isfinite(v.smallest_rss_bytes)
          ? absl::StrCat(" (", Escape(FormatValue(v.smallest_rss_bytes, Unit::kBytes)), ")")
          : "",
      ".</p>");
}

// The noise floor, and how many policies failed.
std::string VerdictNotesHtml(const HtmlTrace& t) {
  std::string o;
  if (!t.provisional.empty()) {
    absl::StrAppend(&o, "<p class=\"bad\"><strong>Provisional:</strong> ", Escape(t.provisional),
                    ".</p>");
  }
  if (!t.caution.empty()) {
    absl::StrAppend(&o, "<p class=\"bad\"><strong>Caution:</strong> ", Escape(t.caution), ".</p>");
  }
  if (!t.incomplete.empty()) {
    absl::StrAppend(&o, "<p class=\"bad\"><strong>Incomplete:</strong> ", Escape(t.incomplete),
                    ".</p>");
  }
  if (!t.if_instrumented.empty()) {
    absl::StrAppend(&o, "<p class=\"note\">If instrumented: ", Escape(t.if_instrumented), ".</p>");
  }
  if (!t.in_program_terms.empty()) {
    absl::StrAppend(&o, "<p class=\"note\">In the program's terms: ", Escape(t.in_program_terms),
                    ".</p>");
  }
  if (!t.sampling.empty()) {
    absl::StrAppend(&o, "<p class=\"note\">Measured: ", Escape(t.sampling), ".</p>");
  }
  if (t.noise_floor.has_value()) {
    absl::StrAppend(&o, "<p class=\"note\">Noise floor (two identical allocators compared): ",
                    Escape(Interval(t.noise_floor, Unit::kRatio)),
                    "; the margin within which policies are equally fast is its median's "
                    "distance from 1, or ",
                    static_cast<int>(std::lround(100 * kEquivalenceMargin)),
                    "% if that is larger.</p>");
  }
  int failed = 0;
  for (const HtmlPolicy& p : t.policies) failed += p.failed;
  if (failed > 0) {
    absl::StrAppend(&o, "<p class=\"bad\"><strong>", failed, " polic", failed == 1 ? "y" : "ies",
                    " FAILED</strong> (never ranked; see the table).</p>");
  }
  return o;
}

// The verdict, each fact once: the recommendation with its figures, how to
// adopt it, then the fastest and the smallest only where they are other
// policies; the rule folded away. (The one-paragraph sentence of the text
// reports repeats all of this, so the page leaves it to them.)
std::string VerdictHtml(const HtmlTrace& t, const std::string& id) {
  const HtmlVerdict& v = t.verdict;
  std::string o = absl::StrCat("<div class=\"verdict\" id=\"", Escape(id), "\">");
  if (v.fastest.empty()) {
    absl::StrAppend(&o, "<p><strong>No verdict:</strong> ",
                    v.sentence.empty() ? "no policy produced figures." : Escape(v.sentence),
                    "</p>");
  } else {
    std::vector<std::string> named;
    absl::StrAppend(&o, RecommendedHtml(t));
    absl::StrAppend(&o, FastestHtml(v, &named));  // before SmallestHtml reads `named`
    absl::StrAppend(&o, SmallestHtml(v, named));
    if (!v.rule.empty()) {
      absl::StrAppend(&o,
                      "<details class=\"rule\"><summary>How the recommendation is "
                      "chosen</summary><p>",
                      Escape(v.rule), ".</p></details>");
    }
  }
  return absl::StrCat(o, VerdictNotesHtml(t), "</div>\n");
}

std::string FactsHtml(const HtmlTrace& t) {
  auto row = [](const std::string& k, const std::string& v) {
    return absl::StrCat("<dt>", Escape(k), "</dt><dd>", Escape(v), "</dd>");
  };
  const TraceFacts& f = t.trace;
  std::string o = "<dl class=\"kv\">";
  absl::StrAppend(&o, row("workload", f.workload), row("program", t.program),
                  row("platform", t.platform));
  for (const auto& [k, v] : t.labels) absl::StrAppend(&o, row("label " + k, v));
  absl::StrAppend(
      &o, row("memory ops", absl::StrCat(f.memory_ops)),
      row("ideal", absl::StrCat(FormatValue(f.peak_live_bytes, Unit::kBytes), " peak live (",
                                f.peak_live_bytes, " bytes, ", f.peak_live_objects, " objects)")));
  if (!f.cut_short.empty()) absl::StrAppend(&o, row("warning", f.cut_short));
  if (!t.note.empty()) absl::StrAppend(&o, row("note", t.note));
  return o + "</dl>\n";
}

std::string TableHtml(const HtmlTrace& t, const std::string& id) {
  charts::HtmlTable table(
      {"#", "policy", "family", "runs", "ns/op", t.interval_kind, "x malloc", "peak RSS", "x ideal",
       "minor faults", "status", "adopt (T: the element type)"},
      {true, false, false, true, true, true, true, true, true, true, false, false});
  int rank = 0;
  for (const HtmlPolicy& p : t.policies) {
    if (!p.ok) {
      table.AddRow(
          {"", p.name, p.family, absl::StrCat(p.runs), "", "", "", "", "", "", p.status, p.adopt},
          "failed");
      continue;
    }
    const std::string status = p.floor ? "harness floor" : (p.tied_fastest ? "tied fastest" : "");
    table.AddRow({p.floor ? "" : absl::StrCat(++rank), p.name, p.family, absl::StrCat(p.runs),
                  absl::StrFormat("%.2f", p.ns_per_op.value),
                  p.ns_per_op.has_interval()
                      ? absl::StrFormat("%.2f to %.2f", p.ns_per_op.lo, p.ns_per_op.hi)
                      : "",
                  p.vs_malloc.has_value() ? Interval(p.vs_malloc, Unit::kRatio) : "",
                  p.peak_rss.has_value() ? Interval(p.peak_rss, Unit::kBytes) : "",
                  std::isfinite(p.overhead) ? absl::StrFormat("%.2f", p.overhead) : "",
                  std::isfinite(p.minor_faults) ? absl::StrFormat("%.0f", p.minor_faults) : "",
                  status, p.adopt},
                 p.tied_fastest ? "tied" : "");
  }
  return table.Render(absl::StrCat("id=\"", Escape(id), "\""));
}

// Over several traces: speed-up against malloc, trace x policy.
std::string OverviewHtml(const std::vector<HtmlTrace>& traces) {
  // Columns: every contender, by the geometric mean of its speed-ups.
  std::map<std::string, std::pair<double, int>> logs;
  for (const HtmlTrace& t : traces) {
    for (const HtmlPolicy& p : t.policies) {
      if (Contender(p) && p.vs_malloc.has_value() && p.vs_malloc.value > 0) {
        logs[p.name].first += std::log(p.vs_malloc.value);
        ++logs[p.name].second;
      }
    }
  }
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [name, s] : logs) order.push_back({-s.first / s.second, name});
  std::sort(order.begin(), order.end());
  charts::HeatMap m;
  m.id = "heatmap";
  m.title = "Speed-up against glibc malloc, trace x policy";
  m.value_label = "x malloc";
  m.low_meaning = "slower than malloc";
  m.high_meaning = "faster than malloc";
  for (const auto& [score, name] : order) m.cols.push_back(name);
  charts::HtmlTable table(
      [&] {
        std::vector<std::string> h = {"policy"};
        for (const HtmlTrace& t : traces) h.push_back(t.trace.path);
        return h;
      }(),
      [&] {
        std::vector<bool> numeric(traces.size() + 1, true);
        numeric[0] = false;
        return numeric;
      }());
  for (const HtmlTrace& t : traces) {
    m.rows.push_back(t.trace.path);
    std::vector<double> row;
    for (const std::string& name : m.cols) {
      double v = NAN;
      for (const HtmlPolicy& p : t.policies) {
        if (p.name == name && Contender(p)) v = p.vs_malloc.value;
      }
      row.push_back(v);
    }
    m.values.push_back(std::move(row));
  }
  for (const std::string& name : m.cols) {
    std::vector<std::string> cells = {Escape(name)};
    for (const HtmlTrace& t : traces) {
      std::string cell = "&ndash;";
      for (const HtmlPolicy& p : t.policies) {
        if (p.name != name) continue;
        cell = p.ok ? Escape(Interval(p.vs_malloc, Unit::kRatio))
                    : absl::StrCat("<span class=\"bad\">",
                                   Escape(p.status.substr(0, p.status.find(':'))), "</span>");
        if (p.tied_fastest) cell = absl::StrCat("<strong>", cell, "</strong>");
      }
      cells.push_back(cell);
    }
    table.AddRowHtml(cells);
  }
  std::string verdicts = "<ul>";
  for (size_t i = 0; i < traces.size(); ++i) {
    const HtmlTrace& t = traces[i];
    absl::StrAppend(&verdicts, "<li><a href=\"#trace-", i, "\">", Escape(t.trace.path), "</a>: ",
                    t.verdict.fastest.empty()
                        ? "no verdict"
                        : absl::StrCat("fastest ", Names(t.verdict.fastest, 5), "; recommended ",
                                       Escape(t.verdict.recommended)),
                    "</li>");
  }
  absl::StrAppend(&verdicts, "</ul>\n");
  return absl::StrCat(verdicts, charts::RenderHeatMap(m),
                      "<h3>Speed-up against glibc malloc (bold: tied with the fastest)</h3>",
                      table.Render("id=\"overview-table\""));
}

std::string InSituHtml(const InSituSummary& s, const TraceReport* replay) {
  using charts::Escape;
  std::string o = absl::StrCat("<section class=\"in-situ\"><h2>In situ: <code>",
                               Escape(absl::StrJoin(s.argv, " ")),
                               "</code></h2><p><b>Verdict "
                               "(in situ):</b> ",
                               Escape(InSituSentence(s)), "</p>");
  // (Under a replay, the trace's verdict says it.)
  if (const std::string p = InSituProvisionalWords(s); !p.empty() && replay == nullptr) {
    absl::StrAppend(&o, "<p class=\"bad\"><strong>Provisional:</strong> ", Escape(p), ".</p>");
  }
  absl::StrAppend(&o, "<p>Reference ", Escape(s.reference), "; program output: <code>",
                  Escape(s.log_path), "</code></p>");
  if (const std::string built = InSituBuildWords(s); !built.empty()) {
    absl::StrAppend(&o, "<p>", Escape(absl::StrCat(built, ".")), "</p>");
  }
  absl::StrAppend(&o,
                  "<table><tr><th>policy</th><th>replay rank</th><th>replay ns/op</th>"
                  "<th>in-situ wall s [95% CI]</th><th>cpu s</th><th>x reference</th>"
                  "<th>peak RSS</th><th>runs</th><th>status</th></tr>");
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    absl::StrAppend(&o, "<tr><td>", Escape(p.name), p.tied_fastest ? " *" : "", "</td><td>",
                    ReplayRank(replay, r != nullptr ? r->name : p.name), "</td><td>",
                    r != nullptr && r->ok() && r->ns_per_op.has_data()
                        ? absl::StrFormat("%.1f", r->ns_per_op.median)
                        : "-",
                    "</td><td>", Sec(p.wall_s), " ", Ci(p.wall_s, "[%.3f, %.3f]"), "</td><td>",
                    Sec(p.cpu_s), "</td><td>", p.reference ? "reference" : Times(p.vs_reference),
                    "</td><td>", p.ok() ? Mib(p.peak_rss_bytes.median) : "-", "</td><td>",
                    p.runs.size(), "</td><td>", Escape(InSituStatusWords(p)), "</td></tr>");
  }
  return o + "</table></section>\n";
}

}  // namespace

std::string FormatHtmlPage(const std::vector<HtmlTrace>& traces, const HtmlContext& ctx,
                           const std::string& command_line, const std::string& in_situ_html) {
  charts::HtmlPage page("alloctrace replay report");
  if (!command_line.empty()) page.AddSubtitle(command_line);
  page.AddSubtitle(absl::StrCat(ctx.date, " on ", ctx.machine));
  if (!ctx.method.empty()) page.AddSubtitle(ctx.method);
  if (traces.size() > 1) page.AddSection("overview", "All traces", OverviewHtml(traces));
  for (size_t i = 0; i < traces.size(); ++i) {
    const HtmlTrace& t = traces[i];
    const std::string id = absl::StrCat("trace-", i);
    std::string body = VerdictHtml(t, id + "-verdict");
    if (t.per_container != nullptr) {
      absl::StrAppend(&body,
                      html_internal::PerContainerHtml(*t.per_container, id + "-per-container"));
    }
    absl::StrAppend(
        &body, FactsHtml(t), html_internal::ProfileChart(t, id + "-profile"),
        html_internal::SpeedChart(t, id + "-speed"), html_internal::ScatterChart(t, id + "-pareto"),
        "<h3>The article's policy effects</h3>", html_internal::EffectsHtml(t, id + "-effects"),
        "<h3>Every policy</h3>", TableHtml(t, id + "-table"));
    page.AddSection(id, t.trace.path, body);
  }
  if (!in_situ_html.empty()) page.AddHtml(in_situ_html);
  page.AddHtml(
      "<footer><p class=\"note\">ns/op: timed loop over memory ops (allocs, frees, reallocs). "
      "x malloc: glibc malloc's ns/op over the policy's (above 1: faster). Peak RSS: the run's "
      "highest resident memory above its own baseline; x ideal: that over the most bytes ever "
      "live as requested. Written by alloctrace replayer --format=html.</p></footer>");
  return page.Render();
}

std::string HtmlReport(const ReportInput& in) {
  if (in.in_situ_only != nullptr) {
    return absl::StrCat(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>alloctrace "
        "in situ</title></head><body>",
        InSituHtml(*in.in_situ_only, nullptr), "</body></html>\n");
  }
  std::vector<HtmlTrace> traces;
  for (size_t i = 0; i < in.reports.size() && i < in.programs.size(); ++i) {
    traces.push_back(HtmlViewOf(in.reports[i], in.programs[i], in.ctx));
  }
  const std::string in_situ = !in.reports.empty() && in.reports[0].in_situ != nullptr
                                  ? InSituHtml(*in.reports[0].in_situ, &in.reports[0])
                                  : "";
  return FormatHtmlPage(traces, HtmlContextOf(in.ctx), in.command_line, in_situ);
}

}  // namespace alloctrace
