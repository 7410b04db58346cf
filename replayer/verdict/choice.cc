#include "alloctrace/replayer/verdict/choice.h"

#include <algorithm>
#include <limits>

namespace alloctrace {
namespace {

bool MeasuredEnough(const ChoiceCandidate& c) {
  return c.speed.median.has_data() &&
         c.speed.by_round.size() >= static_cast<size_t>(kMinPairedRounds);
}

// Whether `c` is shown slower than `f` by more than `margin`: its figure
// over f's, paired by round, has a 95% CI above 1 + margin, from
// kMinPairedRounds common rounds or more (without them, nothing is shown:
// rounds apart may have met another machine).
bool ShownSlower(const ChoiceCandidate& c, const ChoiceCandidate& f, double margin) {
  const Estimate ratio = PairedRatio(c.speed.by_round, f.speed.by_round);
  return ratio.n >= kMinPairedRounds && ratio.lo > 1 + margin;
}

}  // namespace

double EquivalenceMargin(double noise_margin) { return std::max(noise_margin, kEquivalenceMargin); }

Choice Choose(const std::vector<ChoiceCandidate>& candidates, double noise_margin,
              double rss_slack) {
  Choice out;
  out.margin = EquivalenceMargin(noise_margin);
  std::vector<size_t> measured;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (MeasuredEnough(candidates[i])) measured.push_back(i);
  }
  if (measured.empty()) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].speed.median.has_data()) measured.push_back(i);
    }
  }
  if (measured.empty()) return out;
  std::vector<SpeedFigures> speed;
  for (const ChoiceCandidate& c : candidates) speed.push_back(c.speed);
  out.fastest = Fastest(speed, measured);
  // Fastest first, then as Fastest orders them.
  auto faster = [&](size_t a, size_t b) {
    if (a == out.fastest || b == out.fastest) return a == out.fastest && b != out.fastest;
    const bool paired = speed[a].reference || speed[a].vs_reference.has_data();
    const bool paired_b = speed[b].reference || speed[b].vs_reference.has_data();
    if (paired && paired_b) {
      const double sa = speed[a].reference ? 1.0 : speed[a].vs_reference.median;
      const double sb = speed[b].reference ? 1.0 : speed[b].vs_reference.median;
      return sa > sb;
    }
    return speed[a].median.median < speed[b].median.median;
  };
  const ChoiceCandidate& f = candidates[out.fastest];
  for (size_t i : measured) {
    const ChoiceCandidate& c = candidates[i];
    double margin = out.margin;
    if (!f.speed.frees_blocks && c.speed.frees_blocks) {
      margin = std::max(margin, kNeverFreesMargin);
    }
    if (i == out.fastest || !ShownSlower(c, f, margin)) out.equivalent.push_back(i);
  }
  const bool any_frees = std::any_of(out.equivalent.begin(), out.equivalent.end(),
                                     [&](size_t i) { return candidates[i].speed.frees_blocks; });
  if (any_frees) {
    out.equivalent.erase(
        std::remove_if(out.equivalent.begin(), out.equivalent.end(),
                       [&](size_t i) { return !candidates[i].speed.frees_blocks; }),
        out.equivalent.end());
  }
  std::stable_sort(out.equivalent.begin(), out.equivalent.end(), faster);

  auto preferred = [&](const std::vector<size_t>& among) {
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
  };
  std::vector<size_t>& kept = out.kept;
  kept = out.equivalent;
  if (rss_slack >= 0) {
    double smallest = std::numeric_limits<double>::max();
    for (size_t i : out.equivalent) {
      if (candidates[i].rss_known) smallest = std::min(smallest, candidates[i].peak_rss);
    }
    std::vector<size_t> slim;
    for (size_t i : out.equivalent) {
      const ChoiceCandidate& c = candidates[i];
      if (c.rss_known && WithinRssSlack(c.peak_rss, smallest, rss_slack)) slim.push_back(i);
    }
    if (!slim.empty()) kept = std::move(slim);
  }
  out.pick = preferred(kept);
  if (const size_t by_speed = preferred(out.equivalent); by_speed != out.pick) {
    out.memory_passed_over = by_speed;
  }
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
