#include "alloctrace/replayer/measure/race.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_format.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {
namespace {

// The leader set[i] races against, or set.size() if it is not one to look
// at: a leader itself, the reference, done, or not racing.
size_t LeaderToBeat(const std::vector<Contender>& set, size_t i, const RaceLeaders& leaders,
                    size_t reference) {
  const Contender& c = set[i];
  const size_t leader = c.races_apart    ? leaders.apart
                        : c.frees_blocks ? leaders.freeing
                                         : leaders.fastest;
  if (leader >= set.size() || i == leader || i == reference || c.done || !Races(c)) {
    return set.size();
  }
  return leader;
}

// set[i]'s figure over its leader's, in each round both ran (> 1: slower).
std::vector<double> RatiosToLeader(const std::vector<Contender>& set, size_t i, size_t leader) {
  std::vector<double> ratios;
  const std::map<int, double>& leads = set[leader].figures;
  for (const auto& [round, x] : set[i].figures) {
    auto it = leads.find(round);
    if (it != leads.end() && it->second > 0) ratios.push_back(x / it->second);
  }
  return ratios;
}

}  // namespace

bool Races(const Contender& c) {
  return c.role != Role::kFloor && c.failed == 0 && !c.eliminated && c.kept > 0;
}

size_t RaceLeader(const std::vector<Contender>& set, bool freeing_only, bool apart_only) {
  size_t leader = set.size();
  double best = 0;
  for (size_t i = 0; i < set.size(); ++i) {
    if (!Races(set[i]) || (freeing_only && !set[i].frees_blocks)) continue;
    if (apart_only && !set[i].races_apart) continue;
    if (set[i].figures.empty()) continue;
    const double median = Median(ValuesByRound(set[i].figures));
    if (leader == set.size() || median < best) {
      leader = i;
      best = median;
    }
  }
  return leader;
}

RaceLeaders FindRaceLeaders(const std::vector<Contender>& set) {
  return {RaceLeader(set), RaceLeader(set, /*freeing_only=*/true),
          RaceLeader(set, /*freeing_only=*/false, /*apart_only=*/true)};
}

double RaceLevel(int look, int entrants) {
  constexpr double kPi = 3.14159265358979323846;
  const double t = look < 1 ? 1 : look;
  const double k = entrants < 1 ? 1 : entrants;
  return 6 * kRaceAlpha / (kPi * kPi * t * t * k);
}

int RaceLook(std::vector<Contender>& set, const RaceLeaders& leaders, size_t reference,
             double noise_margin, int look, int entrants, int min_rounds) {
  const double level = RaceLevel(look, entrants);
  int eliminated = 0;
  for (size_t i = 0; i < set.size(); ++i) {
    const size_t leader = LeaderToBeat(set, i, leaders, reference);
    if (leader == set.size()) continue;
    Contender& c = set[i];
    std::vector<double> logs = RatiosToLeader(set, i, leader);
    for (double& x : logs) x = std::log(x);
    if (static_cast<int>(logs.size()) < min_rounds) continue;
    if (SlowerPValue(logs, noise_margin) > level) continue;
    // The contender's figure over the leader's, round by round (> 1: slower).
    const Estimate ratio = PairedRatio(c.figures, set[leader].figures);
    c.done = true;
    c.eliminated = true;
    c.stop = Stop::kEliminated;
    c.stop_reason = absl::StrFormat("eliminated after %d runs: %.2fx [%.2f, %.2f] slower than %s",
                                    c.kept, ratio.median, ratio.lo, ratio.hi, set[leader].name);
    ++eliminated;
  }
  return eliminated;
}

int EliminateGrossLosers(std::vector<Contender>& set, const RaceLeaders& leaders, size_t reference,
                         int min_rounds) {
  int eliminated = 0;
  for (size_t i = 0; i < set.size(); ++i) {
    const size_t leader = LeaderToBeat(set, i, leaders, reference);
    if (leader == set.size()) continue;
    Contender& c = set[i];
    const std::vector<double> ratios = RatiosToLeader(set, i, leader);
    const int n = static_cast<int>(ratios.size());
    if (n < 1 || n >= min_rounds) continue;
    const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    const double factor = n == 1 ? kGrossLoserFactorOneRound : kGrossLoserFactor;
    if (*lo < factor) continue;
    c.done = true;
    c.eliminated = true;
    c.stop = Stop::kEliminated;
    c.stop_reason =
        n == 1 ? absl::StrFormat(
                     "eliminated after %d run: %.1fx slower than %s in its first round (%.0fx or "
                     "more in one round: a gross loser)",
                     c.kept, *lo, set[leader].name, factor)
               : absl::StrFormat(
                     "eliminated after %d runs: %.1fx to %.1fx slower than %s in every round "
                     "(%.0fx or more in each of %d rounds: a gross loser)",
                     c.kept, *lo, *hi, set[leader].name, factor, n);
    ++eliminated;
  }
  return eliminated;
}

RaceRunLimit RaceTimeLimit(const std::vector<Contender>& set, size_t i, size_t reference,
                           double configured) {
  RaceRunLimit limit;
  if (i == reference) return limit;
  size_t pace = set.size();
  double pace_seconds = 0;
  for (size_t k = 0; k < set.size(); ++k) {
    if (!Races(set[k]) || set[k].run_seconds.empty()) continue;
    const double median = Median(set[k].run_seconds);
    if (pace == set.size() || median < pace_seconds) {
      pace = k;
      pace_seconds = median;
    }
  }
  if (pace == set.size() || pace == i) return limit;
  const double seconds = std::max(kRaceRunTimeFloorSeconds, kRaceRunTimeFactor * pace_seconds);
  if (configured > 0 && seconds >= configured) return limit;
  limit.seconds = seconds;
  limit.pace_name = set[pace].name;
  limit.pace_seconds = pace_seconds;
  return limit;
}

void EliminateStopped(Contender& c, const RaceRunLimit& limit, int round) {
  c.done = true;
  c.eliminated = true;
  c.stop = Stop::kEliminated;
  const std::string pace = absl::StrFormat("%s: %.2f s", limit.pace_name, limit.pace_seconds);
  if (limit.seconds > kRaceRunTimeFactor * limit.pace_seconds) {
    c.stop_reason = absl::StrFormat(
        "eliminated in round %d: its run passed %.0f s, more than %.0fx the fastest policy's "
        "run time (%s), and was stopped",
        round + 1, limit.seconds, kRaceRunTimeFactor, pace);
  } else {
    c.stop_reason = absl::StrFormat(
        "eliminated in round %d: its run passed %.0fx the fastest policy's run time (%s) and "
        "was stopped at %.1f s",
        round + 1, kRaceRunTimeFactor, pace, limit.seconds);
  }
}

}  // namespace alloctrace
