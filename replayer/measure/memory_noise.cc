// memory_noise: how steady this machine's speed is for memory-bound work,
// from one millisecond to the next. For each buffer size it walks a random
// cycle through the buffer (each load depends on the last), timing every
// `--loads` loads as one sample, and after each sample times a fixed loop
// of arithmetic on registers alone; then prints the median time per load,
// the spread of the samples (standard deviation of their logarithm), the
// share more than 1.5x the median, how alike two samples about 1, 10 and
// 50 ms apart are (autocorrelation of the log), and the arithmetic's
// spread.
//
// What it tells (docs/results.md, "Where the noise comes from"): on a
// shared machine a buffer that fits the last-level cache only in part
// (here 8 MiB) changes speed by up to 2.5x in spells of a few to tens of
// milliseconds, while one that fits, one far too large for it, and the
// arithmetic hold within a few percent: the neighbours take and give back
// the shared cache. A replayed window of a long trace, 15 to 25 ms of
// timed ops with a working set of that size, meets that spread in full.
//
//   bazel run -c opt //replayer/measure:memory_noise
//   bazel run -c opt //replayer/measure:memory_noise -- --mib=8 --samples=3000
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "alloctrace/replayer/measure/stats.h"

namespace {

using alloctrace::Median;

double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double StdDev(const std::vector<double>& v) {
  const double m = Mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

double Autocorrelation(const std::vector<double>& v, size_t lag) {
  const double m = Mean(v);
  double num = 0, den = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    den += (v[i] - m) * (v[i] - m);
    if (i + lag < v.size()) num += (v[i] - m) * (v[i + lag] - m);
  }
  return den > 0 ? num / den : 0;
}

// "--name=value" as a positive integer; false if `arg` is not that flag.
bool IntFlag(const char* arg, const char* name, long* out) {
  const std::string prefix = std::string("--") + name + "=";
  if (std::strncmp(arg, prefix.c_str(), prefix.size()) != 0) return false;
  char* end = nullptr;
  const long v = std::strtol(arg + prefix.size(), &end, 10);
  if (end == arg + prefix.size() || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "memory_noise: %s wants a positive integer\n", prefix.c_str());
    std::exit(2);
  }
  *out = v;
  return true;
}

// One size's samples: the log of each sample's seconds, and when each began.
struct Series {
  std::vector<double> walk, arithmetic, at;
};

Series Sample(size_t mib, long loads, long samples) {
  // One cycle through every slot (Sattolo's shuffle), so the walk cannot
  // settle into a short loop that the caches hold.
  const size_t n = mib * (1 << 20) / sizeof(uint64_t);
  std::vector<uint64_t> next(n);
  std::iota(next.begin(), next.end(), 0);
  std::mt19937_64 rng(1);
  for (size_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(next[i], next[pick(rng)]);
  }
  Series s;
  uint64_t p = 0, x = 1;
  const long warmup = 20;
  for (long k = 0; k < samples + warmup; ++k) {
    const double t0 = Now();
    for (long i = 0; i < loads; ++i) p = next[p];
    const double t1 = Now();
    for (long i = 0; i < 100000; ++i) x = x * 6364136223846793005ull + (x >> 29);
    const double t2 = Now();
    if (k < warmup) continue;
    s.walk.push_back(std::log(t1 - t0));
    s.arithmetic.push_back(std::log(t2 - t1));
    s.at.push_back(t0);
  }
  asm volatile("" : : "r"(p), "r"(x));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long loads = 10000, samples = 1000;
  std::vector<size_t> sizes = {2, 4, 8, 16, 64};
  for (int i = 1; i < argc; ++i) {
    long mib = 0;
    if (IntFlag(argv[i], "mib", &mib)) {
      sizes = {static_cast<size_t>(mib)};
      continue;
    }
    if (IntFlag(argv[i], "loads", &loads) || IntFlag(argv[i], "samples", &samples)) continue;
    std::fprintf(stderr,
                 "memory_noise: unknown argument '%s'\n"
                 "usage: memory_noise [--mib=N (default: 2, 4, 8, 16 and 64)] [--loads=10000] "
                 "[--samples=1000]\n",
                 argv[i]);
    return 2;
  }
  if (samples < 300) {
    std::fprintf(stderr, "memory_noise: --samples must be at least 300\n");
    return 2;
  }
  for (size_t mib : sizes) {
    if (mib > 4096) {
      std::fprintf(stderr, "memory_noise: --mib=%zu: at most 4096 (the walk's buffer, in MiB)\n",
                   mib);
      return 2;
    }
  }
  std::printf("memory_noise: %ld samples of %ld dependent loads per buffer size\n", samples, loads);
  std::printf("%8s %9s %7s %7s %26s %12s\n", "buffer", "ns/load", "log sd", ">1.5x",
              "autocorrelation at lag", "arith log sd");
  for (size_t mib : sizes) {
    const Series s = Sample(mib, loads, samples);
    const double median = Median(s.walk);
    size_t slow = 0;
    for (double w : s.walk) slow += w > median + std::log(1.5);
    const double period_ms =
        (s.at.back() - s.at.front()) / static_cast<double>(s.at.size() - 1) * 1e3;
    std::string lags;
    for (double lag_ms : {1.0, 10.0, 50.0}) {
      const size_t lag = std::max<size_t>(1, static_cast<size_t>(lag_ms / period_ms + 0.5));
      char word[32];
      std::snprintf(word, sizeof word, " %.2f@%.0fms", Autocorrelation(s.walk, lag),
                    static_cast<double>(lag) * period_ms);
      lags += word;
    }
    std::printf("%5zu MiB %9.1f %7.3f %6.1f%% %26s %12.3f\n", mib,
                std::exp(median) * 1e9 / static_cast<double>(loads), StdDev(s.walk),
                100.0 * static_cast<double>(slow) / static_cast<double>(s.walk.size()),
                lags.c_str(), StdDev(s.arithmetic));
  }
  return 0;
}
