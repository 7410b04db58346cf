// The HTML report's charts (html_parts.h): the memory profile, speed, the
// Pareto scatter and the article's policy effects, drawn from the view.
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
#include "alloctrace/replayer/reports/html_parts.h"

namespace alloctrace::html_internal {
namespace {

using charts::Escape;
using charts::FormatValue;
using charts::Unit;

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

}  // namespace

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

}  // namespace alloctrace::html_internal
