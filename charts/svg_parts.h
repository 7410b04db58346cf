// The parts every chart of svg.h is drawn with: coordinates and short
// numbers as text, labels fitted to a width, scales and axes with nice
// ticks, figure wrappers, legends and swatches, polyline thinning and the
// diverging colour scale. Private to //charts:html (svg.cc draws the chart
// kinds from them); not an interface of its own.
//
// Every string from outside is escaped here. Pure functions; no I/O.
#ifndef ALLOCTRACE_CHARTS_SVG_PARTS_H_
#define ALLOCTRACE_CHARTS_SVG_PARTS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "alloctrace/charts/svg.h"

namespace alloctrace::charts::svg_parts {

inline constexpr double kCharPx = 6.6;     // mean advance of an 11px sans glyph
inline constexpr int kLegendItemPx = 360;  // the widest legend item
inline constexpr int kLegendRowPx = 17;

// Okabe & Ito's palette, black first and yellow last (weak on white).
inline constexpr const char* kPalette[] = {"#000000", "#E69F00", "#56B4E9", "#009E73",
                                           "#0072B2", "#D55E00", "#CC79A7", "#F0E442"};
inline constexpr const char* kDashes[] = {"", "6 3", "2 2", "9 3 2 3"};
inline constexpr const char* kFront = "#D55E00";

// A coordinate: one decimal, no trailing zeros.
std::string N(double v);
// Up to three significant digits, trailing zeros dropped.
std::string Short(double v);
// The string's length in code points (for width estimates).
size_t Chars(absl::string_view s);
// A text label fitted to `max_px`: escaped, shortened with "…" if needed,
// the full text kept in a <title> for the tooltip.
std::string FitText(absl::string_view s, double max_px, absl::string_view attrs_html);

struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;  // d0 > 0; values at or below 0 sit at d0
  double operator()(double v) const {
    if (log) {
      const double l0 = std::log10(d0), l1 = std::log10(d1);
      const double lv = v > 0 ? std::log10(v) : l0;
      return l1 == l0 ? (r0 + r1) / 2 : r0 + (lv - l0) * (r1 - r0) / (l1 - l0);
    }
    return d1 == d0 ? (r0 + r1) / 2 : r0 + (v - d0) * (r1 - r0) / (d1 - d0);
  }
};

struct Domain {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// Ticks for the axis and the domain they span (front and back; a tight
// axis spans the data, its ticks inside).
struct AxisPlan {
  std::vector<double> ticks;
  double lo = 0, hi = 1;
  bool log = false;
};

Scale MakeScale(const AxisPlan& p, double r0, double r1);
// `axis` with log set when log_if_wide asks for it over the values `d`.
Axis Decided(Axis axis, const Domain& d);
// `d` widened by `fraction` of its span on each side (a factor on a log
// axis), so no mark sits on an axis line.
Domain Padded(Domain d, bool log, double fraction);
// The ticks and domain of `axis` over the data domain `d`, about `target`
// ticks (a log axis: 1, 2, 5 x 10^k).
AxisPlan PlanAxis(Domain d, const Axis& axis, int target);

// The chart's <svg> element, its <figure> around it, and a figure that says
// "no data".
std::string SvgOpen(int w, int h, absl::string_view title);
std::string FigureOpen(absl::string_view kind, absl::string_view id, absl::string_view title);
std::string FigureClose(absl::string_view note);
std::string NoData(absl::string_view kind, absl::string_view id, absl::string_view title,
                   absl::string_view note);
// A whole chart: the <figure> and its caption, an <svg> `w` x `h` holding
// `svg_body` (markup), and the note under it.
std::string Figure(absl::string_view kind, absl::string_view id, absl::string_view title, int w,
                   int h, absl::string_view svg_body, absl::string_view note);
// `note` and then `sentence`, a space between them when both have text.
std::string AddSentence(absl::string_view note, absl::string_view sentence);

// Vertical grid lines and labels of an x axis under a plot.
std::string XAxis(const Scale& sx, const std::vector<double>& ticks, const Axis& axis, double top,
                  double bottom, bool labels_on_top);
// Horizontal grid lines and labels of a y axis left of a plot.
std::string YAxis(const Scale& sy, const std::vector<double>& ticks, const Axis& axis, double left,
                  double right);

// Legend entries laid out in columns under a plot; `swatch(i, x, y)`
// returns the i-th entry's marker.
// Items are at most `max_item` wide (names past it are shortened).
// Names start `text_x` right of their item's left edge.
template <typename Swatch>
std::string Legend(const std::vector<std::string>& names, double left, double top, int width,
                   Swatch swatch, int* height, double max_item = kLegendItemPx,
                   double text_x = 24) {
  // Items as wide as the longest name needs, within bounds.
  size_t longest = 1;
  for (const std::string& n : names) longest = std::max(longest, Chars(n));
  const double item =
      std::clamp(text_x + 10 + longest * kCharPx, std::min(110.0, max_item), max_item);
  const int cols = std::max(1, static_cast<int>((width - left) / item));
  const int rows = static_cast<int>((names.size() + cols - 1) / cols);
  *height = rows * kLegendRowPx + 6;
  std::string o = "<g class=\"legend\">";
  for (size_t i = 0; i < names.size(); ++i) {
    const double x = left + (i % cols) * item;
    const double y = top + (i / cols) * kLegendRowPx + 8;
    absl::StrAppend(&o, swatch(i, x, y),
                    FitText(names[i], item - text_x - 6,
                            absl::StrCat("class=\"legend-entry\" x=\"", N(x + text_x), "\" y=\"",
                                         N(y), "\" dy=\"0.35em\"")));
  }
  return o + "</g>";
}

// A legend's marker: the i-th series' line, or a dot.
std::string LineSwatch(size_t i, double x, double y, bool emphasized, bool distinct_dashes = false);
std::string DotSwatch(const char* colour, double x, double y);
// A data point's dot: <circle class="`classes`"> of radius `r` (markup), its
// `attrs_html` after the fill, and `tip` (escaped here) as its tooltip.
std::string Dot(absl::string_view classes, double cx, double cy, absl::string_view r,
                absl::string_view fill, absl::string_view attrs_html, absl::string_view tip);

// A polyline's points reduced to at most four per pixel column (first,
// lowest, highest, last), which draws the same shape.
std::vector<std::pair<double, double>> Reduce(const std::vector<std::pair<double, double>>& pts);

// t in [-1, 1] to a colour (0xRRGGBB) of the diverging scale: PuOr, orange
// (low) to purple (high), readable with colour-vision deficiencies and in grey.
unsigned DivergingColour(double t);
// "#rrggbb".
std::string Hex(unsigned rgb);
// Whether text on this colour should be light.
bool Dark(unsigned rgb);

// The two scales and both axes of an x-y plot in the box [left, right] x
// [top, bottom] (the line chart's and the scatter's).
struct XYFrame {
  Scale sx, sy;
  std::string axes;
};
XYFrame MakeXYFrame(const Domain& dx, const Domain& dy, const Axis& x, const Axis& y, double left,
                    double right, double top, double bottom);

}  // namespace alloctrace::charts::svg_parts

#endif  // ALLOCTRACE_CHARTS_SVG_PARTS_H_
