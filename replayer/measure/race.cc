#include "alloctrace/replayer/measure/race.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_format.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {

bool Races(const Measured& m) {
  return m.runs.skipped.empty() && m.runs.failed == 0 && m.policy != "bump" && !m.runs.eliminated &&
         !m.runs.runs.empty();
}

size_t RaceLeader(const std::vector<Measured>& set, const ReportContext& ctx, bool freeing_only) {
  size_t leader = set.size();
  double best = 0;
  for (size_t i = 0; i < set.size(); ++i) {
    if (!Races(set[i]) || (freeing_only && !set[i].runs.frees_blocks)) continue;
    const std::vector<double> v = RankFigures(set[i].runs, ctx);
    if (v.empty()) continue;
    const double median = Median(v);
    if (leader == set.size() || median < best) {
      leader = i;
      best = median;
    }
  }
  return leader;
}

RaceLeaders FindRaceLeaders(const std::vector<Measured>& set, const ReportContext& ctx) {
  return {RaceLeader(set, ctx), RaceLeader(set, ctx, /*freeing_only=*/true)};
}

double RaceLevel(int look, int entrants) {
  constexpr double kPi = 3.14159265358979323846;
  const double t = look < 1 ? 1 : look;
  const double k = entrants < 1 ? 1 : entrants;
  return 6 * kRaceAlpha / (kPi * kPi * t * t * k);
}

int RaceLook(std::vector<Measured>& set, const RaceLeaders& leaders, size_t reference,
             double noise_margin, int look, int entrants, const MeasureSettings& s) {
  const bool warm = RanksWarm(s.ctx);
  std::map<size_t, std::map<int, double>> lead;  // by leader
  for (size_t l : {leaders.fastest, leaders.freeing}) {
    if (l < set.size()) lead[l] = FiguresByRound(set[l].runs.runs, warm, s.ctx.clock);
  }
  const double level = RaceLevel(look, entrants);
  int eliminated = 0;
  for (size_t i = 0; i < set.size(); ++i) {
    Measured& m = set[i];
    const size_t leader = m.runs.frees_blocks ? leaders.freeing : leaders.fastest;
    if (leader >= set.size() || i == leader || i == reference || m.done || !Races(m)) continue;
    const std::map<int, double>& leads = lead[leader];
    const std::map<int, double> mine = FiguresByRound(m.runs.runs, warm, s.ctx.clock);
    std::vector<double> logs;
    for (const auto& [round, x] : mine) {
      auto it = leads.find(round);
      if (it != leads.end()) logs.push_back(std::log(x / it->second));
    }
    if (static_cast<int>(logs.size()) < s.race_min_runs) continue;
    const double p = SlowerPValue(logs, noise_margin);
    if (p > level) continue;
    // The policy's ns/op over the leader's, round by round (> 1: slower).
    const Estimate ratio = PairedRatio(mine, leads);
    m.done = true;
    m.runs.eliminated = true;
    m.runs.stop_reason =
        absl::StrFormat("eliminated after %d runs: %.2fx [%.2f, %.2f] slower than %s",
                        static_cast<int>(m.runs.runs.size()), ratio.median, ratio.lo, ratio.hi,
                        set[leader].runs.name);
    ++eliminated;
  }
  return eliminated;
}

RaceRunLimit RaceTimeLimit(const std::vector<Measured>& set, size_t i, size_t reference,
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
  limit.pace_policy = set[pace].runs.name;
  limit.pace_seconds = pace_seconds;
  return limit;
}

void EliminateStopped(Measured& m, const RaceRunLimit& limit, int round) {
  m.done = true;
  m.runs.eliminated = true;
  const std::string pace = absl::StrFormat("%s: %.2f s", limit.pace_policy, limit.pace_seconds);
  if (limit.seconds > kRaceRunTimeFactor * limit.pace_seconds) {
    m.runs.stop_reason = absl::StrFormat(
        "eliminated in round %d: its run passed %.0f s, more than %.0fx the fastest policy's "
        "run time (%s), and was stopped",
        round + 1, limit.seconds, kRaceRunTimeFactor, pace);
  } else {
    m.runs.stop_reason = absl::StrFormat(
        "eliminated in round %d: its run passed %.0fx the fastest policy's run time (%s) and "
        "was stopped at %.1f s",
        round + 1, kRaceRunTimeFactor, pace, limit.seconds);
  }
}

}  // namespace alloctrace
