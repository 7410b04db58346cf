#include "alloctrace/replayer/measure/runs.h"

namespace alloctrace {

TimingClock ResolveClock(TimingClock clock, uint32_t replay_threads, uint32_t cores) {
  if (clock != TimingClock::kAuto) return clock;
  return replay_threads > 1 && replay_threads <= cores ? TimingClock::kWall : TimingClock::kCpu;
}

double RunNsPerOp(const RunResult& r, bool warm, TimingClock clock) {
  if (r.ops == 0 || r.passes.empty()) return -1;
  const bool cpu = clock != TimingClock::kWall;
  if (!warm) {
    const double pass = cpu ? r.passes[0].cpu_seconds : r.passes[0].wall_seconds;
    return 1e9 * (pass + r.process_seconds) / r.ops;
  }
  if (r.passes.size() < 2) return -1;
  double s = 0;
  for (size_t i = 1; i < r.passes.size(); ++i) {
    s += cpu ? r.passes[i].cpu_seconds : r.passes[i].wall_seconds;
  }
  return 1e9 * s / (static_cast<double>(r.ops) * static_cast<double>(r.passes.size() - 1));
}

std::map<int, double> FiguresByRound(const std::vector<RunRecord>& runs, bool warm,
                                     TimingClock clock) {
  std::map<int, double> out;
  for (const RunRecord& rr : runs) {
    const double v = RunNsPerOp(rr.result, warm, clock);
    if (v > 0) out[rr.round] = v;
  }
  return out;
}

std::vector<double> RankFigures(const PolicyRuns& runs, const Ranking& ranking) {
  std::vector<double> v;
  for (const RunRecord& rr : runs.runs) {
    const double x = RunNsPerOp(rr.result, ranking.warm(), ranking.clock);
    if (x > 0) v.push_back(x);
  }
  return v;
}

}  // namespace alloctrace
