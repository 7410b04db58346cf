#include "alloctrace/replayer/verdict/choice.h"

#include <algorithm>
#include <limits>

namespace alloctrace {
namespace {

bool MeasuredEnough(const ChoiceCandidate& c) {
  return c.speed.median.has_data() &&
         c.speed.by_round.size() >= static_cast<size_t>(kMinPairedRounds);
}

// Whether `c` is slower than `f` by more than `margin`: its figure over
// f's, paired by round, from kMinPairedRounds common rounds or more
// (without them, nothing is read: rounds apart may have met another
// machine), has a median above 1 + margin. The median decides, not the
// interval (choice.h, step 2).
bool SlowerBeyond(const ChoiceCandidate& c, const ChoiceCandidate& f, double margin) {
  const Estimate ratio = PairedRatio(c.speed.by_round, f.speed.by_round);
  return ratio.n >= kMinPairedRounds && ratio.median > 1 + margin;
}

// The candidates measured enough; all with a figure if none is.
std::vector<size_t> Measured(const std::vector<ChoiceCandidate>& candidates) {
  std::vector<size_t> measured;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (MeasuredEnough(candidates[i])) measured.push_back(i);
  }
  if (!measured.empty()) return measured;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].speed.median.has_data()) measured.push_back(i);
  }
  return measured;
}

// Step 2: of `measured`, those not slower than `fastest` by more
// than `margin` (kNeverFreesMargin for one that frees against a fastest
// that never frees), those that never free left out if one frees; the
// fastest first, then by their time over its, paired.
std::vector<size_t> Equivalent(const std::vector<ChoiceCandidate>& candidates,
                               const std::vector<size_t>& measured, size_t fastest, double margin) {
  const ChoiceCandidate& f = candidates[fastest];
  std::vector<size_t> out;
  for (size_t i : measured) {
    const ChoiceCandidate& c = candidates[i];
    const double m = !f.speed.frees_blocks && c.speed.frees_blocks
                         ? std::max(margin, kNeverFreesMargin)
                         : margin;
    if (i == fastest || !SlowerBeyond(c, f, m)) out.push_back(i);
  }
  if (std::any_of(out.begin(), out.end(),
                  [&](size_t i) { return candidates[i].speed.frees_blocks; })) {
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](size_t i) { return !candidates[i].speed.frees_blocks; }),
              out.end());
  }
  auto behind = [&](size_t i) {
    if (i == fastest) return 0.0;
    const Estimate r = PairedRatio(candidates[i].speed.by_round, f.speed.by_round);
    return r.has_data() ? r.median : candidates[i].speed.median.median / f.speed.median.median;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](size_t a, size_t b) { return behind(a) < behind(b); });
  return out;
}

// Step 3: of `equivalent`, those whose peak RSS is within the slack of
// their smallest; all of them if none can be compared.
std::vector<size_t> KeptByMemory(const std::vector<ChoiceCandidate>& candidates,
                                 const std::vector<size_t>& equivalent, double rss_slack) {
  if (rss_slack < 0) return equivalent;
  double smallest = std::numeric_limits<double>::max();
  for (size_t i : equivalent) {
    if (candidates[i].rss_known) smallest = std::min(smallest, candidates[i].peak_rss);
  }
  std::vector<size_t> kept;
  for (size_t i : equivalent) {
    const ChoiceCandidate& c = candidates[i];
    if (c.rss_known && WithinRssSlack(c.peak_rss, smallest, rss_slack)) kept.push_back(i);
  }
  return kept.empty() ? equivalent : kept;
}

// Step 4: the first of `among` in the fixed order, then by name.
size_t FirstInOrder(const std::vector<ChoiceCandidate>& candidates,
                    const std::vector<size_t>& among) {
  size_t best = Choice::kNone;
  for (size_t i : among) {
    if (best == Choice::kNone) {
      best = i;
      continue;
    }
    const ChoiceCandidate& a = candidates[i];
    const ChoiceCandidate& b = candidates[best];
    if (a.order != b.order ? a.order < b.order : a.name < b.name) best = i;
  }
  return best;
}

}  // namespace

Choice Choose(const std::vector<ChoiceCandidate>& candidates, double noise_margin,
              double rss_slack) {
  Choice out;
  out.margin = EquivalenceMargin(noise_margin);
  out.measured = Measured(candidates);
  const std::vector<size_t>& measured = out.measured;
  if (measured.empty()) return out;
  std::vector<SpeedFigures> speed;
  for (const ChoiceCandidate& c : candidates) speed.push_back(c.speed);
  out.fastest = Fastest(speed, measured);
  out.equivalent = Equivalent(candidates, measured, out.fastest, out.margin);
  out.kept = KeptByMemory(candidates, out.equivalent, rss_slack);
  out.pick = FirstInOrder(candidates, out.kept);
  if (const size_t by_speed = FirstInOrder(candidates, out.equivalent); by_speed != out.pick) {
    out.memory_passed_over = by_speed;
  }
  const ChoiceCandidate& f = candidates[out.fastest];
  const ChoiceCandidate& pick = candidates[out.pick];
  if (out.pick != out.fastest) {
    out.pick_vs_fastest = PairedRatio(pick.speed.by_round, f.speed.by_round);
  }
  if (!f.speed.frees_blocks && pick.speed.frees_blocks) {
    out.never_frees_passed_over = out.fastest;
    out.never_frees_edge = out.pick_vs_fastest;
  }
  return out;
}

}  // namespace alloctrace
