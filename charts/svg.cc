// The chart kinds of svg.h, drawn from the parts in svg_parts.h.
#include "alloctrace/charts/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg_parts.h"

namespace alloctrace::report {

using svg_parts::AxisPlan;
using svg_parts::Chars;
using svg_parts::Dark;
using svg_parts::DivergingColour;
using svg_parts::Domain;
using svg_parts::DotSwatch;
using svg_parts::FigureClose;
using svg_parts::FigureOpen;
using svg_parts::FitText;
using svg_parts::Hex;
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
using svg_parts::SvgOpen;
using svg_parts::XAxis;
using svg_parts::XYFrame;
using svg_parts::YAxis;
using svg_parts::kCharPx;
using svg_parts::kDashes;
using svg_parts::kFront;

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
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    std::vector<std::pair<double, double>> pts;
    for (size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (std::isfinite(s.x[k]) && std::isfinite(s.y[k])) pts.emplace_back(sx(s.x[k]), sy(s.y[k]));
    }
    if (pts.empty()) continue;
    pts = Reduce(pts);
    std::string d;
    for (size_t k = 0; k < pts.size(); ++k) {
      absl::StrAppend(&d, k == 0 ? "M" : "L", N(pts[k].first), " ", N(pts[k].second));
    }
    if (pts.size() == 1) absl::StrAppend(&d, "h1");
    const char* dash = kDashes[(i / 8) % 4];
    absl::StrAppend(&plot, "<path class=\"series\" d=\"", d, "\" fill=\"none\" stroke=\"",
                    PaletteColor(i), "\" stroke-width=\"", s.emphasized ? "2.5" : "1.5",
                    "\" stroke-linejoin=\"round\"",
                    *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : "", "><title>",
                    Escape(s.name), "</title></path>");
  }
  // One series needs no legend: the caption and axis name it.
  std::vector<std::string> names;
  if (c.series.size() > 1) {
    for (const Series& s : c.series) names.push_back(s.name);
  }
  int legend_h = 0;
  const std::string legend = names.empty() ? "" : Legend(
      names, left, c.height, c.width,
      [&](size_t i, double x, double y) { return LineSwatch(i, x, y, c.series[i].emphasized); },
      &legend_h);
  const int h = c.height + legend_h;
  return absl::StrCat(FigureOpen("line", c.id, c.title), SvgOpen(c.width, h, c.title), plot,
                      legend, "</svg>", FigureClose(c.note));
}

std::string RenderIntervalChart(const IntervalChart& c) {
  Domain d;
  for (const IntervalRow& r : c.rows) {
    for (const IntervalMark& m : r.marks) {
      d.Add(m.value);
      if (m.has_interval) {
        d.Add(m.lo);
        d.Add(m.hi);
      }
    }
  }
  if (c.rows.empty()) return NoData("interval", c.id, c.title, c.note);
  if (c.reference >= 0) d.Add(c.reference);
  const bool many = c.rows.size() > 20;
  const double row_h = 18;
  const double label_w = std::min(250.0, c.width * 0.38);
  const double left = label_w + 10, right = c.width - 64.0;
  const double top = many ? 24 : 8;
  const double bottom = top + row_h * c.rows.size();
  const AxisPlan px = PlanAxis(d, c.x, 7);
  const std::vector<double>& xt = px.ticks;
  const Scale sx = MakeScale(px, left, right);
  std::string plot;
  // Bands first, under the grid.
  for (size_t i = 0; i < c.rows.size(); ++i) {
    if (!c.rows[i].highlighted) continue;
    absl::StrAppend(&plot, "<rect class=\"band\" x=\"0\" y=\"", N(top + i * row_h), "\" width=\"",
                    c.width, "\" height=\"", N(row_h), "\"/>");
  }
  absl::StrAppend(&plot, XAxis(sx, xt, c.x, top, bottom, many));
  if (c.reference >= 0) {
    const std::string x = N(sx(c.reference));
    absl::StrAppend(&plot, "<line class=\"reference\" x1=\"", x, "\" x2=\"", x, "\" y1=\"",
                    N(top), "\" y2=\"", N(bottom), "\" stroke=\"", kFront,
                    "\" stroke-dasharray=\"4 3\"><title>", Escape(c.reference_label),
                    "</title></line>");
  }
  const size_t nseries = std::max<size_t>(1, c.series_names.size());
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const IntervalRow& r = c.rows[i];
    const double mid = top + (i + 0.5) * row_h;
    absl::StrAppend(&plot, FitText(r.label, label_w - 4,
                                   absl::StrCat("x=\"", N(label_w), "\" y=\"", N(mid),
                                                "\" dy=\"0.35em\" text-anchor=\"end\"")));
    if (!r.status.empty()) {
      absl::StrAppend(&plot, FitText(r.status, right - left,
                                     absl::StrCat("class=\"status\" x=\"", N(left + 4), "\" y=\"",
                                                  N(mid), "\" dy=\"0.35em\"")));
      continue;
    }
    for (const IntervalMark& m : r.marks) {
      const double y = mid + (nseries > 1 ? (m.series - (nseries - 1) / 2.0) * 3.5 : 0);
      const char* colour = nseries > 1 ? PaletteColor(m.series) : "#0072B2";
      std::string tip = absl::StrCat(
          r.label, m.series < c.series_names.size() ? " " + c.series_names[m.series] : "", ": ",
          FormatValue(m.value, c.x.unit));
      if (m.has_interval) {
        const std::string yy = N(y);
        absl::StrAppend(&tip, " [", FormatValue(m.lo, c.x.unit), ", ",
                        FormatValue(m.hi, c.x.unit), "]");
        absl::StrAppend(&plot, "<path class=\"ci\" d=\"M", N(sx(m.lo)), " ", N(y - 3), "v6M",
                        N(sx(m.lo)), " ", yy, "H", N(sx(m.hi)), "M", N(sx(m.hi)), " ", N(y - 3),
                        "v6\" stroke=\"", colour, "\" fill=\"none\"/>");
      }
      absl::StrAppend(&plot, "<circle class=\"dot\" cx=\"", N(sx(m.value)), "\" cy=\"", N(y),
                      "\" r=\"3.5\" fill=\"", colour, "\"><title>", Escape(tip),
                      "</title></circle>");
    }
    if (!r.note.empty()) {
      absl::StrAppend(&plot, FitText(r.note, 60, absl::StrCat("x=\"", N(right + 6), "\" y=\"",
                                                             N(mid), "\" dy=\"0.35em\"")));
    }
  }
  std::vector<std::string> names;
  if (nseries > 1) names = c.series_names;
  const bool band = !c.highlight_label.empty();
  if (band) names.push_back(c.highlight_label);
  if (c.reference >= 0 && !c.reference_label.empty()) names.push_back(c.reference_label);
  const double legend_top = bottom + 40;
  int legend_h = 0;
  std::string legend;
  if (!names.empty()) {
    legend = Legend(
        names, left, legend_top, c.width,
        [&](size_t i, double x, double y) -> std::string {
          if (nseries > 1 && i < c.series_names.size()) return DotSwatch(PaletteColor(i), x, y);
          if (band && i == names.size() - 1 - (c.reference >= 0 && !c.reference_label.empty())) {
            return absl::StrCat("<rect class=\"band\" x=\"", N(x), "\" y=\"", N(y - 6),
                                "\" width=\"18\" height=\"12\"/>");
          }
          return absl::StrCat("<line x1=\"", N(x + 9), "\" x2=\"", N(x + 9), "\" y1=\"", N(y - 7),
                              "\" y2=\"", N(y + 7), "\" stroke=\"", kFront,
                              "\" stroke-dasharray=\"4 3\"/>");
        },
        &legend_h);
  }
  const int h = static_cast<int>(legend_top) + legend_h;
  return absl::StrCat(FigureOpen("interval", c.id, c.title), SvgOpen(c.width, h, c.title), plot,
                      legend, "</svg>", FigureClose(c.note));
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

std::string RenderScatterChart(const ScatterChart& c) {
  Domain dx, dy;
  for (const Point& p : c.points) {
    dx.Add(p.x);
    dy.Add(p.y);
  }
  if (dx.empty()) return NoData("scatter", c.id, c.title, c.note);
  const double left = 78, right = c.width - 250.0, top = 12, bottom = c.height - 46.0;
  const XYFrame frame = MakeXYFrame(dx, dy, c.x, c.y, left, right, top, bottom);
  const Scale& sx = frame.sx;
  const Scale& sy = frame.sy;
  std::string plot = frame.axes;
  const std::vector<size_t> front = c.pareto ? ParetoFront(c.points) : std::vector<size_t>{};
  std::vector<bool> on_front(c.points.size(), false);
  for (const size_t i : front) on_front[i] = true;
  if (front.size() > 1) {
    // The front as a staircase: nothing below and left of it exists.
    std::string d;
    for (size_t k = 0; k < front.size(); ++k) {
      const Point& p = c.points[front[k]];
      absl::StrAppend(&d, k == 0 ? "M" : "H", N(sx(p.x)), k == 0 ? " " : "V", N(sy(p.y)));
    }
    absl::StrAppend(&plot, "<path class=\"pareto-line\" d=\"", d, "\" fill=\"none\" stroke=\"",
                    kFront, "\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>");
  }
  const bool several = c.series_names.size() > 1;
  auto tip = [&](const Point& p) {
    return absl::StrCat(p.label, ": ", c.x.label, " ", FormatValue(p.x, c.x.unit), ", ",
                        c.y.label, " ", FormatValue(p.y, c.y.unit));
  };
  for (size_t i = 0; i < c.points.size(); ++i) {
    const Point& p = c.points[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || on_front[i]) continue;
    absl::StrAppend(&plot, "<circle class=\"dot\" cx=\"", N(sx(p.x)), "\" cy=\"", N(sy(p.y)),
                    "\" r=\"3.5\" fill=\"", several ? PaletteColor(p.series) : "#56B4E9",
                    "\" fill-opacity=\"0.85\"><title>", Escape(tip(p)), "</title></circle>");
  }
  if (!front.empty()) {
    absl::StrAppend(&plot, "<text class=\"axis-label\" x=\"", N(right + 14), "\" y=\"", N(top),
                    "\">On the Pareto front:</text>");
  }
  for (size_t k = 0; k < front.size(); ++k) {
    const Point& p = c.points[front[k]];
    const double x = sx(p.x), y = sy(p.y);
    absl::StrAppend(&plot, "<circle class=\"dot pareto\" cx=\"", N(x), "\" cy=\"", N(y),
                    "\" r=\"5\" fill=\"", several ? PaletteColor(p.series) : "#0072B2",
                    "\" stroke=\"", kFront, "\" stroke-width=\"2\"><title>",
                    Escape(tip(p)), " (Pareto front)</title></circle>");
    // A number by the point (alternating above and below: front points
    // crowd), the name in the list to the right of the plot.
    absl::StrAppend(&plot, "<text class=\"pareto-label\" x=\"", N(x + 6), "\" y=\"",
                    N(y + (k % 2 ? 13 : -6)), "\">", k + 1, "</text>");
    const double ly = top + 14 + k * 15;
    if (ly < bottom) {
      absl::StrAppend(&plot, "<text class=\"pareto-label\" x=\"", N(right + 14), "\" y=\"",
                      N(ly), "\">", k + 1, "</text>",
                      FitText(p.label, c.width - right - 40,
                              absl::StrCat("x=\"", N(right + 32), "\" y=\"", N(ly), "\"")));
    }
  }
  std::vector<std::string> names;
  if (several) names = c.series_names;
  if (c.pareto) names.push_back("Pareto front (nothing is both faster and smaller)");
  int legend_h = 0;
  const std::string legend = Legend(
      names, left, c.height, c.width,
      [&](size_t i, double x, double y) -> std::string {
        if (several && i < c.series_names.size()) return DotSwatch(PaletteColor(i), x, y);
        return absl::StrCat("<circle cx=\"", N(x + 9), "\" cy=\"", N(y),
                            "\" r=\"5\" fill=\"#0072B2\" stroke=\"", kFront,
                            "\" stroke-width=\"2\"/>");
      },
      &legend_h);
  const int h = c.height + legend_h;
  return absl::StrCat(FigureOpen("scatter", c.id, c.title), SvgOpen(c.width, h, c.title), plot,
                      legend, "</svg>", FigureClose(c.note));
}

std::string RenderHeatMap(const HeatMap& m) {
  if (m.rows.empty() || m.cols.empty()) return NoData("heatmap", m.id, m.title, m.note);
  // Column labels run up at 60 degrees: 200 px of height holds about 33
  // characters.
  const double label_w = 170, col_label_h = 200, top = col_label_h;
  const double cell_w = std::clamp((1240.0 - label_w) / m.cols.size(), 16.0, 64.0);
  const double cell_h = 22;
  const double width = label_w + cell_w * m.cols.size() + 20;
  const double bottom = top + cell_h * m.rows.size();
  std::string plot;
  for (size_t j = 0; j < m.cols.size(); ++j) {
    const double x = label_w + (j + 0.5) * cell_w;
    absl::StrAppend(&plot, FitText(m.cols[j], (col_label_h - 8) / 0.87,
                                   absl::StrCat("transform=\"translate(", N(x + 3), ",",
                                                N(top - 6), ") rotate(-60)\"")));
  }
  const bool values_fit = cell_w >= 34;
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const double y = top + i * cell_h;
    absl::StrAppend(&plot, FitText(m.rows[i], label_w - 8,
                                   absl::StrCat("x=\"", N(label_w - 6), "\" y=\"",
                                                N(y + cell_h / 2), "\" dy=\"0.35em\" "
                                                "text-anchor=\"end\"")));
    for (size_t j = 0; j < m.cols.size(); ++j) {
      const double v = i < m.values.size() && j < m.values[i].size()
                           ? m.values[i][j]
                           : std::numeric_limits<double>::quiet_NaN();
      const double x = label_w + j * cell_w;
      const std::string where = absl::StrCat(m.rows[i], " \xC3\x97 ", m.cols[j], ": ");
      if (!std::isfinite(v) || v <= 0) {
        absl::StrAppend(&plot, "<rect class=\"cell missing\" x=\"", N(x), "\" y=\"", N(y),
                        "\" width=\"", N(cell_w), "\" height=\"", N(cell_h),
                        "\" fill=\"#f2f2f2\" stroke=\"#fff\"><title>", Escape(where),
                        "no figure</title></rect>");
        continue;
      }
      const unsigned rgb = DivergingColour(std::log2(v / m.center) / m.span_log2);
      absl::StrAppend(&plot, "<rect class=\"cell\" x=\"", N(x), "\" y=\"", N(y), "\" width=\"",
                      N(cell_w), "\" height=\"", N(cell_h), "\" fill=\"", Hex(rgb),
                      "\" stroke=\"#fff\"><title>", Escape(where), Escape(m.value_label), " ",
                      Escape(FormatValue(v, m.unit)), "</title></rect>");
      if (values_fit) {
        absl::StrAppend(&plot, "<text x=\"", N(x + cell_w / 2), "\" y=\"", N(y + cell_h / 2),
                        "\" dy=\"0.35em\" text-anchor=\"middle\" class=\"cell-value\"",
                        Dark(rgb) ? " fill=\"#fff\"" : "", ">", Escape(Short(v)), "</text>");
      }
    }
  }
  // The colour key: nine steps from center / 2^span to center * 2^span.
  const double ky = bottom + 16;
  absl::StrAppend(&plot, "<g class=\"legend\"><text x=\"", N(label_w - 6), "\" y=\"", N(ky + 9),
                  "\" dy=\"0.35em\" text-anchor=\"end\">", Escape(m.value_label), "</text>");
  for (int k = -4; k <= 4; ++k) {
    const double x = label_w + (k + 4) * 44;
    const double v = m.center * std::pow(2.0, m.span_log2 * k / 4);
    absl::StrAppend(&plot, "<rect x=\"", N(x), "\" y=\"", N(ky), "\" width=\"44\" height=\"18\" fill=\"",
                    Hex(DivergingColour(k / 4.0)), "\"/><text x=\"", N(x + 22), "\" y=\"",
                    N(ky + 30), "\" text-anchor=\"middle\">", Escape(FormatValue(v, m.unit)),
                    "</text>");
  }
  absl::StrAppend(&plot, "<text x=\"", N(label_w), "\" y=\"", N(ky + 46), "\">\xE2\x86\x90 ",
                  Escape(m.low_meaning), "</text><text x=\"", N(label_w + 9 * 44), "\" y=\"",
                  N(ky + 46), "\" text-anchor=\"end\">", Escape(m.high_meaning),
                  " \xE2\x86\x92</text></g>");
  const int w = static_cast<int>(std::max(width, label_w + 9 * 44 + 20));
  const int h = static_cast<int>(ky + 56);
  return absl::StrCat(FigureOpen("heatmap", m.id, m.title), SvgOpen(w, h, m.title), plot,
                      "</svg>", FigureClose(m.note));
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
      absl::StrAppend(&plot, FitText(b.label, label_h / 0.8,
                                     absl::StrCat("transform=\"translate(", N(cx + 3), ",",
                                                  N(bottom + 10), ") rotate(-50)\" "
                                                  "text-anchor=\"end\"")));
    } else {
      absl::StrAppend(&plot, FitText(b.label, slot, absl::StrCat("x=\"", N(cx), "\" y=\"",
                                                                N(bottom + 14),
                                                                "\" text-anchor=\"middle\"")));
    }
  }
  absl::StrAppend(&plot, "<line class=\"axis\" x1=\"", N(left), "\" x2=\"", N(right), "\" y1=\"",
                  N(bottom), "\" y2=\"", N(bottom), "\"/>");
  absl::StrAppend(&plot, "<text class=\"axis-label\" x=\"", N((left + right) / 2), "\" y=\"",
                  N(bottom + label_h + 18), "\" text-anchor=\"middle\">", Escape(c.x_label),
                  "</text>");
  return absl::StrCat(FigureOpen("bar", c.id, c.title), SvgOpen(c.width, c.height, c.title),
                      plot, "</svg>", FigureClose(c.note));
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
  std::string note = c.note;
  if (rows < c.spans.size()) {
    note = absl::StrCat(note, note.empty() ? "" : " ", "Showing ", rows, " of ", c.spans.size(),
                        ".");
  }
  const int h = static_cast<int>(bottom + 42);
  return absl::StrCat(FigureOpen("span", c.id, c.title), SvgOpen(c.width, h, c.title), plot,
                      "</svg>", FigureClose(note));
}

std::string SmallMultiples(const std::vector<std::string>& panels_html, int min_panel_width) {
  std::string o = absl::StrCat("<div class=\"multiples\" style=\"--panel:", min_panel_width,
                               "px\">");
  for (const std::string& p : panels_html) absl::StrAppend(&o, p);
  return o + "</div>\n";
}

}  // namespace alloctrace::report
