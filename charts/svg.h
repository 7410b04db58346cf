// Small hand-written SVG charts for the HTML reports: line, interval (dots
// with error bars, rows highlighted as tied), scatter with its Pareto front,
// heat map, bar chart (histogram), span chart (lifetimes), and a grid of
// small multiples.
//
// Every chart is a <figure class="chart chart-KIND" id=...> holding a
// caption and one inline <svg> sized by its viewBox (it scales down with the
// page and prints). Marks carry classes the tests count: `series` (line
// paths), `dot`, `ci` (error bars), `pareto`, `cell`, `bar`, `span`. Every
// label, series and point name is untrusted text and escaped; a name too
// long for its slot is shortened with "…" and the full name is kept in a
// <title> child (the browser's tooltip). Colours come from the Okabe-Ito
// palette (distinguishable with the common colour-vision deficiencies);
// series past its 8 colours also differ by dash pattern. Axes have nice
// ticks (1, 2, 5 x 10^k) in the unit that fits, with SI (k, M, G) or
// binary (KiB, MiB, GiB) suffixes.
//
// Charts with no data render a figure with a "no data" note rather than
// failing. Thread-compatible; no I/O.
#ifndef ALLOCTRACE_CHARTS_SVG_H_
#define ALLOCTRACE_CHARTS_SVG_H_

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace alloctrace::charts {

enum class Unit {
  kCount,        // 1.5k, 2M (SI)
  kBytes,        // 512 B, 1.5 KiB, 2 MiB (binary)
  kNanoseconds,  // 12.5 ns, 1.2 us
  kRatio,        // 1.25x
  kPlain,        // the number as is
};

// `v` as a short label in `unit`, e.g. 1536 bytes -> "1.5 KiB".
std::string FormatValue(double v, Unit unit);

// About `target` evenly spaced "nice" tick values covering [lo, hi]: steps
// of 1, 2 or 5 x 10^k; for bytes, such steps in the binary unit (B, KiB,
// MiB, ...) that fits hi. The first tick is <= lo and the last >= hi.
std::vector<double> NiceTicks(double lo, double hi, int target, Unit unit);

// The i-th colour (Okabe-Ito order, black first, yellow last), cycling.
const char* PaletteColor(size_t i);

struct Axis {
  std::string label;  // e.g. "live bytes"
  Unit unit = Unit::kPlain;
  bool include_zero = true;
  // The axis spans exactly the data (ticks inside it), rather than running
  // on to the next nice tick: for positions such as event indexes.
  bool tight = false;
  // A logarithmic axis (ticks 1, 2, 5 x 10^k), if every value is above 0;
  // include_zero and tight do not apply to it.
  bool log = false;
  // Interval and scatter charts: spend the axis on the main group of
  // values; those past FrameLimit are off the scale, drawn beyond the plot's
  // far edge with their value written and named in the chart's note.
  bool frame = false;
  // A log axis when the values on the scale span more than kWideRatio x
  // (" (log scale)" is added to the label).
  bool log_if_wide = false;
  // The axis reaches at least this value (a maximum shared by small
  // multiples); NaN: the data decide.
  double reach = NAN;
};

// The span (largest over smallest) past which log_if_wide takes a log axis.
inline constexpr double kWideRatio = 8;

// The largest of `values` a framed axis keeps on its scale. Sorted, the
// values are cut at the first gap of at least `gap` x between neighbours
// whose upper side is past `spread` x the smallest, if at most a third of
// them (at least one) lie above it and two or more below; +infinity when
// no gap qualifies (everything stays on the scale). Values <= 0 or not
// finite are ignored.
double FrameLimit(std::vector<double> values, double gap = 3, double spread = 4);

// Label placement for marks that crowd: a box `widths[i]` x `h` by each
// anchor (a mark of radius `r`), none overlapping another box or any mark,
// inside `bounds`. Each box takes the nearest free spot, tried in rings of
// growing distance (right, left, above, below, then the diagonals and
// finer angles), in the anchors' order; one off its ring-0 spot gets a
// leader line. `placed` is false only when no spot was free anywhere in
// `bounds` (the box is then at the first spot tried).
struct LabelBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
struct LabelSpot {
  LabelBox box;
  bool leader = false;
  bool placed = true;
};
std::vector<LabelSpot> PlaceLabels(const std::vector<std::pair<double, double>>& anchors,
                                   const std::vector<double>& widths, double h, double r,
                                   const LabelBox& bounds);

struct Series {
  std::string name;
  std::vector<double> x, y;  // same length
  bool emphasized = false;   // drawn thicker (e.g. the trace's own line)
};

struct LineChart {
  std::string id, title;
  Axis x, y;
  std::vector<Series> series;
  int width = 1200, height = 300;  // plot area plus margins, before the legend
  std::string note;                // a line under the chart
  // Each series its own dash pattern (not only past the palette's 8
  // colours), so lines that coincide still show each one.
  bool distinct_dashes = false;
};
std::string RenderLineChart(const LineChart& chart);

// One mark of an interval row: a dot at `value`, a bar from lo to hi.
struct IntervalMark {
  size_t series = 0;  // colour and legend entry
  double value = 0, lo = 0, hi = 0;
  bool has_interval = false;
};

struct IntervalRow {
  std::string label;
  std::vector<IntervalMark> marks;
  bool highlighted = false;  // a shaded band (e.g. tied with the best)
  std::string status;        // non-empty: no marks, this text instead (failed, skipped)
  std::string note;          // short text at the right end (e.g. "tied")
};

struct IntervalChart {
  std::string id, title;
  Axis x;
  std::vector<IntervalRow> rows;
  std::vector<std::string> series_names;  // a legend when more than one
  std::string highlight_label;            // legend entry for the band, if any
  double reference = -1;                  // a dashed vertical line there, if >= 0
  std::string reference_label;
  int width = 1200;
  std::string note;
};
// With x.frame, a mark past the frame's limit runs off the plot's right end
// through a break, its value written there, and the rows are named in the
// note.
std::string RenderIntervalChart(const IntervalChart& chart);

struct Point {
  std::string label;
  double x = 0, y = 0;
  size_t series = 0;
  std::string tag;  // the short mark by the point and in the key; empty: its 1-based index
};

// Indices of the points no other point beats in both coordinates (smaller
// is better in both), ordered by x.
std::vector<size_t> ParetoFront(const std::vector<Point>& points);

// Every point is marked with its tag (placed clear of other tags and
// points, with a leader line when it had to move away) and named in a key
// beside the plot (under it when there are too many for its height), tags
// in the points' order; points off a framed scale sit past the plot's edge
// as triangles, and the key gives their values.
struct ScatterChart {
  std::string id, title;
  Axis x, y;
  std::vector<Point> points;
  std::vector<std::string> series_names;  // a legend when more than one
  bool pareto = true;                     // mark and connect the front, ring its points
  int width = 1200, height = 400;
  std::string note;
};
std::string RenderScatterChart(const ScatterChart& chart);

// values[row][col]; NaN marks a missing cell. Colours diverge around
// `center` on a log2 scale (ratios), saturating at center * 2^±span.
struct HeatMap {
  std::string id, title;
  std::vector<std::string> rows, cols;
  std::vector<std::vector<double>> values;
  std::string value_label;  // e.g. "speed-up vs malloc"
  Unit unit = Unit::kRatio;
  double center = 1;
  double span_log2 = 2;
  std::string low_meaning, high_meaning;  // legend words for each end
  std::string note;
};
std::string RenderHeatMap(const HeatMap& map);

struct Bar {
  std::string label;
  double value = 0;
  std::string tooltip;  // extra text for the <title>
};

struct BarChart {
  std::string id, title;
  std::string x_label;
  Axis y;
  std::vector<Bar> bars;
  int width = 1200, height = 280;
  std::string note;
};
std::string RenderBarChart(const BarChart& chart);

struct Span {
  std::string label;
  double start = 0, end = 0;
  bool open_end = false;   // still alive at the end: drawn with an arrow-like cap
  bool secondary = false;  // drawn in grey (e.g. the global heap)
  std::string tooltip;
};

struct SpanChart {
  std::string id, title;
  Axis x;
  std::vector<Span> spans;
  size_t max_rows = 60;  // the rest is counted in a note
  int width = 1200;
  std::string note;
};
std::string RenderSpanChart(const SpanChart& chart);

// A responsive grid of charts (already rendered), each at least
// `min_panel_width` CSS pixels wide.
std::string SmallMultiples(const std::vector<std::string>& panels_html, int min_panel_width);

}  // namespace alloctrace::charts

#endif  // ALLOCTRACE_CHARTS_SVG_H_
