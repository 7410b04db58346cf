#include "replayer/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace alloctrace {

double Estimate::HalfWidth() const {
  if (n == 0 || median == 0) return std::numeric_limits<double>::infinity();
  return (hi - lo) / 2 / std::fabs(median);
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
  std::mt19937_64 rng(seed);
  const size_t n = samples.size();
  std::vector<double> draw(n);
  std::vector<double> medians(static_cast<size_t>(resamples));
  for (double& m : medians) {
    for (double& d : draw) {
      const uint64_t i = static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
      d = samples[i];
    }
    m = Median(draw);
  }
  std::sort(medians.begin(), medians.end());
  const double last = static_cast<double>(resamples - 1);
  e.lo = medians[static_cast<size_t>(std::floor(0.025 * last))];
  e.hi = medians[static_cast<size_t>(std::ceil(0.975 * last))];
  return e;
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

}  // namespace alloctrace
