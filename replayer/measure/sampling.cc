// Sampled windows (sampling.h): the one decision, each round's plan and
// start states, and the whole-run pass after windowed rounds.
#include "alloctrace/replayer/measure/sampling.h"

#include <algorithm>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/engine/thread_schedule.h"

namespace alloctrace {
namespace {

using measure_internal::Entry;

// Seconds the whole runs after windowed rounds may take together. They
// come out of the total budget's cap (the rounds stretch to the cap less
// what the contenders still in the race will need of this:
// KeepForWholeRuns), so a long trace's command ends within the cap and the
// decoding (docs/usage.md). On the captured 5-thread trace of 10 M events a
// whole per-thread run takes 2 to 5 s: 8 s, and then 12, covered 3 of the
// 4 contenders left, and the one without a whole run had its peak RSS from
// its windows, which the recommendation's working-set rule cannot compare
// with the others'.
constexpr double kWholeRunsAllowanceSeconds = 14;

// A whole run's wall time, from the windows' estimate of its pass: the
// pass, the child's start and the heap's teardown.
double EstimatedWholeRunSeconds(double pass_seconds) { return 1.25 * pass_seconds + 0.5; }

// The windows' estimate of a whole pass, the largest of the runs' (0: no
// run yet).
double WindowsPassSeconds(const PolicyRuns& runs) {
  double pass_seconds = 0;
  for (const RunRecord& r : runs.runs) pass_seconds = std::max(pass_seconds, r.result.seconds);
  return pass_seconds;
}

}  // namespace

bool UsesWindows(WindowsMode mode, bool rank_warm, uint64_t num_ops, uint64_t memory_ops,
                 const std::function<uint64_t()>& windowed_run_ops) {
  if (rank_warm || memory_ops == 0) return false;
  switch (mode) {
    case WindowsMode::kAlways:
      return true;
    case WindowsMode::kNever:
      return false;
    case WindowsMode::kAuto:
      break;
  }
  return memory_ops >= kWindowsFromMemoryOps && 4 * windowed_run_ops() <= num_ops;
}

// The windows of each round (engine/windows.h): drawn once per round from
// the seed, the same for every contender of the round; rebuilt windows'
// start states worked out once per round and shared with its children.
std::unique_ptr<Sampling> Sampling::For(const SharedProgram& shared, WindowsMode mode,
                                        const Ranking& ranking, uint64_t seed) {
  const ReplayProgram& program = shared.program;
  const bool per_thread = shared.schedule && !shared.schedule->streams.empty();
  WindowShape shape;
  bool shaped = false;
  auto shape_windows = [&] {
    // A per-thread replay is served whatever it would rebuild.
    const uint64_t rebuild_ops =
        per_thread ? 0 : RebuildOps(ViewOf(program), program.peak_live_objects);
    shape = ShapeFor(program.ops.size(), rebuild_ops, per_thread);
    shaped = true;
    return WindowedRunOps(shape, rebuild_ops);
  };
  if (!UsesWindows(mode, ranking.warm(), program.ops.size(), program.memory_ops(), shape_windows)) {
    return nullptr;
  }
  if (!shaped) shape_windows();
  return std::unique_ptr<Sampling>(new Sampling(shared, shape, seed));
}

Sampling::Sampling(const SharedProgram& shared, const WindowShape& shape, uint64_t seed)
    : shared_(shared),
      num_ops_(shared.program.ops.size()),
      shape_(shape),
      weights_(StratumWeights(ViewOf(shared.program), shape_)),
      seed_(seed) {}

const std::string& Sampling::WordFor(int round) {
  Plan(round);
  return word_;
}

const std::vector<ReplayWindow>& Sampling::WindowsOf(int round) {
  Plan(round);
  return windows_;
}

int Sampling::StatesFdFor(int round) {
  Plan(round);
  return states_fd_.get();
}

bool Sampling::served() const { return shape_.served; }

SamplingFacts Sampling::Facts() const {
  SamplingFacts f;
  f.windowed = true;
  f.strata = shape_.strata;
  f.per_run = shape_.served ? 1 : shape_.strata;
  f.window_ops = shape_.window_ops;
  f.lead_ops = shape_.lead_ops;
  f.served = shape_.served;
  f.timed_share = num_ops_ == 0 ? 0
                                : std::min(1.0, static_cast<double>(f.per_run) *
                                                    static_cast<double>(shape_.window_ops) /
                                                    static_cast<double>(num_ops_));
  return f;
}

// Round `round`'s windows and states, made when it is first asked for (the
// rounds ask in order: the previous round's are dropped).
void Sampling::Plan(int round) {
  if (round == round_) return;
  round_ = round;
  windows_ = PlanWindows(num_ops_, shape_, weights_, seed_, round);
  const std::vector<ReplayWindow>& windows = windows_;
  word_ = WindowsWord(windows);
  states_fd_.Reset();
  const ThreadSchedule* schedule = shared_.schedule ? &*shared_.schedule : nullptr;
  if (shape_.served && schedule != nullptr) {  // and each stream's bounds
    const std::vector<uint32_t> begin =
        StreamOpsBefore(shared_.program, *schedule, windows[0].begin);
    const std::vector<uint32_t> end = StreamOpsBefore(shared_.program, *schedule, windows[0].end);
    for (size_t t = 0; t < begin.size(); ++t) {
      absl::StrAppend(&word_, t == 0 ? ";" : ",", begin[t], ",", end[t]);
    }
  }
  if (shape_.served) return;  // the serving children need no states
  absl::StatusOr<int> fd = ShareWindowStates(StartStates(ViewOf(shared_.program), windows));
  if (fd.ok()) states_fd_.Reset(*fd);
}

// What the contenders left will need by their windows' estimates (on the
// 11 M-op trace, 1.1 s each), at most the allowance.
void Sampling::KeepForWholeRuns(const std::vector<Entry>& entries, RoundsSettings* rounds) const {
  rounds->kept_seconds = kWholeRunsAllowanceSeconds;
  rounds->kept_for = [&entries](size_t i) {
    if (!entries[i].runs.skipped.empty()) return 0.0;
    const double pass = WindowsPassSeconds(entries[i].runs);
    return pass > 0 ? EstimatedWholeRunSeconds(pass) : -1.0;
  };
  rounds->to_cap = true;
}

// The cheapest first (by their windows' estimate), so that as many as can
// get one within kWholeRunsAllowanceSeconds; a run is started only where
// its estimate fits in what is left of it, and is limited to a few times
// its estimated pass (at least 5 s).
void Sampling::MakeWholeRuns(std::vector<Entry>& entries, const std::vector<Contender>& contenders,
                             const WholeRun& whole_run, const RoundsSettings& rounds,
                             const Ranking& ranking) const {
  std::vector<std::pair<double, size_t>> order;  // (the windows' estimate of a pass, entry)
  double rounds_spent = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Contender& c = contenders[i];
    rounds_spent += c.spent;
    if (c.role == Role::kNoise || c.eliminated || c.failed > 0 ||
        !entries[i].runs.skipped.empty()) {
      continue;
    }
    if (RankFigures(entries[i].runs, ranking).empty()) continue;
    order.emplace_back(WindowsPassSeconds(entries[i].runs), i);
  }
  std::sort(order.begin(), order.end());
  // What their estimates need (the rounds kept that much of the cap), or
  // more where the rounds left more of it; never more than the allowance.
  double need = 0;
  for (const auto& [pass_seconds, i] : order) need += EstimatedWholeRunSeconds(pass_seconds);
  const double cap = std::max(rounds.total_budget_seconds, rounds.max_total_budget_seconds);
  const double allowed = std::min(kWholeRunsAllowanceSeconds, std::max(need, cap - rounds_spent));
  double spent = 0;
  for (const auto& [pass_seconds, i] : order) {
    Entry& e = entries[i];
    const double estimate = EstimatedWholeRunSeconds(pass_seconds);
    if (spent + estimate > allowed) {
      e.runs.whole_run_note = absl::StrFormat(
          "no whole run: its estimated %.1f s would pass the %.1f s left for whole runs "
          "(%.1f s spent)",
          estimate, allowed, spent);
      continue;
    }
    ChildLimits limits = rounds.limits;
    const double bound = std::max(5.0, 4 * pass_seconds + 2);
    if (limits.wall_seconds <= 0 || limits.wall_seconds > bound) limits.wall_seconds = bound;
    spent += whole_run(i, limits);
  }
}

}  // namespace alloctrace
