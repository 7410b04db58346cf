// bootstrap_cases: prints MedianWithCi (stats.h) of each case given on the
// command line, so that another implementation of the bootstrap (the
// fidelity check's, fidelity/analysis.py) is tested against this one on the
// same cases (fidelity/cpp_parity_test.py).
//
//   bootstrap_cases [--resamples=N] CASE...    a CASE: samples, comma-separated
//   {"seed": 7020105144829506147, "resamples": 2000,
//    "estimates": [[median, lo, hi], ...]}
//
// Every double is printed with 17 significant digits, so it reads back as
// the same double. Exit status: 0; 2 for a malformed argument.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "alloctrace/replayer/measure/stats.h"

namespace {

// Whether `text` is a whole double, into *out.
bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool ParseCase(const char* arg, std::vector<double>* samples) {
  const std::string s = arg;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    double x;
    if (!ParseDouble(s.substr(start, comma - start), &x)) return false;
    samples->push_back(x);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int resamples = alloctrace::kBootstrapResamples;
  std::vector<std::vector<double>> cases;
  for (int i = 1; i < argc; ++i) {
    constexpr const char kResamples[] = "--resamples=";
    if (std::strncmp(argv[i], kResamples, sizeof(kResamples) - 1) == 0) {
      resamples = std::atoi(argv[i] + sizeof(kResamples) - 1);
      continue;
    }
    cases.emplace_back();
    if (!ParseCase(argv[i], &cases.back())) {
      std::fprintf(stderr, "bootstrap_cases: not a comma-separated list of numbers: %s\n", argv[i]);
      return 2;
    }
  }
  std::printf("{\"seed\": %" PRIu64 ", \"resamples\": %d, \"estimates\": [",
              alloctrace::kBootstrapSeed, resamples);
  for (size_t i = 0; i < cases.size(); ++i) {
    const alloctrace::Estimate e = alloctrace::MedianWithCi(cases[i], resamples);
    std::printf("%s[%.17g, %.17g, %.17g]", i ? ", " : "", e.median, e.lo, e.hi);
  }
  std::printf("]}\n");
  return 0;
}
