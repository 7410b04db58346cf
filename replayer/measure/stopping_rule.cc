// The rounds' stopping rule per contender (rounds.h: Precise, UpdateDone,
// RecheckPrecise, OwnBudgetApplies): when a contender is precise, failed,
// has spent its own budget or made max_runs runs, and why it stopped.
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {
namespace {

// Whether the median of `values` (positive) is clearly short of
// `precision`, without a bootstrap: the interval a normal approximation
// gives the median from the spread of the logs (the MAD, so that outliers
// do not widen it) is more than twice as wide. The bootstrap then could
// not find it within the precision; anything closer, it decides. Checked
// after every round for every contender still measuring, the bootstraps
// were most of the replayer's own work on a long trace (hundreds of
// rounds of 2000 resamples each).
bool ClearlyImprecise(const std::vector<double>& values, double precision) {
  if (values.size() < 5 || precision <= 0) return false;
  std::vector<double> logs;
  for (double v : values) {
    if (!(v > 0)) return false;
    logs.push_back(std::log(v));
  }
  const double center = Median(logs);
  for (double& l : logs) l = std::abs(l - center);
  const double sigma = 1.4826 * Median(logs);
  const double half_width = 1.96 * 1.2533 * sigma / std::sqrt(static_cast<double>(values.size()));
  return half_width > 2 * precision;
}

}  // namespace

bool Precise(const Contender& c, const Contender* reference, double precision) {
  const std::vector<double> figures = ValuesByRound(c.figures);
  if (ClearlyImprecise(figures, precision)) return false;
  if (MedianWithCi(figures).HalfWidth() > precision) return false;
  if (reference == nullptr || reference == &c) return true;
  const std::vector<double> ratios = PairedRatios(reference->figures, c.figures);
  if (ClearlyImprecise(ratios, precision)) return false;
  const Estimate ratio = MedianWithCi(ratios);
  return !ratio.has_data() || ratio.HalfWidth() <= precision;
}

void RecheckPrecise(Contender& c, const Contender* reference, double precision) {
  if (c.stop != Stop::kPrecise || Precise(c, reference, precision)) return;
  c.stop = Stop::kPreciseThenWidened;
  c.stop_reason =
      "precise once, then ran on so the others' runs had their pair; its CIs widened since";
}

bool OwnBudgetApplies(const RoundsSettings& s) { return !(s.race && s.total_budget_seconds > 0); }

void UpdateDone(Contender& c, const Contender* reference, const RoundsSettings& s) {
  if (c.done) return;
  if (c.failed > 0) {
    if (c.fatal || c.attempts >= s.min_runs) {
      c.done = true;
      c.stop = Stop::kFailed;
      c.stop_reason = "failed";
    }
    return;
  }
  if (c.kept >= s.min_runs && Precise(c, reference, s.precision)) {
    c.done = true;
    c.stop = Stop::kPrecise;
    c.stop_reason = "precise";
  } else if (OwnBudgetApplies(s) && c.kept >= s.min_runs && c.spent >= s.budget_seconds) {
    c.done = true;
    c.stop = Stop::kOwnBudget;
    c.stop_reason = absl::StrFormat("budget of %.0f s spent", s.budget_seconds);
  } else if (c.kept >= s.max_runs) {
    c.done = true;
    c.stop = Stop::kMaxRuns;
    c.stop_reason = absl::StrCat("--max_runs=", s.max_runs, " reached");
  }
}

}  // namespace alloctrace
