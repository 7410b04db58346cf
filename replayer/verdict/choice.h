// The one rule by which a verdict names a policy, the replay's
// (summary.h: Recommend) and the program's (in_situ_verdict.h:
// DecideInSitu) alike: speed first, within a margin of practical
// equivalence; memory only among the practically equal; then a fixed
// preference, so that noise between near-equal policies cannot move the
// pick from one invocation to the next.
//
//  1. The fastest (summary.h: Fastest, paired with the reference) among the
//     candidates measured enough (kMinPairedRounds rounds or more; if none
//     is, all).
//  2. The equivalent: each candidate measured enough that is not slower
//     than the fastest by more than the margin: its figure over the
//     fastest's, paired by round, from kMinPairedRounds common rounds or
//     more (with fewer, nothing is read), has a median at most
//     1 + margin. The median decides, not the interval: a noisy
//     per-thread replay's few rounds leave an interval reaching 1 for a
//     policy 1.5x to 2x slower at the median (glibc malloc, first in the
//     order, on a captured producer/consumer the program runs 1.6x to 1.8x
//     slower on it than on its best: docs/fidelity.md), and a rule on the
//     interval's end moves with the machine's load. A wide noise floor
//     widens the margin itself.
//     The margin is the larger of the noise margin and kEquivalenceMargin
//     (measure/stats.h: EquivalenceMargin, which the race uses too);
//     against a fastest that never frees its blocks, a candidate that frees
//     gets kNeverFreesMargin if that is larger (summary.h). If the
//     equivalent include one that frees, those that never free leave (a
//     tie goes to bounded memory).
//  3. Memory, only among the equivalent (and only with rss_slack >= 0):
//     those whose median peak RSS is within the RSS slack of the smallest
//     of them (WithinRssSlack). Candidates whose peak RSS cannot be
//     compared (ChoiceCandidate::rss_known false) are not weighed.
//  4. Of those, the first in the fixed order (ChoiceCandidate::order:
//     FixedOrder).
// A slower candidate is never chosen for memory: the smallest peak RSS is
// said beside the verdict, and a user who would trade speed for it reads
// the figures.
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_VERDICT_CHOICE_H_
#define ALLOCTRACE_REPLAYER_VERDICT_CHOICE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

struct ChoiceCandidate {
  std::string name;
  SpeedFigures speed;
  double peak_rss = 0;    // median, bytes
  bool rss_known = true;  // comparable with the others' peak RSS
  int order = 0;          // FixedOrder: lower first
};

struct Choice {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t pick = kNone;             // kNone: no candidate has a figure
  size_t fastest = kNone;          // the lowest median (measured enough)
  std::vector<size_t> measured;    // step 1: measured enough (all with a figure if none is)
  std::vector<size_t> equivalent;  // step 2, fastest first then by median
  std::vector<size_t> kept;        // step 3: those of them memory keeps
  double margin = 0;               // the margin of practical equivalence used
  Estimate pick_vs_fastest;        // the pick's figure over the fastest's (>1: slower)
  // Step 3 left out the equivalent candidate the preference would have
  // taken: its index (kNone if memory changed nothing).
  size_t memory_passed_over = kNone;
  // The fastest never frees and the pick does: its index, and the pick's
  // figure over its (>1: the one passed over is faster).
  size_t never_frees_passed_over = kNone;
  Estimate never_frees_edge;
};

// The choice among `candidates` by the rule above; `rss_slack` < 0 ranks
// by speed alone.
Choice Choose(const std::vector<ChoiceCandidate>& candidates, double noise_margin,
              double rss_slack);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_VERDICT_CHOICE_H_
