// The parts of the SVG charts (svg_parts.h), and svg.h's value labels,
// ticks and palette.
#include "alloctrace/charts/svg_parts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg.h"

namespace alloctrace::charts {
namespace {

double NiceNumber(double x, bool round) {
  if (x <= 0 || !std::isfinite(x)) return 1;
  const double e = std::floor(std::log10(x));
  const double p = std::pow(10.0, e);
  const double f = x / p;
  double nf;
  if (round) {
    nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  } else {
    nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  }
  return nf * p;
}

}  // namespace

using svg_parts::kPalette;
using svg_parts::Short;

namespace {

// v in the largest of `units` (each `base` times the last, six in all) that
// leaves it at least 1 in magnitude: "1.5 MiB", "12k".
std::string Scaled(double v, double base, const char* const (&units)[6], const char* sep) {
  int p = 0;
  while (std::fabs(v) >= base && p < 5) {
    v /= base;
    ++p;
  }
  return absl::StrCat(Short(v), sep, units[p]);
}

}  // namespace

std::string FormatValue(double v, Unit unit) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  switch (unit) {
    case Unit::kBytes: {
      static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
      return Scaled(v, 1024, kUnits, " ");
    }
    case Unit::kCount: {
      static const char* const kSi[] = {"", "k", "M", "G", "T", "P"};
      return Scaled(v, 1000, kSi, "");
    }
    case Unit::kNanoseconds:
      if (a >= 1e9) return absl::StrCat(Short(v / 1e9), " s");
      if (a >= 1e6) return absl::StrCat(Short(v / 1e6), " ms");
      if (a >= 1e3) return absl::StrCat(Short(v / 1e3), " \xC2\xB5s");
      return absl::StrCat(Short(v), " ns");
    case Unit::kRatio:
      return absl::StrCat(Short(v), "x");
    case Unit::kPlain:
      return Short(v);
  }
  return Short(v);
}

std::vector<double> NiceTicks(double lo, double hi, int target, Unit unit) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= lo == 0 ? 0 : pad;
    hi += pad;
  }
  target = std::max(2, target);
  double base = 1;
  if (unit == Unit::kBytes) {
    while (std::max(std::fabs(lo), std::fabs(hi)) / base >= 1024) base *= 1024;
  }
  const double l = lo / base, h = hi / base;
  const double range = NiceNumber(h - l, false);
  double step = NiceNumber(range / (target - 1), true);
  // Whole bytes and whole objects only.
  if ((unit == Unit::kCount || (unit == Unit::kBytes && base == 1)) && step < 1) step = 1;
  const double first = std::floor(l / step) * step;
  const double last = std::ceil(h / step) * step;
  std::vector<double> ticks;
  for (int k = 0;; ++k) {
    const double t = first + k * step;
    if (t > last + step * 1e-9 || k > 1000) break;
    ticks.push_back((std::fabs(t) < step * 1e-9 ? 0 : t) * base);
  }
  return ticks;
}

const char* PaletteColor(size_t i) { return kPalette[i % 8]; }

double FrameLimit(std::vector<double> values, double gap, double spread) {
  values.erase(std::remove_if(values.begin(), values.end(),
                              [](double v) { return !std::isfinite(v) || v <= 0; }),
               values.end());
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const size_t most_off = std::max<size_t>(1, n / 3);
  for (size_t i = 1; i + 1 < n; ++i) {  // values[0..i] stay: two at least
    const size_t off = n - 1 - i;
    if (off > most_off) continue;
    if (values[i + 1] >= gap * values[i] && values[i + 1] > spread * values[0]) return values[i];
  }
  return std::numeric_limits<double>::infinity();
}

namespace {

bool Overlap(const LabelBox& a, const LabelBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// Whether the circle (cx, cy, r) reaches into the box.
bool Touches(const LabelBox& b, double cx, double cy, double r) {
  const double nx = std::clamp(cx, b.x0, b.x1), ny = std::clamp(cy, b.y0, b.y1);
  return (nx - cx) * (nx - cx) + (ny - cy) * (ny - cy) < r * r;
}

}  // namespace

std::vector<LabelSpot> PlaceLabels(const std::vector<std::pair<double, double>>& anchors,
                                   const std::vector<double>& widths, double h, double r,
                                   const LabelBox& bounds) {
  constexpr double kPi = 3.14159265358979323846;
  constexpr double kGap = 1.5;  // between a box and a mark or another box
  // Ring 0: right, left, above, below, then the diagonals.
  static const double kFirst[][2] = {{1, 0},  {-1, 0},  {0, -1}, {0, 1},
                                     {1, -1}, {-1, -1}, {1, 1},  {-1, 1}};
  const double reach = std::hypot(bounds.x1 - bounds.x0, bounds.y1 - bounds.y0);
  std::vector<LabelSpot> out;
  std::vector<LabelBox> taken;
  for (size_t i = 0; i < anchors.size(); ++i) {
    const auto [ax, ay] = anchors[i];
    const double w = i < widths.size() ? widths[i] : h;
    // The box whose near side is `d` from the anchor in direction (dx, dy).
    auto box_at = [&](double dx, double dy, double d) {
      const double cx = ax + dx * (d + w / 2), cy = ay + dy * (d + h / 2);
      return LabelBox{cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
    };
    auto free = [&](const LabelBox& b) {
      if (b.x0 < bounds.x0 || b.x1 > bounds.x1 || b.y0 < bounds.y0 || b.y1 > bounds.y1) {
        return false;
      }
      const LabelBox grown{b.x0 - kGap, b.y0 - kGap, b.x1 + kGap, b.y1 + kGap};
      for (const LabelBox& t : taken) {
        if (Overlap(grown, t)) return false;
      }
      for (const auto& [mx, my] : anchors) {
        if (Touches(b, mx, my, r + kGap)) return false;
      }
      return true;
    };
    LabelSpot spot;
    spot.box = box_at(1, 0, r + 2);
    spot.placed = false;
    for (int ring = 0; !spot.placed && ring * (h * 0.8) < reach; ++ring) {
      const double d = r + 2 + ring * (h * 0.8);
      if (ring == 0) {
        for (const auto& dir : kFirst) {
          const LabelBox b = box_at(dir[0], dir[1], d);
          if (free(b)) {
            spot = {b, false, true};
            break;
          }
        }
        continue;
      }
      const int angles = 8 + 4 * ring;
      for (int k = 0; k < angles && !spot.placed; ++k) {
        // Alternate either side of "right": 0, +1, -1, +2, -2, ... steps.
        const int step = (k + 1) / 2 * (k % 2 ? 1 : -1);
        const double a = 2 * kPi * step / angles;
        const LabelBox b = box_at(std::cos(a), std::sin(a), d);
        if (free(b)) spot = {b, true, true};
      }
    }
    taken.push_back(spot.box);
    out.push_back(spot);
  }
  return out;
}

namespace svg_parts {
namespace {

// A log axis: ticks at 1, 2, 5 x 10^k (only 10^k over more than three
// decades), the domain from the last tick at or below the data to the first
// at or above it.
AxisPlan PlanLogAxis(const Domain& d) {
  AxisPlan p;
  p.log = true;
  const int k0 = static_cast<int>(std::floor(std::log10(d.lo)));
  const int k1 = static_cast<int>(std::ceil(std::log10(d.hi)));
  const std::vector<double> steps =
      k1 - k0 > 3 ? std::vector<double>{1} : std::vector<double>{1, 2, 5};
  std::vector<double> all;
  for (int k = k0; k <= k1; ++k) {
    for (const double m : steps) all.push_back(m * std::pow(10.0, k));
  }
  size_t first = 0, last = all.size() - 1;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] <= d.lo * (1 + 1e-12)) first = i;
  }
  for (size_t i = all.size(); i-- > 0;) {
    if (all[i] >= d.hi * (1 - 1e-12)) last = i;
  }
  p.ticks.assign(all.begin() + first, all.begin() + last + 1);
  p.lo = p.ticks.front();
  p.hi = p.ticks.back();
  return p;
}

// Tick labels of one axis share a unit: for bytes, the binary unit of the
// largest tick (0.2 MiB, 0.4 MiB rather than 205 KiB, 410 KiB).
std::string TickLabel(double v, Unit unit, const std::vector<double>& ticks) {
  if (unit != Unit::kBytes) return FormatValue(v, unit);
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double largest = 0;
  for (const double t : ticks) largest = std::max(largest, std::fabs(t));
  int p = 0;
  double base = 1;
  while (largest / base >= 1024 && p < 5) {
    base *= 1024;
    ++p;
  }
  // Three digits tell the ticks apart unless the step is finer: then as
  // many decimals as the step needs (1.145, 1.15, 1.155 MiB).
  bool distinct = true;
  for (size_t i = 1; i < ticks.size(); ++i) {
    distinct = distinct && Short(ticks[i] / base) != Short(ticks[i - 1] / base);
  }
  if (distinct || ticks.size() < 2) return absl::StrCat(Short(v / base), " ", kUnits[p]);
  const double step = std::fabs(ticks[1] - ticks[0]) / base;
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
  return absl::StrCat(absl::StrFormat("%.*f", decimals, v / base), " ", kUnits[p]);
}

// PuOr, orange (low) to purple (high): readable with colour-vision
// deficiencies and in grey.
constexpr unsigned kDiverging[] = {0xb35806, 0xe08214, 0xfdb863, 0xfee0b6, 0xf7f7f7,
                                   0xd8daeb, 0xb2abd2, 0x8073ac, 0x542788};

unsigned Mix(unsigned a, unsigned b, double t) {
  unsigned out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    const double ca = (a >> shift) & 0xff, cb = (b >> shift) & 0xff;
    out |= static_cast<unsigned>(std::lround(ca + (cb - ca) * t)) << shift;
  }
  return out;
}

}  // namespace

std::string N(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = absl::StrFormat("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::string Short(double v) {
  const double a = std::fabs(v);
  std::string s = a >= 100 || a == 0 ? absl::StrFormat("%.0f", v)
                  : a >= 10          ? absl::StrFormat("%.1f", v)
                  : a >= 1           ? absl::StrFormat("%.2f", v)
                                     : absl::StrFormat("%.3g", v);
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

size_t Chars(absl::string_view s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string FitText(absl::string_view s, double max_px, absl::string_view attrs_html) {
  const size_t max_chars = std::max<size_t>(2, static_cast<size_t>(max_px / kCharPx));
  const std::string shown = Truncate(s, max_chars);
  return absl::StrCat(
      "<text ", attrs_html, ">",
      shown.size() != s.size() ? absl::StrCat("<title>", Escape(s), "</title>") : "", Escape(shown),
      "</text>");
}

Scale MakeScale(const AxisPlan& p, double r0, double r1) {
  return Scale{p.lo, p.hi, r0, r1, p.log};
}

Axis Decided(Axis axis, const Domain& d) {
  if (axis.log_if_wide && !axis.log && !d.empty() && d.lo > 0 && d.hi / d.lo > kWideRatio) {
    axis.log = true;
    absl::StrAppend(&axis.label, " (log scale)");
  }
  return axis;
}

Domain Padded(Domain d, bool log, double fraction) {
  if (d.empty()) return d;
  if (log && d.lo > 0) {
    const double f = std::pow(std::max(d.hi / d.lo, 1.5), fraction);
    return Domain{d.lo / f, d.hi * f};
  }
  const double pad = d.hi > d.lo ? (d.hi - d.lo) * fraction : std::max(std::fabs(d.lo), 1.0) * 0.05;
  // Positive data stay positive (bytes, times): no tick below zero.
  return Domain{d.lo >= 0 ? std::max(0.0, d.lo - pad) : d.lo - pad, d.hi + pad};
}

AxisPlan PlanAxis(Domain d, const Axis& axis, int target) {
  if (std::isfinite(axis.reach)) d.Add(axis.reach);
  if (axis.log && !d.empty() && d.lo > 0 && d.hi > d.lo) return PlanLogAxis(d);
  if (d.empty()) d = Domain{0, 1};
  if (axis.include_zero) d.Add(0);
  AxisPlan p;
  p.ticks = NiceTicks(d.lo, d.hi, target, axis.unit);
  p.lo = p.ticks.front();
  p.hi = p.ticks.back();
  if (axis.tight && d.hi > d.lo) {
    p.lo = d.lo;
    p.hi = d.hi;
    std::vector<double> inside;
    for (const double t : p.ticks) {
      if (t >= d.lo - 1e-9 * (d.hi - d.lo) && t <= d.hi + 1e-9 * (d.hi - d.lo)) inside.push_back(t);
    }
    p.ticks = inside;
  }
  return p;
}

std::string SvgOpen(int w, int h, absl::string_view title) {
  return absl::StrCat("<svg viewBox=\"0 0 ", w, " ", h, "\" width=\"", w, "\" height=\"", h,
                      "\" role=\"img\" aria-label=\"", Escape(title), "\">");
}

std::string FigureOpen(absl::string_view kind, absl::string_view id, absl::string_view title) {
  return absl::StrCat("<figure class=\"chart chart-", kind, "\" id=\"", Escape(id),
                      "\"><figcaption>", Escape(title), "</figcaption>");
}

std::string FigureClose(absl::string_view note) {
  return absl::StrCat(note.empty() ? "" : absl::StrCat("<p class=\"note\">", Escape(note), "</p>"),
                      "</figure>\n");
}

std::string NoData(absl::string_view kind, absl::string_view id, absl::string_view title,
                   absl::string_view note) {
  return absl::StrCat(FigureOpen(kind, id, title), "<p class=\"note nodata\">no data</p>",
                      FigureClose(note));
}

std::string Figure(absl::string_view kind, absl::string_view id, absl::string_view title, int w,
                   int h, absl::string_view svg_body, absl::string_view note) {
  return absl::StrCat(FigureOpen(kind, id, title), SvgOpen(w, h, title), svg_body, "</svg>",
                      FigureClose(note));
}

std::string AddSentence(absl::string_view note, absl::string_view sentence) {
  return absl::StrCat(note, note.empty() ? "" : " ", sentence);
}

std::string XAxis(const Scale& sx, const std::vector<double>& ticks, const Axis& axis, double top,
                  double bottom, bool labels_on_top) {
  std::string o;
  for (const double t : ticks) {
    const std::string x = N(sx(t));
    absl::StrAppend(&o, "<line class=\"grid\" x1=\"", x, "\" x2=\"", x, "\" y1=\"", N(top),
                    "\" y2=\"", N(bottom), "\"/>");
    absl::StrAppend(&o, "<text x=\"", x, "\" y=\"", N(bottom + 14), "\" text-anchor=\"middle\">",
                    Escape(TickLabel(t, axis.unit, ticks)), "</text>");
    if (labels_on_top) {
      absl::StrAppend(&o, "<text x=\"", x, "\" y=\"", N(top - 5), "\" text-anchor=\"middle\">",
                      Escape(TickLabel(t, axis.unit, ticks)), "</text>");
    }
  }
  absl::StrAppend(&o, "<line class=\"axis\" x1=\"", N(sx.r0), "\" x2=\"", N(sx.r1), "\" y1=\"",
                  N(bottom), "\" y2=\"", N(bottom), "\"/>");
  absl::StrAppend(&o, "<text class=\"axis-label\" x=\"", N((sx.r0 + sx.r1) / 2), "\" y=\"",
                  N(bottom + 32), "\" text-anchor=\"middle\">", Escape(axis.label), "</text>");
  return o;
}

std::string YAxis(const Scale& sy, const std::vector<double>& ticks, const Axis& axis, double left,
                  double right) {
  std::string o;
  for (const double t : ticks) {
    const std::string y = N(sy(t));
    absl::StrAppend(&o, "<line class=\"grid\" x1=\"", N(left), "\" x2=\"", N(right), "\" y1=\"", y,
                    "\" y2=\"", y, "\"/>");
    absl::StrAppend(&o, "<text x=\"", N(left - 6), "\" y=\"", y,
                    "\" dy=\"0.35em\" text-anchor=\"end\">", Escape(TickLabel(t, axis.unit, ticks)),
                    "</text>");
  }
  absl::StrAppend(&o, "<line class=\"axis\" x1=\"", N(left), "\" x2=\"", N(left), "\" y1=\"",
                  N(sy.r0), "\" y2=\"", N(sy.r1), "\"/>");
  const double mid = (sy.r0 + sy.r1) / 2;
  absl::StrAppend(&o, "<text class=\"axis-label\" transform=\"translate(", N(14), ",", N(mid),
                  ") rotate(-90)\" text-anchor=\"middle\">", Escape(axis.label), "</text>");
  return o;
}

std::string LineSwatch(size_t i, double x, double y, bool emphasized, bool distinct_dashes) {
  const char* dash = kDashes[(distinct_dashes ? i : i / 8) % 4];
  return absl::StrCat("<line x1=\"", N(x), "\" x2=\"", N(x + 18), "\" y1=\"", N(y), "\" y2=\"",
                      N(y), "\" stroke=\"", PaletteColor(i), "\" stroke-width=\"",
                      emphasized ? "3" : "2", "\"",
                      *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : "", "/>");
}

std::string DotSwatch(const char* colour, double x, double y) {
  return absl::StrCat("<circle cx=\"", N(x + 9), "\" cy=\"", N(y), "\" r=\"4\" fill=\"", colour,
                      "\"/>");
}

std::string Dot(absl::string_view classes, double cx, double cy, absl::string_view r,
                absl::string_view fill, absl::string_view attrs_html, absl::string_view tip) {
  return absl::StrCat("<circle class=\"", classes, "\" cx=\"", N(cx), "\" cy=\"", N(cy), "\" r=\"",
                      r, "\" fill=\"", fill, "\"", attrs_html, "><title>", Escape(tip),
                      "</title></circle>");
}

std::vector<std::pair<double, double>> Reduce(const std::vector<std::pair<double, double>>& pts) {
  if (pts.size() < 2000) return pts;
  std::vector<std::pair<double, double>> out;
  size_t i = 0;
  while (i < pts.size()) {
    const long column = std::lround(pts[i].first);
    size_t j = i, lo = i, hi = i;
    while (j < pts.size() && std::lround(pts[j].first) == column) {
      // SVG y grows downwards: "lowest" on screen is the largest y.
      if (pts[j].second > pts[lo].second) lo = j;
      if (pts[j].second < pts[hi].second) hi = j;
      ++j;
    }
    size_t keep[] = {i, std::min(lo, hi), std::max(lo, hi), j - 1};
    size_t last = static_cast<size_t>(-1);
    for (size_t k : keep) {
      if (k != last) out.push_back(pts[k]);
      last = k;
    }
    i = j;
  }
  return out;
}

unsigned DivergingColour(double t) {
  const double pos = (std::clamp(t, -1.0, 1.0) + 1) / 2 * 8;
  const int k = std::min(7, static_cast<int>(pos));
  return Mix(kDiverging[k], kDiverging[k + 1], pos - k);
}

std::string Hex(unsigned rgb) { return absl::StrFormat("#%06x", rgb); }

bool Dark(unsigned rgb) {
  const double l =
      0.299 * ((rgb >> 16) & 0xff) + 0.587 * ((rgb >> 8) & 0xff) + 0.114 * (rgb & 0xff);
  return l < 128;
}

XYFrame MakeXYFrame(const Domain& dx, const Domain& dy, const Axis& x, const Axis& y, double left,
                    double right, double top, double bottom) {
  const AxisPlan px = PlanAxis(dx, x, 10), py = PlanAxis(dy, y, 6);
  XYFrame f{MakeScale(px, left, right), MakeScale(py, bottom, top), ""};
  f.axes = absl::StrCat(YAxis(f.sy, py.ticks, y, left, right),
                        XAxis(f.sx, px.ticks, x, top, bottom, false));
  return f;
}

}  // namespace svg_parts
}  // namespace alloctrace::charts
