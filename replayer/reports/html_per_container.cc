// The HTML report's verdict per container (--per_container): the whole
// program's sentence, a row per class, the alias lines, and a chart per
// searched class of its time under each candidate, the other classes held.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg.h"
#include "alloctrace/replayer/reports/html_parts.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace::html_internal {
namespace {

using charts::Escape;

std::string ClassChart(const PerContainerVerdict& v, const ClassVerdict& c, const std::string& id) {
  charts::IntervalChart chart;
  chart.id = id;
  chart.title = absl::StrCat(
      ClassLabel(c),
      v.in_program ? ": the program's time with this class on each candidate, the others held "
                     "(95% CI of the median)"
                   : ": time per memory op of the whole replay with this class on each "
                     "candidate, the others held (95% CI of the median)");
  chart.x = SpeedAxis(v.in_program ? "time per run of the program" : "ns per memory op",
                      /*frame=*/true);
  chart.highlight_label = "tied with the fastest";
  for (const ClassCandidate& k : c.candidates) {
    charts::IntervalRow r;
    r.label = k.policy == kHeapPolicy ? absl::StrCat("heap (", v.heap, ")") : k.policy;
    if (!k.skipped.empty()) {
      r.status = k.skipped;
    } else {
      // In the program, seconds on the axis's time scale (ns).
      const Estimate& e = v.in_program ? k.seconds : k.ns_per_op;
      const double scale = v.in_program ? 1e9 : 1;
      r.marks.push_back({0, scale * e.median, scale * e.lo, scale * e.hi, e.n >= kMinPairedRounds});
      r.highlighted = k.tied_fastest;
      r.note = k.policy == c.policy ? "chosen" : (k.policy == c.held ? "held" : "");
    }
    chart.rows.push_back(std::move(r));
  }
  chart.note =
      "Shaded: tied with the fastest. A class moves only to a policy shown faster than "
      "the one it held.";
  return charts::RenderIntervalChart(chart);
}

}  // namespace

std::string PerContainerHtml(const PerContainerVerdict& v, const std::string& id) {
  std::string o = absl::StrCat("<div class=\"verdict\" id=\"", Escape(id),
                               "\"><p><strong>Per "
                               "container:</strong> ",
                               Escape(MixSentence(v)), "</p>");
  if (!v.why_not.empty()) return o + "</div>\n";
  absl::StrAppend(&o, "<p class=\"note\">Searched: ", Escape(MixCostWords(v)), ".</p>");
  charts::HtmlTable table({"class", "share of memory ops", "arenas", "threads", "policy", "why"},
                          {false, true, true, true, false, false});
  for (const ClassVerdict& c : v.classes) {
    table.AddRow({ClassLabel(c), absl::StrFormat("%.1f%%", 100 * c.facts.share),
                  absl::StrCat(c.facts.arenas), absl::StrCat(c.facts.threads.size()),
                  ClassPolicyWords(v, c), ClassChoiceWords(c)},
                 "");
  }
  absl::StrAppend(&o, table.Render(absl::StrCat("id=\"", Escape(id), "-table\"")));
  if (MixIsTheAnswer(v)) {
    absl::StrAppend(&o, "<p>", Escape(AdoptHeading(v)),
                    "</p><pre style=\"white-space: pre-wrap\">");
    for (const std::string& line : AdoptLines(v)) absl::StrAppend(&o, Escape(line), "\n");
    absl::StrAppend(&o, "</pre><p>", Escape(HeapWords(v)), ".");
    if (v.from_call_sites) {
      absl::StrAppend(&o, " ", Escape(SiteClassesWords(v)), ".</p>");
    } else {
      absl::StrAppend(&o, " In the program, unchanged: <code>",
                      Escape(absl::StrCat("ALLOCTRACE_POLICY='", v.assignment, "'")),
                      "</code></p>");
    }
  } else if (v.from_call_sites) {
    if (!v.mix_is_single) {
      absl::StrAppend(&o, "<p class=\"note\">", Escape(SiteClassesWords(v)), ".</p>");
    }
  } else if (!v.mix_is_single) {
    absl::StrAppend(&o, "<p class=\"note\">The mix searched (not the answer): <code>",
                    Escape(absl::StrCat("ALLOCTRACE_POLICY='", v.assignment, "'")), "</code></p>");
  }
  for (size_t i = 0; i < v.classes.size(); ++i) {
    const ClassVerdict& c = v.classes[i];
    if (c.searched && !c.candidates.empty()) {
      absl::StrAppend(&o, ClassChart(v, c, absl::StrCat(id, "-class-", i)));
    }
  }
  return o + "</div>\n";
}

}  // namespace alloctrace::html_internal
