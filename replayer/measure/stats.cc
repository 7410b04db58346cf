#include "alloctrace/replayer/measure/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace alloctrace {

double Estimate::HalfWidth() const {
  if (n == 0 || median == 0) return std::numeric_limits<double>::infinity();
  return std::max(hi - median, median - lo) / std::fabs(median);
}

std::vector<double> ValuesByRound(const std::map<int, double>& by_round) {
  std::vector<double> v;
  v.reserve(by_round.size());
  for (const auto& [round, x] : by_round) v.push_back(x);
  return v;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Estimate MedianWithCi(const std::vector<double>& samples, int resamples, uint64_t seed) {
  Estimate e;
  e.n = static_cast<int>(samples.size());
  if (samples.empty()) return e;
  e.median = Median(samples);
  if (samples.size() == 1 || resamples < 2) {
    e.lo = e.hi = e.median;
    return e;
  }
  // mt19937_64's sequence is fixed by the standard; the index is drawn by
  // multiply-shift (not uniform_int_distribution, whose output varies
  // between library implementations).
  //
  // A resample's median is found without sorting it: with the samples
  // ranked once, the k-th smallest drawn value is the value of the k-th
  // smallest drawn rank, and counting the drawn ranks finds the middle ones
  // in O(n). The same draws give bitwise the same medians as sorting each
  // resample (stats_test checks it), 5-10x faster, so the race's stopping
  // check can afford as many resamples as the report's figures.
  std::mt19937_64 rng(seed);
  const size_t n = samples.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return samples[a] < samples[b]; });
  std::vector<double> sorted(n);
  std::vector<uint32_t> rank(n);
  for (size_t k = 0; k < n; ++k) {
    sorted[k] = samples[order[k]];
    rank[order[k]] = static_cast<uint32_t>(k);
  }
  const size_t low = (n - 1) / 2, high = n / 2;  // the middle order statistics
  std::vector<uint32_t> count(n);
  std::vector<double> medians(static_cast<size_t>(resamples));
  for (double& m : medians) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t j = 0; j < n; ++j) {
      const uint64_t i = static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
      ++count[rank[i]];
    }
    size_t seen = 0, r = 0;
    while (seen + count[r] <= low) seen += count[r++];
    const double a = sorted[r];
    while (seen + count[r] <= high) seen += count[r++];
    const double b = sorted[r];
    m = n % 2 ? b : (a + b) / 2;
  }
  std::sort(medians.begin(), medians.end());
  const double last = static_cast<double>(resamples - 1);
  e.lo = medians[static_cast<size_t>(std::floor(0.025 * last))];
  e.hi = medians[static_cast<size_t>(std::ceil(0.975 * last))];
  return e;
}

std::vector<double> PairedRatios(const std::map<int, double>& reference,
                                 const std::map<int, double>& subject) {
  std::vector<double> ratios;
  for (const auto& [round, x] : subject) {
    auto it = reference.find(round);
    if (it != reference.end() && x > 0) ratios.push_back(it->second / x);
  }
  return ratios;
}

Estimate PairedRatio(const std::map<int, double>& reference, const std::map<int, double>& subject) {
  return MedianWithCi(PairedRatios(reference, subject));
}

bool Overlaps(const Estimate& a, const Estimate& b) {
  return a.has_data() && b.has_data() && a.lo <= b.hi && b.lo <= a.hi;
}

std::vector<size_t> TiedWithLowest(const std::vector<Estimate>& estimates) {
  size_t best = estimates.size();
  for (size_t i = 0; i < estimates.size(); ++i) {
    if (!estimates[i].has_data()) continue;
    if (best == estimates.size() || estimates[i].median < estimates[best].median) best = i;
  }
  std::vector<size_t> tied;
  if (best == estimates.size()) return tied;
  for (size_t i = 0; i < estimates.size(); ++i) {
    if (i == best || Overlaps(estimates[i], estimates[best])) tied.push_back(i);
  }
  return tied;
}

bool NoiseFloorUsable(const Estimate& noise_floor) {
  return noise_floor.n >= kMinPairedRounds && noise_floor.median >= 2.0 / 3 &&
         noise_floor.median <= 1.5;
}

double NoiseMargin(const Estimate& noise_floor) {
  if (!NoiseFloorUsable(noise_floor)) return 0;
  return std::max(noise_floor.median, 1 / noise_floor.median) - 1;
}

double EquivalenceMargin(double noise_margin) { return std::max(noise_margin, kEquivalenceMargin); }

bool PairedTie(const Estimate& ratio, double noise_margin) {
  if (!ratio.has_data()) return false;
  if (ratio.n < kMinPairedRounds) return true;
  if (ratio.lo <= 1 && ratio.hi >= 1) return true;
  const double m = std::max(noise_margin, 0.0);
  return ratio.lo >= 1 / (1 + m) && ratio.hi <= 1 + m;
}

namespace {

// The regularized incomplete beta function I_x(a, b), by Lentz's continued
// fraction (as in Numerical Recipes' betacf), accurate to ~1e-12.
double BetaFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-14) break;
  }
  return h;
}

double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaFraction(a, b, x) / a;
  return 1 - front * BetaFraction(b, a, 1 - x) / b;
}

}  // namespace

double StudentTUpperTail(double t, int df) {
  const double v = df;
  const double tail = 0.5 * RegularizedBeta(v / 2, 0.5, v / (v + t * t));
  return t >= 0 ? tail : 1 - tail;
}

double SlowerPValue(const std::vector<double>& log_ratios, double margin) {
  const size_t n = log_ratios.size();
  if (n < 2) return 1;
  double mean = 0;
  for (double x : log_ratios) mean += x;
  mean /= static_cast<double>(n);
  double ss = 0;
  for (double x : log_ratios) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  const double diff = mean - std::log1p(std::max(margin, 0.0));
  if (sd == 0) return diff > 0 ? 0 : 1;
  const double t = diff / (sd / std::sqrt(static_cast<double>(n)));
  return StudentTUpperTail(t, static_cast<int>(n - 1));
}

}  // namespace alloctrace
