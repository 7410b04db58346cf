// The measurement protocol of the replayer: for one trace, runs of every
// policy in rounds (the order shuffled each round), each run in a fresh child
// process, until each policy's median ns/op and its ratio to glibc malloc
// (paired by round) reach the stated precision, its time budget is spent or
// --max_runs is reached.
//
// Contract:
// - A run disturbed by an involuntary context switch in its ranking passes
//   (the cold pass, or the warm ones with rank_by warm) or by a CPU
//   migration is run again, up to MeasureSettings::max_reruns times, unless
//   most runs so far were disturbed (a busy machine) or re-runs already make
//   a tenth of the runs; then it is kept and counted. Switches in the other passes do not count:
//   they leave the ranking figure as it is (measured; docs/results.md).
// - glibc malloc runs as long as any other policy does, so every run has a
//   malloc run of the same round to pair with; a second malloc run set
//   ("malloc (again)") gives the noise floor.
// - With the race (MeasureSettings::race, the default; race.h), a policy
//   shown slower than the leader (paired by round, error rate corrected for
//   the repeated looks) is eliminated and runs no more; the leader runs as
//   long as anyone does, so every racing run has a leader's run to pair
//   with; all runs stop once MeasureSettings::total_budget_seconds of runs
//   are spent (0: no total limit; checked before every run after the first
//   round, so every policy gets at least one run). With the screen, every article policy
//   enters the same race. And a run's time limit follows the race
//   (race.h, RaceTimeLimit): past 20x the fastest policy's run time (at
//   least 5 s) a child is stopped and its policy eliminated, not failed;
//   glibc malloc runs first in the first round, so that time is known
//   before the others run.
// - Without the race, with the screen, the fastest article policy of each
//   storage kind in a short screen (MeasureSettings::screen_runs runs each)
//   is added to the set.
// - A failed run (crash, error, the configured time limit or the memory
//   limit) is never hidden: the policy is reported failed with its first
//   error.
// - The child is `self` re-executed with ChildArgs (engine/child_request.h:
//   the policy, the program shared by ShareReplayView, the run options);
//   the engine's ChildMain answers it.
//
// Thread-safety: single-threaded; MeasureTrace forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_MEASURE_H_
#define ALLOCTRACE_REPLAYER_MEASURE_MEASURE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/measure/isolated_run.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// The stretched total budget's cap: 50 s of runs, so that with the trace's
// decoding and the report a long trace's verdict takes under a minute.
inline constexpr double kMaxTotalBudgetSeconds = 50;

// The rounds at the first round's pace the total budget stretches to on a
// long trace (below that cap), so that no verdict rests on a round or two.
inline constexpr int kStretchRounds = 5;

// Every policy's registry info, by name (allocators::AllocatorInfosByName).
using PolicyInfos = std::map<std::string, allocators::AllocatorInfo>;

// What the parent keeps about one policy while it measures.
struct Measured {
  PolicyRuns runs;
  std::string preload_path;
  std::string policy;               // the registry name to run (kNoiseName runs malloc)
  double spent = 0;                 // seconds of its children, re-runs included
  std::vector<double> run_seconds;  // each completed child's life, re-runs included
  bool done = false;
  bool fatal = false;  // its failure makes more runs pointless (time or memory limit)
};
// (An eliminated policy has done and runs.eliminated set.)

// One child started and waited for: its result, and how long it lived.
struct ChildRun {
  absl::StatusOr<RunResult> result;
  double seconds = 0;
};

// Starts one run's child, `argv` with `preload`, under `limits`, and waits
// for it: RunInFreshChild (with its result_fd=), timed by the
// steady clock. Tests give fakes.
using ChildRunner = std::function<ChildRun(std::vector<std::string> argv,
                                           const std::string& preload, const ChildLimits& limits)>;

// How the runs are made and when they stop.
struct MeasureSettings {
  RunOptions run_options;
  std::string touch = "program";  // --touch, passed on to the children
  ChildLimits limits;             // with the race, a run's time limit may be lower (race.h)
  ReportContext ctx;
  int max_runs = 500;
  int max_reruns = 2;
  int screen_runs = 3;
  uint64_t seed = 1;      // of the run order shuffled in each round
  bool progress = false;  // progress lines on stderr
  bool race = true;       // successive elimination (race.h)
  int race_min_runs = 3;  // paired runs before a policy can be eliminated
  // The budget grows after the first round, up to kMaxTotalBudgetSeconds,
  // to kStretchRounds rounds at the first round's pace (long traces).
  double total_budget_seconds = 16;  // with the race: runs of all policies per trace; 0: none
  // Whether a multi-threaded trace is replayed per thread (the caller
  // builds and shares its ThreadSchedule for MeasureTrace) or serialized.
  ReplayThreads threads = ReplayThreads::kAuto;
  ChildRunner run_child;  // empty: a fresh child (RunInFreshChild)
};

// The stopping rule, after each round.
// The figure that ranks, per run: ns/op of the ranking pass kind.
std::vector<double> RankFigures(const PolicyRuns& runs, const ReportContext& ctx);
// Whether `m` has reached the precision (its ns/op, and its ratio to
// `reference` paired by round; no ratio if `reference` is null or `m`).
bool Precise(const Measured& m, const Measured* reference, const ReportContext& ctx);
// At the end: a policy stopped as "precise" that ran on (a race's leader,
// or glibc malloc, run as long as anyone runs so every run has its pair)
// may have widened its CIs since; if it is no longer Precise, its
// stop_reason says so, so the report never lists it as precise and short
// of the precision at once.
void RecheckPrecise(Measured& m, const Measured* reference, const ReportContext& ctx);
// Sets `m.done` and `m.runs.stop_reason` once `m` failed (after min_runs
// attempts, or at once if fatal), is precise after min_runs runs, spent its
// budget after min_runs runs, or made max_runs runs.
void UpdateDone(Measured& m, const Measured* reference, const MeasureSettings& s);

// Measures `names` on one trace. With `screen`: with the race, every
// article policy races with them; without, the fastest article policy of
// each storage kind in a short screen is added.
// `shared_fd` is `program` shared by ShareReplayView (the children map it);
// the caller made it, before any run, and closes it.
// With a `schedule` (not null) the trace is replayed per thread: then
// `schedule_fd` is it shared by ShareThreadSchedule, also made by the
// caller before any run and closed by it; the context's clock "auto"
// resolves to wall for it, else to cpu. Either way a policy that may not
// serve the trace (policy_safety.h) is skipped, saying why.
TraceReport MeasureTrace(const ReplayProgram& program, const std::vector<std::string>& names,
                         bool screen, const PolicyInfos& policies, const std::string& self,
                         const MeasureSettings& s, int shared_fd,
                         const ThreadSchedule* schedule = nullptr, int schedule_fd = -1);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_MEASURE_H_
