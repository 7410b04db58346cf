// The chart kinds of svg.h, drawn from the parts in svg_parts.h.
//
// Over 500 lines: six chart kinds, each a renderer and its named steps,
// which share the helpers at the top; a file per chart kind is the way to
// split it further.
#include "alloctrace/charts/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg_parts.h"

namespace alloctrace::charts {

using svg_parts::AddSentence;
using svg_parts::AxisPlan;
using svg_parts::Chars;
using svg_parts::Dark;
using svg_parts::DivergingColour;
using svg_parts::Domain;
using svg_parts::Dot;
using svg_parts::DotSwatch;
using svg_parts::Figure;
using svg_parts::FitText;
using svg_parts::Hex;
using svg_parts::kCharPx;
using svg_parts::kDashes;
using svg_parts::kFront;
using svg_parts::Legend;
using svg_parts::LineSwatch;
using svg_parts::MakeScale;
using svg_parts::MakeXYFrame;
using svg_parts::N;
using svg_parts::NoData;
using svg_parts::PlanAxis;
using svg_parts::Reduce;
using svg_parts::Scale;
using svg_parts::Short;
using svg_parts::XAxis;
using svg_parts::XYFrame;
using svg_parts::YAxis;

namespace {

// Where a framed axis cuts `values` (svg.h's FrameLimit); +infinity, every
// value on the scale, when `axis` is not framed.
double OffScaleLimit(const Axis& axis, const std::vector<double>& values) {
  return axis.frame ? FrameLimit(values) : std::numeric_limits<double>::infinity();
}

// The chart's note, then a sentence naming the marks off the scale (`where`
// says how they are drawn), if any.
std::string OffScaleNote(absl::string_view note, absl::string_view where,
                         const std::vector<std::string>& names) {
  if (names.empty()) return std::string(note);
  return AddSentence(
      note, absl::StrCat("Off the scale (", where, "): ", absl::StrJoin(names, ", "), "."));
}

// The legend's marker of the i-th series of dots.
std::string SeriesSwatch(size_t i, double x, double y) { return DotSwatch(PaletteColor(i), x, y); }

}  // namespace

std::string RenderLineChart(const LineChart& c) {
  Domain dx, dy;
  for (const Series& s : c.series) {
    for (const double v : s.x) dx.Add(v);
    for (const double v : s.y) dy.Add(v);
  }
  if (dx.empty() || dy.empty()) return NoData("line", c.id, c.title, c.note);
  const double left = 78, right = c.width - 16.0, top = 12, bottom = c.height - 46.0;
  const XYFrame frame = MakeXYFrame(dx, dy, c.x, c.y, left, right, top, bottom);
  const Scale& sx = frame.sx;
  const Scale& sy = frame.sy;
  std::string plot = frame.axes;
  std::vector<size_t> drawn;  // the legend names these only
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    std::vector<std::pair<double, double>> pts;
    for (size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (std::isfinite(s.x[k]) && std::isfinite(s.y[k])) pts.emplace_back(sx(s.x[k]), sy(s.y[k]));
    }
    if (pts.empty()) continue;
    drawn.push_back(i);
    pts = Reduce(pts);
    std::string d;
    for (size_t k = 0; k < pts.size(); ++k) {
      absl::StrAppend(&d, k == 0 ? "M" : "L", N(pts[k].first), " ", N(pts[k].second));
    }
    if (pts.size() == 1) absl::StrAppend(&d, "h1");
    const char* dash = kDashes[(c.distinct_dashes ? i : i / 8) % 4];
    absl::StrAppend(&plot, "<path class=\"series\" d=\"", d, "\" fill=\"none\" stroke=\"",
                    PaletteColor(i), "\" stroke-width=\"", s.emphasized ? "2.5" : "1.5",
                    "\" stroke-linejoin=\"round\"",
                    *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : "", "><title>",
                    Escape(s.name), "</title></path>");
  }
  // One series needs no legend: the caption and axis name it.
  std::vector<std::string> names;
  if (drawn.size() > 1) {
    for (const size_t i : drawn) names.push_back(c.series[i].name);
  }
  int legend_h = 0;
  const std::string legend =
      names.empty() ? ""
                    : Legend(
                          names, left, c.height, c.width,
                          [&](size_t k, double x, double y) {
                            return LineSwatch(drawn[k], x, y, c.series[drawn[k]].emphasized,
                                              c.distinct_dashes);
                          },
                          &legend_h);
  const int h = c.height + legend_h;
  return Figure("line", c.id, c.title, c.width, h, absl::StrCat(plot, legend), c.note);
}

namespace {

// An interval chart's x extent and layout: row labels left of the plot, a
// zone past its right end for the marks off the scale, then the rows' notes.
struct IntervalLayout {
  double limit = std::numeric_limits<double>::infinity();  // marks past it are off the scale
  std::vector<std::string> off_rows;                       // rows with a mark off the scale
  Axis axis;                                               // c.x, log if wide
  AxisPlan px;
  Scale sx;
  bool many = false;  // tick labels over the plot too
  size_t nseries = 1;
  double row_h = 18, label_w = 0, off_w = 0, left = 0, right = 0, note_x = 0, top = 0, bottom = 0;
};

// The marks on the scale (their intervals too) and the reference line span
// the axis; the rows with a mark past `l->limit` are listed.
Domain IntervalDomain(const IntervalChart& c, IntervalLayout* l) {
  std::vector<double> values;
  for (const IntervalRow& r : c.rows) {
    for (const IntervalMark& m : r.marks) values.push_back(m.value);
  }
  l->limit = OffScaleLimit(c.x, values);
  Domain d;
  for (const IntervalRow& r : c.rows) {
    bool off = false;
    for (const IntervalMark& m : r.marks) {
      if (m.value > l->limit) {
        off = true;
        continue;
      }
      d.Add(m.value);
      if (m.has_interval) {
        d.Add(m.lo);
        d.Add(m.hi);
      }
    }
    if (off) l->off_rows.push_back(r.label);
  }
  if (c.reference >= 0) d.Add(c.reference);
  return d;
}

// The extent and layout of `c`, which has rows.
IntervalLayout LayOutIntervals(const IntervalChart& c) {
  IntervalLayout l;
  const Domain d = IntervalDomain(c, &l);
  l.axis = svg_parts::Decided(c.x, d);
  l.many = c.rows.size() > 20;
  l.nseries = std::max<size_t>(1, c.series_names.size());
  l.label_w = std::min(250.0, c.width * 0.38);
  l.off_w = l.off_rows.empty() ? 0 : 130;
  l.left = l.label_w + 10;
  l.right = c.width - 64.0 - l.off_w;
  l.note_x = c.width - 58.0;
  l.top = l.many ? 24 : 8;
  l.bottom = l.top + l.row_h * c.rows.size();
  l.px = PlanAxis(d, l.axis, 7);
  l.sx = MakeScale(l.px, l.left, l.right);
  return l;
}

// The bands of the highlighted rows (under the grid), the x axis, and the
// reference line.
std::string IntervalBackdrop(const IntervalChart& c, const IntervalLayout& l) {
  std::string o;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    if (!c.rows[i].highlighted) continue;
    absl::StrAppend(&o, "<rect class=\"band\" x=\"0\" y=\"", N(l.top + i * l.row_h), "\" width=\"",
                    c.width, "\" height=\"", N(l.row_h), "\"/>");
  }
  absl::StrAppend(&o, XAxis(l.sx, l.px.ticks, l.axis, l.top, l.bottom, l.many));
  if (c.reference >= 0) {
    const std::string x = N(l.sx(c.reference));
    absl::StrAppend(&o, "<line class=\"reference\" x1=\"", x, "\" x2=\"", x, "\" y1=\"", N(l.top),
                    "\" y2=\"", N(l.bottom), "\" stroke=\"", kFront,
                    "\" stroke-dasharray=\"4 3\"><title>", Escape(c.reference_label),
                    "</title></line>");
  }
  return o;
}

// A mark of row `r` centred on `mid`: its dot and error bar, or, off the
// scale, a bar that runs off it, a break and the dot past it.
std::string IntervalMarkSvg(const IntervalChart& c, const IntervalRow& r, const IntervalMark& m,
                            double mid, const IntervalLayout& l) {
  const size_t nseries = l.nseries;
  const double y = mid + (nseries > 1 ? (m.series - (nseries - 1) / 2.0) * 3.5 : 0);
  const char* colour = nseries > 1 ? PaletteColor(m.series) : "#0072B2";
  std::string tip =
      absl::StrCat(r.label, m.series < c.series_names.size() ? " " + c.series_names[m.series] : "",
                   ": ", FormatValue(m.value, c.x.unit));
  if (m.value > l.limit) {
    const double brk = l.right + 10;
    return absl::StrCat(
        "<path class=\"offscale-bar\" d=\"M", N(l.left), " ", N(y), "H", N(brk - 3), "\" stroke=\"",
        colour, "\" stroke-opacity=\"0.3\" stroke-width=\"4\"/>", "<path class=\"break\" d=\"M",
        N(brk - 5), " ", N(y + 6), "l5 -12M", N(brk), " ", N(y + 6),
        "l5 -12\" stroke=\"#555\" fill=\"none\"/>",
        Dot("dot offscale", brk + 16, y, "3.5", colour, "", absl::StrCat(tip, " (off the scale)")));
  }
  std::string o;
  if (m.has_interval) {
    const Scale& sx = l.sx;
    absl::StrAppend(&tip, " [", FormatValue(m.lo, c.x.unit), ", ", FormatValue(m.hi, c.x.unit),
                    "]");
    absl::StrAppend(&o, "<path class=\"ci\" d=\"M", N(sx(m.lo)), " ", N(y - 3), "v6M", N(sx(m.lo)),
                    " ", N(y), "H", N(sx(m.hi)), "M", N(sx(m.hi)), " ", N(y - 3), "v6\" stroke=\"",
                    colour, "\" fill=\"none\"/>");
  }
  return o + Dot("dot", l.sx(m.value), y, "3.5", colour, "", tip);
}

// Row i: its label, then its status or its marks with the values of those
// off the scale written past the break, then its note.
std::string IntervalRowSvg(const IntervalChart& c, size_t i, const IntervalLayout& l) {
  const IntervalRow& r = c.rows[i];
  const double mid = l.top + (i + 0.5) * l.row_h;
  std::string o = FitText(r.label, l.label_w - 4,
                          absl::StrCat("class=\"row-label\" x=\"", N(l.label_w), "\" y=\"", N(mid),
                                       "\" dy=\"0.35em\" text-anchor=\"end\""));
  if (!r.status.empty()) {
    return o + FitText(r.status, l.right - l.left,
                       absl::StrCat("class=\"status\" x=\"", N(l.left + 4), "\" y=\"", N(mid),
                                    "\" dy=\"0.35em\""));
  }
  std::vector<std::string> off_values;
  for (const IntervalMark& m : r.marks) {
    absl::StrAppend(&o, IntervalMarkSvg(c, r, m, mid, l));
    if (m.value > l.limit) off_values.push_back(FormatValue(m.value, c.x.unit));
  }
  if (!off_values.empty()) {
    absl::StrAppend(&o, FitText(absl::StrJoin(off_values, ", "), l.off_w - 34,
                                absl::StrCat("class=\"offscale-value\" x=\"", N(l.right + 34),
                                             "\" y=\"", N(mid), "\" dy=\"0.35em\"")));
  }
  if (!r.note.empty()) {
    absl::StrAppend(
        &o, FitText(r.note, 60,
                    absl::StrCat("x=\"", N(l.note_x), "\" y=\"", N(mid), "\" dy=\"0.35em\"")));
  }
  return o;
}

// The legend: the series (when more than one), the band, the reference
// line; empty, `*height` 0, when there is none of them.
std::string IntervalLegend(const IntervalChart& c, const IntervalLayout& l, double top,
                           int* height) {
  *height = 0;
  std::vector<std::string> names;
  if (l.nseries > 1) names = c.series_names;
  const bool band = !c.highlight_label.empty();
  if (band) names.push_back(c.highlight_label);
  const bool reference = c.reference >= 0 && !c.reference_label.empty();
  if (reference) names.push_back(c.reference_label);
  if (names.empty()) return "";
  auto swatch = [&](size_t i, double x, double y) -> std::string {
    if (l.nseries > 1 && i < c.series_names.size()) return SeriesSwatch(i, x, y);
    if (band && i == names.size() - 1 - reference) {
      return absl::StrCat("<rect class=\"band\" x=\"", N(x), "\" y=\"", N(y - 6),
                          "\" width=\"18\" height=\"12\"/>");
    }
    return absl::StrCat("<line x1=\"", N(x + 9), "\" x2=\"", N(x + 9), "\" y1=\"", N(y - 7),
                        "\" y2=\"", N(y + 7), "\" stroke=\"", kFront,
                        "\" stroke-dasharray=\"4 3\"/>");
  };
  return Legend(names, l.left, top, c.width, swatch, height);
}

}  // namespace

std::string RenderIntervalChart(const IntervalChart& c) {
  if (c.rows.empty()) return NoData("interval", c.id, c.title, c.note);
  const IntervalLayout l = LayOutIntervals(c);
  std::string plot = IntervalBackdrop(c, l);
  for (size_t i = 0; i < c.rows.size(); ++i) absl::StrAppend(&plot, IntervalRowSvg(c, i, l));
  const double legend_top = l.bottom + 40;
  int legend_h = 0;
  const std::string legend = IntervalLegend(c, l, legend_top, &legend_h);
  const int h = static_cast<int>(legend_top) + legend_h;
  return Figure("interval", c.id, c.title, c.width, h, absl::StrCat(plot, legend),
                OffScaleNote(c.note, "past the break, value written", l.off_rows));
}

std::vector<size_t> ParetoFront(const std::vector<Point>& points) {
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i].x) && std::isfinite(points[i].y)) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].x != points[b].x) return points[a].x < points[b].x;
    return points[a].y < points[b].y;
  });
  std::vector<size_t> front;
  double best_y = std::numeric_limits<double>::infinity();
  for (const size_t i : order) {
    if (points[i].y < best_y) {
      front.push_back(i);
      best_y = points[i].y;
    }
  }
  return front;
}

namespace {

// A scatter chart worked out: the points drawn, the limits of framed axes,
// the plot's box and where each point goes.
struct ScatterPlan {
  std::vector<size_t> shown;  // the points with both figures, in order
  // Past these a point is off the scale; any_off_*: some point is.
  double limit_x = std::numeric_limits<double>::infinity(), limit_y = limit_x;
  bool any_off_x = false, any_off_y = false;
  // The plot is [left, right] x [plot_top, bottom]. The zones for points off
  // the scale run from its right edge to outer_right and from top to it.
  double left = 78, top = 12, bottom = 0, right = 0, outer_right = 0, plot_top = 0;
  bool key_beside = false;  // the key beside the plot, else under it
  XYFrame frame;
  std::vector<std::pair<double, double>> at;  // where shown[k] is drawn
  std::vector<bool> off;                      // shown[k] is off the scale
  std::vector<size_t> front;                  // the Pareto front, if marked
  std::vector<bool> on_front;                 // by index in c.points
};

// Sets the limits of framed axes and the any_off flags; returns the x and y
// domains of the points on the scale.
std::pair<Domain, Domain> ScatterExtent(const ScatterChart& c, ScatterPlan* p) {
  std::vector<double> xs, ys;
  for (const size_t i : p->shown) {
    xs.push_back(c.points[i].x);
    ys.push_back(c.points[i].y);
  }
  p->limit_x = OffScaleLimit(c.x, xs);
  p->limit_y = OffScaleLimit(c.y, ys);
  Domain dx, dy;
  for (const size_t i : p->shown) {
    const Point& pt = c.points[i];
    pt.x <= p->limit_x ? dx.Add(pt.x) : void(p->any_off_x = true);
    pt.y <= p->limit_y ? dy.Add(pt.y) : void(p->any_off_y = true);
  }
  return {dx, dy};
}

// The plot's box, room for the key and the zones off the scale, and the
// scales and axes.
void LayOutScatter(const ScatterChart& c, ScatterPlan* p) {
  auto [dx, dy] = ScatterExtent(c, p);
  const Axis ax = svg_parts::Decided(c.x, dx), ay = svg_parts::Decided(c.y, dy);
  // Padded: no point sits on an axis line.
  dx = svg_parts::Padded(dx, ax.log, 0.04);
  dy = svg_parts::Padded(dy, ay.log, 0.06);
  // The key (tag and name of every point) goes beside the plot when it fits
  // the plot's height, else under it, the plot then taking the full width.
  constexpr double kKeyRow = svg_parts::kLegendRowPx;
  p->bottom = c.height - 46.0;
  p->key_beside = (p->shown.size() + 1) * kKeyRow + 8 <= p->bottom - p->top;
  p->outer_right = p->key_beside ? c.width - 260.0 : c.width - 16.0;
  // Zones past the plot's right and top edges hold the points off the scale.
  p->right = p->outer_right - (p->any_off_x ? 30 : 0);
  p->plot_top = p->top + (p->any_off_y ? 26 : 0);
  p->frame = MakeXYFrame(dx, dy, ax, ay, p->left, p->right, p->plot_top, p->bottom);
}

// Where each shown point is drawn, on the scale or in a zone past it, and
// which points are on the Pareto front.
void PlacePoints(const ScatterChart& c, ScatterPlan* p) {
  for (const size_t i : p->shown) {
    const Point& pt = c.points[i];
    const bool ox = pt.x > p->limit_x, oy = pt.y > p->limit_y;
    p->at.emplace_back(ox ? p->right + 6 + (p->outer_right - p->right - 6) / 2 : p->frame.sx(pt.x),
                       oy ? p->top + (p->plot_top - p->top - 6) / 2 : p->frame.sy(pt.y));
    p->off.push_back(ox || oy);
  }
  if (c.pareto) p->front = ParetoFront(c.points);
  p->on_front.assign(c.points.size(), false);
  for (const size_t i : p->front) p->on_front[i] = true;
}

// The plan of `c`; only `shown` is set when no point has both figures.
ScatterPlan PlanScatter(const ScatterChart& c) {
  ScatterPlan p;
  for (size_t i = 0; i < c.points.size(); ++i) {
    if (std::isfinite(c.points[i].x) && std::isfinite(c.points[i].y)) p.shown.push_back(i);
  }
  if (p.shown.empty()) return p;
  LayOutScatter(c, &p);
  PlacePoints(c, &p);
  return p;
}

// The grey zones past the plot's right and top edges, where they are used.
std::string OffScaleZones(const ScatterChart& c, const ScatterPlan& p) {
  std::string o;
  if (p.any_off_x) {
    absl::StrAppend(&o, "<rect class=\"offscale-zone\" x=\"", N(p.right + 6), "\" y=\"", N(p.top),
                    "\" width=\"", N(p.outer_right - p.right - 6), "\" height=\"",
                    N(p.bottom - p.top), "\" fill=\"#f2f2f2\"><title>off the scale: slower than ",
                    Escape(FormatValue(p.limit_x, c.x.unit)), "</title></rect>");
  }
  if (p.any_off_y) {
    absl::StrAppend(&o, "<rect class=\"offscale-zone\" x=\"", N(p.left), "\" y=\"", N(p.top),
                    "\" width=\"", N(p.outer_right - p.left), "\" height=\"",
                    N(p.plot_top - p.top - 6), "\" fill=\"#f2f2f2\"><title>off the scale: above ",
                    Escape(FormatValue(p.limit_y, c.y.unit)), "</title></rect>");
  }
  return o;
}

// The front as a staircase (nothing below and left of it exists), when it
// has two points or more.
std::string ParetoLine(const ScatterPlan& p) {
  if (p.front.size() < 2) return "";
  std::vector<size_t> where(p.on_front.size(), 0);  // point index -> index in `shown`
  for (size_t k = 0; k < p.shown.size(); ++k) where[p.shown[k]] = k;
  std::string d;
  for (size_t k = 0; k < p.front.size(); ++k) {
    const auto [x, y] = p.at[where[p.front[k]]];
    absl::StrAppend(&d, k == 0 ? "M" : "H", N(x), k == 0 ? " " : "V", N(y));
  }
  return absl::StrCat("<path class=\"pareto-line\" d=\"", d, "\" fill=\"none\" stroke=\"", kFront,
                      "\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>");
}

// Point i's tag: its own, else its 1-based index.
std::string PointTag(const ScatterChart& c, size_t i) {
  return c.points[i].tag.empty() ? absl::StrCat(i + 1) : c.points[i].tag;
}

// Point i's colour, in the plot and in the key: its series' with several
// series, else blue, darker on the front.
const char* PointFill(const ScatterChart& c, const ScatterPlan& p, size_t i) {
  return c.series_names.size() > 1 ? PaletteColor(c.points[i].series)
         : p.on_front[i]           ? "#0072B2"
                                   : "#56B4E9";
}

// The dot of the k-th shown point, ringed on the front; its tooltip has the
// point's tag, name and figures.
std::string PointDot(const ScatterChart& c, const ScatterPlan& p, size_t k) {
  const size_t i = p.shown[k];
  const Point& pt = c.points[i];
  const bool front = p.on_front[i];
  const auto [x, y] = p.at[k];
  const std::string tip =
      absl::StrCat(PointTag(c, i), " ", pt.label, ": ", c.x.label, " ", FormatValue(pt.x, c.x.unit),
                   ", ", c.y.label, " ", FormatValue(pt.y, c.y.unit),
                   front ? " (Pareto front)" : "", p.off[k] ? " (off the scale)" : "");
  return Dot(absl::StrCat("dot", front ? " pareto" : "", p.off[k] ? " offscale" : ""), x, y,
             front ? "5" : "3.5", PointFill(c, p, i),
             front ? absl::StrCat(" stroke=\"", kFront, "\" stroke-width=\"2\"")
                   : " fill-opacity=\"0.85\"",
             tip);
}

// Every point's dot and tag, the tags clear of each other and of every
// point, a leader line to each tag that had to move away: the leaders
// under the dots, the tags over them.
std::string PointMarks(const ScatterChart& c, const ScatterPlan& p) {
  constexpr double kTagH = 11, kDigitPx = 6.4;
  std::vector<double> widths;
  for (const size_t i : p.shown) widths.push_back(Chars(PointTag(c, i)) * kDigitPx + 2);
  const std::vector<LabelSpot> spots =
      PlaceLabels(p.at, widths, kTagH, 5, LabelBox{p.left + 2, p.top, p.outer_right, p.bottom - 2});
  std::string leaders, dots, tags;
  for (size_t k = 0; k < p.shown.size(); ++k) {
    const auto [x, y] = p.at[k];
    const LabelBox& b = spots[k].box;
    if (spots[k].leader) {
      absl::StrAppend(&leaders, "<line class=\"leader\" x1=\"", N(x), "\" y1=\"", N(y), "\" x2=\"",
                      N(std::clamp(x, b.x0, b.x1)), "\" y2=\"", N(std::clamp(y, b.y0, b.y1)),
                      "\" stroke=\"#999\" stroke-width=\"0.8\"/>");
    }
    absl::StrAppend(&dots, PointDot(c, p, k));
    absl::StrAppend(&tags, "<text class=\"point-label\" x=\"", N(b.x0 + 1), "\" y=\"", N(b.y1 - 2),
                    "\">", Escape(PointTag(c, p.shown[k])), "</text>");
  }
  return absl::StrCat(leaders, dots, tags);
}

// The key: each point's tag and name, off the scale its figures too; beside
// the plot, or under it from `*after_plot`, which then moves past it.
std::string ScatterKey(const ScatterChart& c, const ScatterPlan& p, double* after_plot) {
  std::vector<std::string> key;
  for (size_t k = 0; k < p.shown.size(); ++k) {
    const Point& pt = c.points[p.shown[k]];
    key.push_back(p.off[k] ? absl::StrCat(pt.label, ": ", FormatValue(pt.x, c.x.unit), ", ",
                                          FormatValue(pt.y, c.y.unit))
                           : pt.label);
  }
  auto swatch = [&](size_t k, double x, double y) {
    const size_t i = p.shown[k];
    return absl::StrCat(
        "<circle cx=\"", N(x + 3), "\" cy=\"", N(y), "\" r=\"3\" fill=\"", PointFill(c, p, i), "\"",
        p.on_front[i] ? absl::StrCat(" stroke=\"", kFront, "\" stroke-width=\"1.5\"") : "",
        "/><text class=\"point-key\" x=\"", N(x + 27), "\" y=\"", N(y),
        "\" dy=\"0.35em\" text-anchor=\"end\">", Escape(PointTag(c, i)), "</text>");
  };
  int key_h = 0;
  if (p.key_beside) {
    const double x = p.outer_right + 14;
    return absl::StrCat(
        FitText(
            p.front.empty() ? "Key:" : "Key (ringed: Pareto front):", c.width - p.outer_right - 20,
            absl::StrCat("class=\"axis-label\" x=\"", N(x), "\" y=\"", N(p.top + 4), "\"")),
        Legend(key, x, p.top + 6, static_cast<int>(p.outer_right + 15), swatch, &key_h,
               c.width - p.outer_right - 14, /*text_x=*/32));
  }
  const char* title =
      p.front.empty() ? "Key:"
                      : "Key (ringed: on the Pareto front, nothing is both faster and smaller):";
  std::string o = absl::StrCat("<text class=\"axis-label\" x=\"", N(p.left), "\" y=\"",
                               N(*after_plot + 4), "\">", Escape(title), "</text>",
                               Legend(key, p.left, *after_plot + 8, c.width, swatch, &key_h,
                                      svg_parts::kLegendItemPx, /*text_x=*/32));
  *after_plot += key_h + 14;
  return o;
}

}  // namespace

std::string RenderScatterChart(const ScatterChart& c) {
  const ScatterPlan p = PlanScatter(c);
  if (p.shown.empty()) return NoData("scatter", c.id, c.title, c.note);
  double after_plot = c.height;  // where the legends under the plot start
  const std::string key = ScatterKey(c, p, &after_plot);
  int legend_h = 0;
  const std::string legend = c.series_names.size() > 1 ? Legend(c.series_names, p.left, after_plot,
                                                                c.width, SeriesSwatch, &legend_h)
                                                       : "";
  const int h = static_cast<int>(after_plot) + legend_h;
  std::vector<std::string> off_names;
  for (size_t k = 0; k < p.shown.size(); ++k) {
    if (p.off[k]) off_names.push_back(c.points[p.shown[k]].label);
  }
  return Figure(
      "scatter", c.id, c.title, c.width, h,
      absl::StrCat(OffScaleZones(c, p), p.frame.axes, ParetoLine(p), PointMarks(c, p), key, legend),
      OffScaleNote(c.note, "in the grey zone at the plot's edge; figures in the key", off_names));
}

namespace {

// The heat map's row labels are kHeatLabelW wide, its column labels take
// kHeatColLabelH above the cells (they run up at 60 degrees: 200 px of
// height holds about 33 characters), and its rows are kHeatCellH tall.
constexpr double kHeatLabelW = 170, kHeatColLabelH = 200, kHeatCellH = 22;

// Cell (i, j), `cell_w` wide: coloured by its value on the diverging scale,
// the value written in it when it fits; grey when there is no figure.
std::string HeatCell(const HeatMap& m, size_t i, size_t j, double cell_w) {
  const double v = i < m.values.size() && j < m.values[i].size()
                       ? m.values[i][j]
                       : std::numeric_limits<double>::quiet_NaN();
  const double x = kHeatLabelW + j * cell_w, y = kHeatColLabelH + i * kHeatCellH;
  const std::string where = absl::StrCat(m.rows[i], " \xC3\x97 ", m.cols[j], ": ");
  if (!std::isfinite(v) || v <= 0) {
    return absl::StrCat("<rect class=\"cell missing\" x=\"", N(x), "\" y=\"", N(y), "\" width=\"",
                        N(cell_w), "\" height=\"", N(kHeatCellH),
                        "\" fill=\"#f2f2f2\" stroke=\"#fff\"><title>", Escape(where),
                        "no figure</title></rect>");
  }
  const unsigned rgb = DivergingColour(std::log2(v / m.center) / m.span_log2);
  std::string o = absl::StrCat("<rect class=\"cell\" x=\"", N(x), "\" y=\"", N(y), "\" width=\"",
                               N(cell_w), "\" height=\"", N(kHeatCellH), "\" fill=\"", Hex(rgb),
                               "\" stroke=\"#fff\"><title>", Escape(where), Escape(m.value_label),
                               " ", Escape(FormatValue(v, m.unit)), "</title></rect>");
  if (cell_w >= 34) {
    absl::StrAppend(&o, "<text x=\"", N(x + cell_w / 2), "\" y=\"", N(y + kHeatCellH / 2),
                    "\" dy=\"0.35em\" text-anchor=\"middle\" class=\"cell-value\"",
                    Dark(rgb) ? " fill=\"#fff\"" : "", ">", Escape(Short(v)), "</text>");
  }
  return o;
}

// The colour key from `top` down: nine steps from center / 2^span to
// center * 2^span, what each end means under them.
std::string HeatMapKey(const HeatMap& m, double top) {
  const double left = kHeatLabelW;
  std::string o =
      absl::StrCat("<g class=\"legend\"><text x=\"", N(left - 6), "\" y=\"", N(top + 9),
                   "\" dy=\"0.35em\" text-anchor=\"end\">", Escape(m.value_label), "</text>");
  for (int k = -4; k <= 4; ++k) {
    const double x = left + (k + 4) * 44;
    const double v = m.center * std::pow(2.0, m.span_log2 * k / 4);
    absl::StrAppend(&o, "<rect x=\"", N(x), "\" y=\"", N(top),
                    "\" width=\"44\" height=\"18\" fill=\"", Hex(DivergingColour(k / 4.0)),
                    "\"/><text x=\"", N(x + 22), "\" y=\"", N(top + 30),
                    "\" text-anchor=\"middle\">", Escape(FormatValue(v, m.unit)), "</text>");
  }
  absl::StrAppend(&o, "<text x=\"", N(left), "\" y=\"", N(top + 46), "\">\xE2\x86\x90 ",
                  Escape(m.low_meaning), "</text><text x=\"", N(left + 9 * 44), "\" y=\"",
                  N(top + 46), "\" text-anchor=\"end\">", Escape(m.high_meaning),
                  " \xE2\x86\x92</text></g>");
  return o;
}

}  // namespace

std::string RenderHeatMap(const HeatMap& m) {
  if (m.rows.empty() || m.cols.empty()) return NoData("heatmap", m.id, m.title, m.note);
  const double label_w = kHeatLabelW, top = kHeatColLabelH;
  const double cell_w = std::clamp((1240.0 - label_w) / m.cols.size(), 16.0, 64.0);
  const double width = label_w + cell_w * m.cols.size() + 20;
  const double bottom = top + kHeatCellH * m.rows.size();
  std::string plot;
  for (size_t j = 0; j < m.cols.size(); ++j) {
    const double x = label_w + (j + 0.5) * cell_w;
    absl::StrAppend(&plot, FitText(m.cols[j], (kHeatColLabelH - 8) / 0.87,
                                   absl::StrCat("transform=\"translate(", N(x + 3), ",", N(top - 6),
                                                ") rotate(-60)\"")));
  }
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const double y = top + i * kHeatCellH;
    absl::StrAppend(&plot,
                    FitText(m.rows[i], label_w - 8,
                            absl::StrCat("x=\"", N(label_w - 6), "\" y=\"", N(y + kHeatCellH / 2),
                                         "\" dy=\"0.35em\" text-anchor=\"end\"")));
    for (size_t j = 0; j < m.cols.size(); ++j) absl::StrAppend(&plot, HeatCell(m, i, j, cell_w));
  }
  const double key_top = bottom + 16;
  absl::StrAppend(&plot, HeatMapKey(m, key_top));
  const int w = static_cast<int>(std::max(width, label_w + 9 * 44 + 20));
  const int h = static_cast<int>(key_top + 56);
  return Figure("heatmap", m.id, m.title, w, h, plot, m.note);
}

std::string RenderBarChart(const BarChart& c) {
  if (c.bars.empty()) return NoData("bar", c.id, c.title, c.note);
  Domain d;
  for (const Bar& b : c.bars) d.Add(b.value);
  const double left = 78, right = c.width - 16.0, top = 16;
  size_t longest = 1;
  for (const Bar& b : c.bars) longest = std::max(longest, Chars(b.label));
  const double slot = (right - left) / c.bars.size();
  const bool rotate = longest * kCharPx > slot - 4;
  const double label_h = rotate ? std::min(110.0, longest * kCharPx * 0.75 + 10) : 18;
  const double bottom = c.height - 30.0 - label_h;
  Axis y = c.y;
  y.include_zero = true;
  const AxisPlan py = PlanAxis(d, y, 6);
  const std::vector<double>& yt = py.ticks;
  const Scale sy = MakeScale(py, bottom, top);
  std::string plot = YAxis(sy, yt, c.y, left, right);
  const bool values = c.bars.size() <= 32;
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    const double w = std::min(slot * 0.76, 64.0);
    const double x = left + (i + 0.5) * slot - w / 2;
    const double y0 = sy(std::max(0.0, b.value));
    const double hgt = std::max(b.value > 0 ? 1.0 : 0.0, sy(0) - y0);
    absl::StrAppend(&plot, "<rect class=\"bar\" x=\"", N(x), "\" y=\"", N(sy(0) - hgt),
                    "\" width=\"", N(w), "\" height=\"", N(hgt), "\" fill=\"#0072B2\"><title>",
                    Escape(b.label), ": ", Escape(FormatValue(b.value, c.y.unit)),
                    b.tooltip.empty() ? "" : "; ", Escape(b.tooltip), "</title></rect>");
    if (values && b.value > 0) {
      absl::StrAppend(&plot, "<text x=\"", N(x + w / 2), "\" y=\"", N(sy(0) - hgt - 3),
                      "\" text-anchor=\"middle\" class=\"bar-value\">",
                      Escape(FormatValue(b.value, c.y.unit)), "</text>");
    }
    const double cx = left + (i + 0.5) * slot;
    if (rotate) {
      absl::StrAppend(&plot,
                      FitText(b.label, label_h / 0.8,
                              absl::StrCat("transform=\"translate(", N(cx + 3), ",", N(bottom + 10),
                                           ") rotate(-50)\" "
                                           "text-anchor=\"end\"")));
    } else {
      absl::StrAppend(&plot, FitText(b.label, slot,
                                     absl::StrCat("x=\"", N(cx), "\" y=\"", N(bottom + 14),
                                                  "\" text-anchor=\"middle\"")));
    }
  }
  absl::StrAppend(&plot, "<line class=\"axis\" x1=\"", N(left), "\" x2=\"", N(right), "\" y1=\"",
                  N(bottom), "\" y2=\"", N(bottom), "\"/>");
  absl::StrAppend(&plot, "<text class=\"axis-label\" x=\"", N((left + right) / 2), "\" y=\"",
                  N(bottom + label_h + 18), "\" text-anchor=\"middle\">", Escape(c.x_label),
                  "</text>");
  return Figure("bar", c.id, c.title, c.width, c.height, plot, c.note);
}

std::string RenderSpanChart(const SpanChart& c) {
  if (c.spans.empty()) return NoData("span", c.id, c.title, c.note);
  const size_t rows = std::min(c.spans.size(), std::max<size_t>(1, c.max_rows));
  Domain d;
  for (size_t i = 0; i < rows; ++i) {
    d.Add(c.spans[i].start);
    d.Add(c.spans[i].end);
  }
  const double row_h = rows > 30 ? 11 : 17;
  const double label_w = 110, left = label_w + 8, right = c.width - 16.0, top = 8;
  const double bottom = top + rows * row_h;
  const AxisPlan px = PlanAxis(d, c.x, 10);
  const std::vector<double>& xt = px.ticks;
  const Scale sx = MakeScale(px, left, right);
  std::string plot = XAxis(sx, xt, c.x, top, bottom, false);
  for (size_t i = 0; i < rows; ++i) {
    const Span& s = c.spans[i];
    const double y = top + i * row_h;
    const double x0 = sx(s.start), x1 = std::max(sx(s.end), x0 + 2);
    const char* fill = s.secondary ? "#999999" : "#009E73";
    absl::StrAppend(&plot, FitText(s.label, label_w - 4,
                                   absl::StrCat("x=\"", N(label_w), "\" y=\"", N(y + row_h / 2),
                                                "\" dy=\"0.35em\" text-anchor=\"end\"",
                                                rows > 30 ? " class=\"small\"" : "")));
    absl::StrAppend(&plot, "<rect class=\"span\" x=\"", N(x0), "\" y=\"", N(y + 2), "\" width=\"",
                    N(x1 - x0), "\" height=\"", N(row_h - 4), "\" fill=\"", fill, "\"><title>",
                    Escape(s.label), ": ", Escape(FormatValue(s.start, c.x.unit)), " to ",
                    Escape(FormatValue(s.end, c.x.unit)), s.open_end ? " (still alive)" : "",
                    s.tooltip.empty() ? "" : "; ", Escape(s.tooltip), "</title></rect>");
    if (s.open_end) {
      absl::StrAppend(&plot, "<path d=\"M", N(x1), " ", N(y + 1), "l5 ", N(row_h / 2 - 1), "l-5 ",
                      N(row_h / 2 - 1), "z\" fill=\"", fill, "\"/>");
    }
  }
  const std::string note =
      rows < c.spans.size()
          ? AddSentence(c.note, absl::StrCat("Showing ", rows, " of ", c.spans.size(), "."))
          : c.note;
  const int h = static_cast<int>(bottom + 42);
  return Figure("span", c.id, c.title, c.width, h, plot, note);
}

std::string SmallMultiples(const std::vector<std::string>& panels_html, int min_panel_width) {
  std::string o =
      absl::StrCat("<div class=\"multiples\" style=\"--panel:", min_panel_width, "px\">");
  for (const std::string& p : panels_html) absl::StrAppend(&o, p);
  return o + "</div>\n";
}

}  // namespace alloctrace::charts
