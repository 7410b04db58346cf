// The replay report's page drawn from its view (HtmlTrace): the sections
// (verdict, memory profile, speed, Pareto, policy effects, heat map,
// tables), one function each. The view is made in report_html_view.cc.
#include "alloctrace/replayer/reports/report_html.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg.h"

namespace alloctrace {
namespace {

using charts::Escape;
using charts::FormatValue;
using charts::Unit;

bool Contender(const HtmlPolicy& p) { return p.ok && !p.floor; }

// ns/op axes spend their width on the main group of policies (those far
// slower are drawn past a break, their value written) and turn logarithmic
// when that group still spans more than charts::kWideRatio.
charts::Axis SpeedAxis(std::string label, bool frame) {
  charts::Axis a{std::move(label), Unit::kNanoseconds, /*include_zero=*/false};
  a.frame = frame;
  a.log_if_wide = true;
  return a;
}

const HtmlPolicy* Find(const HtmlTrace& t, const std::string& name) {
  for (const HtmlPolicy& p : t.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// `names` less `drop`.
std::vector<std::string> Without(const std::vector<std::string>& names,
                                 const std::vector<std::string>& drop) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (!Contains(drop, n)) out.push_back(n);
  }
  return out;
}

// The 1-based rank of each contender, as in the table's first column.
std::map<std::string, int> Ranks(const HtmlTrace& t) {
  std::map<std::string, int> ranks;
  int rank = 0;
  for (const HtmlPolicy& p : t.policies) {
    if (p.ok && !p.floor) ranks.emplace(p.name, ++rank);
  }
  return ranks;
}

// Names, escaped and joined; past `max` of them, how many more.
std::string Names(const std::vector<std::string>& names, size_t max) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < max; ++i) shown.push_back(Escape(names[i]));
  std::string o = absl::StrJoin(shown, ", ");
  if (names.size() > max) absl::StrAppend(&o, " and ", names.size() - max, " more");
  return o;
}

std::string Interval(const HtmlEstimate& e, Unit unit) {
  if (!e.has_value()) return "";
  if (!e.has_interval()) return FormatValue(e.value, unit);
  return absl::StrCat(FormatValue(e.value, unit), " [", FormatValue(e.lo, unit), ", ",
                      FormatValue(e.hi, unit), "]");
}

// The x (op index) of each RSS reading: the replay loop reads RSS after
// each of course.size() equal segments of the ops.
std::vector<double> CourseX(size_t readings, uint64_t ops) {
  std::vector<double> x;
  if (readings == 0) return x;
  const uint64_t segment = (ops + readings - 1) / readings;
  for (size_t k = 0; k < readings; ++k) {
    x.push_back(static_cast<double>(std::min<uint64_t>(ops, (k + 1) * segment)));
  }
  return x;
}

// The verdict, each fact once: the recommendation with its figures, how to
// adopt it, then the fastest and the smallest only where they are other
// policies; the rule folded away. (The statistics' one-paragraph sentence
// repeats all of this, so the page leaves it to the text reports.)
std::string VerdictHtml(const HtmlTrace& t, const std::string& id) {
  const HtmlVerdict& v = t.verdict;
  std::string o = absl::StrCat("<div class=\"verdict\" id=\"", Escape(id), "\">");
  if (v.fastest.empty()) {
    absl::StrAppend(&o, "<p><strong>No verdict:</strong> ",
                    v.sentence.empty() ? "no policy produced figures." : Escape(v.sentence),
                    "</p>");
  } else {
    const std::string& rec = v.recommended;
    const bool rec_fastest = !rec.empty() && v.fastest[0] == rec;
    const bool rec_tied = !rec.empty() && !rec_fastest && Contains(v.fastest, rec);
    const bool rec_smallest = !rec.empty() && Contains(v.smallest_rss, rec);
    if (rec.empty()) {
      absl::StrAppend(&o, "<p><strong>Recommended:</strong> none.</p>");
    } else {
      std::vector<std::string> roles, figures;
      if (rec_fastest) roles.push_back("the fastest");
      if (rec_tied) roles.push_back("tied with the fastest");
      if (rec_smallest) roles.push_back("the smallest peak RSS");
      if (const HtmlPolicy* r = Find(t, rec); r != nullptr && r->ok) {
        if (r->vs_malloc.has_value() && rec != "malloc") {
          figures.push_back(absl::StrCat(Escape(Interval(r->vs_malloc, Unit::kRatio)),
                                         " the speed of glibc malloc"));
        }
        if (r->peak_rss.has_value()) {
          figures.push_back(absl::StrCat(
              Escape(FormatValue(r->peak_rss.value, Unit::kBytes)), " peak RSS",
              std::isfinite(r->overhead) ? absl::StrFormat(" (%.2fx the ideal)", r->overhead)
                                         : ""));
        }
      }
      absl::StrAppend(&o, "<p><strong>Recommended: ", Escape(rec), "</strong>",
                      roles.empty() ? "" : absl::StrCat(", ", absl::StrJoin(roles, " and ")),
                      figures.empty() ? "" : absl::StrCat(": ", absl::StrJoin(figures, ", ")),
                      ".</p>");
    }
    if (!v.adopt.empty()) {
      absl::StrAppend(&o, "<p><strong>Adopt:</strong> <code>", Escape(v.adopt), "</code></p>");
    }
    // A policy both fast and smallest is named once, in the speed line,
    // with its RSS role beside it; the smallest-RSS line names the rest.
    const std::string rss_words =
        std::isfinite(v.smallest_rss_bytes)
            ? absl::StrCat("the smallest peak RSS, ",
                           FormatValue(v.smallest_rss_bytes, Unit::kBytes))
            : "the smallest peak RSS";
    auto marked = [&](std::vector<std::string> names) {
      for (std::string& n : names) {
        if (n != rec && Contains(v.smallest_rss, n)) n = absl::StrCat(n, " (", rss_words, ")");
      }
      return names;
    };
    const std::vector<std::string> tied = Without(v.fastest, {v.fastest[0], rec});
    if (!rec_fastest) {
      std::string line =
          absl::StrCat("<strong>Fastest:</strong> ", Escape(marked({v.fastest[0]})[0]));
      if (v.fastest_vs_malloc.has_value() && v.fastest[0] != "malloc") {
        absl::StrAppend(&line, ", ", Escape(Interval(v.fastest_vs_malloc, Unit::kRatio)),
                        " the speed of glibc malloc");
      }
      if (!tied.empty()) absl::StrAppend(&line, "; tied with it: ", Names(marked(tied), 5));
      absl::StrAppend(&o, "<p>", line, " (shaded below).</p>");
      if (!v.passed_over.empty()) {
        // Why the fastest (or, if its memory left it out, the next) is not
        // the recommendation.
        const std::string who =
            v.passed_over == v.fastest[0] ? "It" : absl::StrCat(Escape(v.passed_over), ", faster,");
        absl::StrAppend(
            &o, "<p class=\"note\">", who,
            " is not recommended: it never frees its blocks, so its memory grows with every "
            "block the program allocates, and such a policy is recommended only when shown "
            "more than ",
            static_cast<int>(std::lround(100 * kNeverFreesMargin)),
            "% faster than the fastest policy that frees",
            v.passed_over_edge.has_value()
                ? absl::StrCat("; it is ", Escape(Interval(v.passed_over_edge, Unit::kRatio)),
                               " as fast")
                : "",
            ".</p>");
      }
    } else if (!tied.empty()) {
      absl::StrAppend(
          &o, "<p><strong>Tied with it</strong> (shaded below): ", Names(marked(tied), 5), ".</p>");
    }
    std::vector<std::string> named = {v.fastest[0], rec};
    if (!rec_fastest || !tied.empty()) {
      const size_t shown = std::min<size_t>(tied.size(), 5);
      named.insert(named.end(), tied.begin(), tied.begin() + shown);
    }
    const std::vector<std::string> small = Without(v.smallest_rss, named);
    if (!small.empty()) {
      absl::StrAppend(
          &o, "<p><strong>", rec_smallest ? "As small" : "Smallest peak RSS", ":</strong> ",
          Names(small, 6),
          std::isfinite(v.smallest_rss_bytes)
              ? absl::StrCat(" (", Escape(FormatValue(v.smallest_rss_bytes, Unit::kBytes)), ")")
              : "",
          ".</p>");
    }
    if (!v.rule.empty()) {
      absl::StrAppend(&o,
                      "<details class=\"rule\"><summary>How the recommendation is "
                      "chosen</summary><p>",
                      Escape(v.rule), ".</p></details>");
    }
  }
  if (t.noise_floor.has_value()) {
    absl::StrAppend(&o, "<p class=\"note\">Noise floor (two identical allocators compared): ",
                    Escape(Interval(t.noise_floor, Unit::kRatio)),
                    "; smaller differences are not real.</p>");
  }
  int failed = 0;
  for (const HtmlPolicy& p : t.policies) failed += !p.ok && p.status.rfind("FAILED", 0) == 0;
  if (failed > 0) {
    absl::StrAppend(&o, "<p class=\"bad\"><strong>", failed, " polic", failed == 1 ? "y" : "ies",
                    " FAILED</strong> (never ranked; see the table).</p>");
  }
  return o + "</div>\n";
}

std::string FactsHtml(const HtmlTrace& t) {
  auto row = [](const std::string& k, const std::string& v) {
    return absl::StrCat("<dt>", Escape(k), "</dt><dd>", Escape(v), "</dd>");
  };
  std::string o = "<dl class=\"kv\">";
  absl::StrAppend(&o, row("workload", t.workload), row("program", t.program),
                  row("platform", t.platform));
  for (const auto& [k, v] : t.labels) absl::StrAppend(&o, row("label " + k, v));
  absl::StrAppend(
      &o, row("memory ops", absl::StrCat(t.ops)),
      row("ideal", absl::StrCat(FormatValue(t.peak_live_bytes, Unit::kBytes), " peak live (",
                                t.peak_live_bytes, " bytes, ", t.peak_live_objects, " objects)")));
  if (!t.cut_short.empty()) absl::StrAppend(&o, row("warning", t.cut_short));
  if (!t.note.empty()) absl::StrAppend(&o, row("note", t.note));
  return o + "</dl>\n";
}

// The policies whose RSS courses the memory profile draws at first: those
// the verdict names (the recommended, the fastest, the smallest) and glibc
// malloc, in rank order; the rest (`others`) are drawn on demand.
std::vector<const HtmlPolicy*> ProfilePolicies(const HtmlTrace& t,
                                               std::vector<const HtmlPolicy*>* others) {
  std::vector<std::string> named = {t.verdict.recommended};
  if (!t.verdict.fastest.empty()) named.push_back(t.verdict.fastest[0]);
  if (!t.verdict.smallest_rss.empty()) named.push_back(t.verdict.smallest_rss[0]);
  named.push_back("malloc");
  std::vector<const HtmlPolicy*> shown;
  for (const HtmlPolicy& p : t.policies) {
    if (!Contender(p) || p.rss_course.empty()) continue;
    (Contains(named, p.name) ? shown : *others).push_back(&p);
  }
  return shown;
}

// The ideal: live bytes as the program requested them.
charts::Series IdealSeries(const HtmlTrace& t) {
  charts::Series s{"live bytes requested (the trace; the ideal)", {0}, {0}, true};
  s.x.insert(s.x.end(), t.live_x.begin(), t.live_x.end());
  s.y.insert(s.y.end(), t.live_bytes.begin(), t.live_bytes.end());
  return s;
}

// `s` in at most `points` points for a small panel: each the highest of
// its run of points (peaks survive), at the run's last x.
charts::Series Thinned(charts::Series s, size_t points) {
  const size_t n = std::min(s.x.size(), s.y.size());
  if (n <= points || points == 0) return s;
  const size_t run = (n + points - 1) / points;
  std::vector<double> x, y;
  for (size_t i = 0; i < n; i += run) {
    const size_t end = std::min(n, i + run);
    x.push_back(s.x[end - 1]);
    y.push_back(*std::max_element(s.y.begin() + i, s.y.begin() + end));
  }
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}

charts::Series CourseSeries(const HtmlTrace& t, const HtmlPolicy& p) {
  charts::Series s{p.name, CourseX(p.rss_course.size(), t.program_ops), {}};
  for (const int64_t v : p.rss_course) s.y.push_back(static_cast<double>(v));
  s.x.insert(s.x.begin(), 0);
  s.y.insert(s.y.begin(), 0);
  return s;
}

// The memory profile: the ideal and the policies the verdict names on one
// chart; every other policy's course in a panel of its own against the
// ideal, on the same scale, folded away (a <details>: no script).
std::string ProfileChart(const HtmlTrace& t, const std::string& id) {
  charts::LineChart c;
  c.id = id;
  c.title = "Memory profile: live bytes requested (trace) and each policy's RSS above its baseline";
  c.x = {"replay op index", Unit::kCount, true, /*tight=*/true};
  c.y = {"bytes", Unit::kBytes};
  c.series.push_back(IdealSeries(t));
  std::vector<const HtmlPolicy*> others;
  const std::vector<const HtmlPolicy*> shown = ProfilePolicies(t, &others);
  for (const HtmlPolicy* p : shown) c.series.push_back(CourseSeries(t, *p));
  c.height = 340;
  c.distinct_dashes = true;  // the verdict's policies often share a course
  const size_t readings = !shown.empty()    ? shown[0]->rss_course.size()
                          : !others.empty() ? others[0]->rss_course.size()
                                            : 0;
  c.note = absl::StrCat(
      "RSS is read ", readings,
      " times over each run (the run whose time is the median); live bytes are as the program "
      "requested them, before any allocator's rounding or headers.",
      others.empty() ? ""
                     : absl::StrCat(" Drawn: the policies the verdict names and glibc malloc; the ",
                                    others.size(), " others below, one panel each."));
  std::string o = charts::RenderLineChart(c);
  if (others.empty()) return o;
  // One scale for the panels, the main chart's included.
  double top = 0;
  for (const double v : t.live_bytes) top = std::max(top, v);
  for (const HtmlPolicy& p : t.policies) {
    if (!Contender(p)) continue;
    for (const int64_t v : p.rss_course) top = std::max(top, static_cast<double>(v));
  }
  // A panel is ~400 pixels wide: 150 points of a course draw the same
  // shape, and keep the page small with dozens of panels.
  charts::Series ideal = Thinned(IdealSeries(t), 150);
  ideal.name = "the ideal";
  std::vector<std::string> panels;
  for (size_t k = 0; k < others.size(); ++k) {
    charts::LineChart m;
    m.id = absl::StrCat(id, "-more-", k);
    m.title = others[k]->name;
    m.x = c.x;
    m.x.label = "op";
    m.y = c.y;
    m.y.label = "";
    m.y.reach = top;
    m.width = 600;
    m.height = 180;
    m.series.push_back(ideal);
    m.series.push_back(Thinned(CourseSeries(t, *others[k]), 150));
    panels.push_back(charts::RenderLineChart(m));
  }
  absl::StrAppend(&o, "<details class=\"more\" id=\"", Escape(id), "-more\"><summary>The other ",
                  others.size(), " policies' RSS, one panel each against the ideal</summary>",
                  charts::SmallMultiples(panels, 380), "</details>\n");
  return o;
}

std::string SpeedChart(const HtmlTrace& t, const std::string& id) {
  charts::IntervalChart c;
  c.id = id;
  c.title = absl::StrCat("Time per memory op (", t.interval_kind, ")");
  c.x = SpeedAxis("ns per memory op", /*frame=*/true);
  c.highlight_label = "tied with the fastest (paired ratio's CI includes 1 or is within noise)";
  const HtmlPolicy* best = nullptr;
  for (const HtmlPolicy& p : t.policies) {
    if (Contender(p) && (best == nullptr || p.ns_per_op.value < best->ns_per_op.value)) best = &p;
  }
  if (best != nullptr && best->ns_per_op.has_interval()) {
    c.reference = best->ns_per_op.hi;
    c.reference_label = "the fastest's upper bound";
  }
  const std::map<std::string, int> ranks = Ranks(t);
  for (const HtmlPolicy& p : t.policies) {
    charts::IntervalRow r;
    // Numbered as in the table and the scatter.
    r.label = ranks.count(p.name) ? absl::StrCat(ranks.at(p.name), ". ", p.name) : p.name;
    if (!p.ok) {
      r.status = p.status;
    } else {
      r.marks.push_back(
          {0, p.ns_per_op.value, p.ns_per_op.lo, p.ns_per_op.hi, p.ns_per_op.has_interval()});
      r.highlighted = p.tied_fastest;
      r.note = p.floor ? "floor" : (&p == best ? "fastest" : (p.tied_fastest ? "tied" : ""));
    }
    c.rows.push_back(std::move(r));
  }
  c.note =
      "Shaded: the policies tied with the fastest. \"floor\": the bump allocator, the "
      "harness's own cost, not a contender.";
  return charts::RenderIntervalChart(c);
}

std::string ScatterChart(const HtmlTrace& t, const std::string& id) {
  charts::ScatterChart c;
  c.id = id;
  c.title = "Speed against peak RSS (lower left is better)";
  c.x = SpeedAxis("ns per memory op, median", /*frame=*/true);
  c.y = {"peak RSS above baseline", Unit::kBytes, /*include_zero=*/false};
  c.y.frame = true;
  c.y.log_if_wide = true;
  const std::map<std::string, int> ranks = Ranks(t);
  for (const HtmlPolicy& p : t.policies) {
    if (Contender(p) && p.peak_rss.has_value()) {
      c.points.push_back(
          {p.name, p.ns_per_op.value, p.peak_rss.value, 0, absl::StrCat(ranks.at(p.name))});
    }
  }
  c.note =
      "Each point is numbered by its rank (as in the table). On the front (ringed): no "
      "other policy is both faster and smaller.";
  return charts::RenderScatterChart(c);
}

// The article's five policy dimensions, in the order of the policy name
// pool/<storage>/<growth>/<threading>/<holding>/<delete>.
struct Dimension {
  const char* name;
  std::vector<std::string> values;
};
const std::vector<Dimension>& Dimensions() {
  static const auto* d = new std::vector<Dimension>{{"storage", {"simple", "boundary", "ordered"}},
                                                    {"growth", {"lin", "exp"}},
                                                    {"threading", {"st", "mt"}},
                                                    {"holding", {"stack", "single"}},
                                                    {"delete", {"free", "keep"}}};
  return *d;
}

std::string EffectsHtml(const HtmlTrace& t, const std::string& id) {
  std::vector<std::string> panels;
  size_t dims_shown = 0;
  for (size_t k = 0; k < Dimensions().size(); ++k) {
    const Dimension& dim = Dimensions()[k];
    // Policies that agree in every other dimension, by that agreement.
    std::map<std::string, std::vector<std::pair<size_t, const HtmlPolicy*>>> groups;
    for (const HtmlPolicy& p : t.policies) {
      if (!Contender(p)) continue;
      std::vector<std::string> parts = absl::StrSplit(p.name, '/');
      if (parts.size() != 6 || parts[0] != "pool") continue;
      const auto v = std::find(dim.values.begin(), dim.values.end(), parts[k + 1]);
      if (v == dim.values.end()) continue;
      parts[k + 1] = "*";
      groups[absl::StrJoin(parts.begin() + 1, parts.end(), "/")].push_back(
          {static_cast<size_t>(v - dim.values.begin()), &p});
    }
    charts::IntervalChart speed, rss;
    speed.id = absl::StrCat(id, "-", dim.name, "-speed");
    rss.id = absl::StrCat(id, "-", dim.name, "-rss");
    speed.title = absl::StrCat(dim.name, ": ns per memory op");
    rss.title = absl::StrCat(dim.name, ": peak RSS");
    speed.x = SpeedAxis("ns per memory op", /*frame=*/false);
    // Differences between policies are what the panel is for.
    rss.x = {"peak RSS above baseline", Unit::kBytes, /*include_zero=*/false};
    rss.x.log_if_wide = true;
    speed.series_names = rss.series_names = dim.values;
    speed.width = rss.width = 620;
    for (const auto& [key, members] : groups) {
      if (members.size() < 2) continue;
      charts::IntervalRow sr, rr;
      sr.label = rr.label = "pool/" + key;
      for (const auto& [value, p] : members) {
        sr.marks.push_back({value, p->ns_per_op.value, p->ns_per_op.lo, p->ns_per_op.hi,
                            p->ns_per_op.has_interval()});
        rr.marks.push_back(
            {value, p->peak_rss.value, p->peak_rss.lo, p->peak_rss.hi, p->peak_rss.has_interval()});
      }
      speed.rows.push_back(std::move(sr));
      rss.rows.push_back(std::move(rr));
    }
    // One row compares one pair: the table says as much.
    if (speed.rows.size() < 2) continue;
    ++dims_shown;
    panels.push_back(charts::RenderIntervalChart(speed));
    panels.push_back(charts::RenderIntervalChart(rss));
  }
  if (dims_shown == 0) {
    return "<p class=\"note\">Too few article policies here to compare a dimension over two "
           "or more settings of the others; run with <code>--policies='pool/*'</code> to see "
           "each dimension's effect.</p>\n";
  }
  return absl::StrCat(
      "<p class=\"note\">The article's policies are named "
      "<code>pool/storage/growth/threading/holding/delete</code>. In each panel a row holds the "
      "policies that agree in every dimension but the panel's (<code>*</code> marks it), and "
      "the colours are that dimension's values; a dimension compared in fewer than two rows "
      "has no panel.</p>\n",
      charts::SmallMultiples(panels, 560));
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
        for (const HtmlTrace& t : traces) h.push_back(t.path);
        return h;
      }(),
      [&] {
        std::vector<bool> numeric(traces.size() + 1, true);
        numeric[0] = false;
        return numeric;
      }());
  for (const HtmlTrace& t : traces) {
    m.rows.push_back(t.path);
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
    absl::StrAppend(&verdicts, "<li><a href=\"#trace-", i, "\">", Escape(t.path), "</a>: ",
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

}  // namespace

std::string FormatHtmlPage(const std::vector<HtmlTrace>& traces, const HtmlContext& ctx,
                           const std::string& command_line) {
  charts::HtmlPage page("alloctrace replay report");
  if (!command_line.empty()) page.AddSubtitle(command_line);
  page.AddSubtitle(absl::StrCat(ctx.date, " on ", ctx.machine));
  if (!ctx.method.empty()) page.AddSubtitle(ctx.method);
  if (traces.size() > 1) page.AddSection("overview", "All traces", OverviewHtml(traces));
  for (size_t i = 0; i < traces.size(); ++i) {
    const HtmlTrace& t = traces[i];
    const std::string id = absl::StrCat("trace-", i);
    std::string body = VerdictHtml(t, id + "-verdict");
    absl::StrAppend(&body, FactsHtml(t), ProfileChart(t, id + "-profile"),
                    SpeedChart(t, id + "-speed"), ScatterChart(t, id + "-pareto"),
                    "<h3>The article's policy effects</h3>", EffectsHtml(t, id + "-effects"),
                    "<h3>Every policy</h3>", TableHtml(t, id + "-table"));
    page.AddSection(id, t.path, body);
  }
  page.AddHtml(
      "<footer><p class=\"note\">ns/op: timed loop over memory ops (allocs, frees, reallocs). "
      "x malloc: glibc malloc's ns/op over the policy's (above 1: faster). Peak RSS: the run's "
      "highest resident memory above its own baseline; x ideal: that over the most bytes ever "
      "live as requested. Written by alloctrace replayer --format=html.</p></footer>");
  return page.Render();
}

}  // namespace alloctrace
