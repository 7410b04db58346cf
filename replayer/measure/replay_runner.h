// The replay's runs for the rounds (rounds.h: a ContenderRunner): one
// child per run of a policy, re-run while disturbed; or, for served
// windows, one window asked of the contender's serving child
// (served_children.h); and, after windowed rounds, one whole run. Each run
// is kept in its entry's PolicyRuns, with its disturbance counted.
//
// Thread-safety: single-threaded; forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_REPLAY_RUNNER_H_
#define ALLOCTRACE_REPLAYER_MEASURE_REPLAY_RUNNER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/measure/entries.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/replayer/measure/runs.h"
#include "alloctrace/replayer/measure/sampling.h"
#include "alloctrace/replayer/measure/served_children.h"

namespace alloctrace::measure_internal {

// Disturbed runs seen, re-runs included, over a whole measurement.
struct Disturbance {
  int seen = 0;
  int disturbed = 0;
  int kept = 0;
  // On a machine so busy that most runs are disturbed, a re-run would be
  // disturbed too: re-runs stop once half of 20 or more runs were. And
  // re-runs never make more than a tenth of the runs: on a loaded machine
  // they would eat the race's total budget (measured: 105 of 287 runs at
  // load 8).
  bool Busy() const {
    const int reruns = disturbed - kept;
    return seen >= 20 && (2 * disturbed >= seen || 10 * reruns >= seen);
  }
};

class ReplayRunner : public ContenderRunner {
 public:
  // The runs of `entries` on `shared`'s program, re-executing `self`;
  // `sampling`: the runs are windowed (null: whole runs). Every reference
  // outlives the runner.
  ReplayRunner(std::vector<Entry>& entries, const std::string& self, const SharedProgram& shared,
               const MeasureSettings& s, const Ranking& ranking, Disturbance& disturbance,
               Sampling* sampling);

  // One run of entries[i], re-run while disturbed (up to --max_reruns).
  // `limits` bound the run's attempts together: a re-run is made only if
  // another attempt as long as the last fits in what is left of the time
  // limit, and gets what is left (the budget's cap sets that limit, and
  // three attempts of a 9 s run took 27 s of a cap meant for one). A
  // re-run stopped at what was left keeps the disturbed attempt before it.
  RunOutcome Run(size_t i, int round, const ChildLimits& limits, bool race_limited) override;

  // Ends every serving child (their memory back before the whole runs).
  void EndServers() { served_.EndAll(); }

  // One whole run of entries[i] with one pass, after windowed rounds: kept
  // in its whole_runs, or its failure in whole_run_error. Returns the
  // seconds it took (Sampling::WholeRun).
  double WholeRun(size_t i, const ChildLimits& limits);

 private:
  // One served window of entries[i] (engine/window_server.h). Never re-run:
  // the child has replayed past the window; a disturbed window is kept and
  // counted.
  RunOutcome RunServed(size_t i, int round, const ChildLimits& limits, bool race_limited);

  // A run that ends without a record: stopped at the race's time limit,
  // or failed; nullopt where `r` is a result to record.
  static std::optional<RunOutcome> NotKept(Entry& e, const absl::StatusOr<RunResult>& r,
                                           RunOutcome o, bool race_limited);
  // A failed run of `e`: its error kept, and whether more runs are pointless.
  static RunOutcome Failed(Entry& e, const absl::StatusOr<RunResult>& r, RunOutcome o);
  // The record of result `r` in `round`, counted as seen (and disturbed).
  RunRecord Record(absl::StatusOr<RunResult>& r, int round, int reruns);
  // `record` kept in e's runs; the outcome with its figure.
  RunOutcome Keep(Entry& e, RunRecord record, RunOutcome o, double seconds) const;
  bool Disturbed(const RunResult& r) const;

  ChildRequest RequestFor(const Entry& e, const std::string& windows, int states_fd,
                          const RunOptions& options) const;
  ChildRun RunChild(const Entry& e, const ChildLimits& limits, const std::string& windows,
                    int states_fd, const RunOptions& options, int cpu);

  std::vector<Entry>& entries_;
  std::string self_;
  int shared_fd_;
  int schedule_fd_;  // -1: a serialized replay
  const MeasureSettings& s_;
  Ranking ranking_;
  Disturbance& disturbance_;
  Sampling* sampling_;
  // The CPU a serialized replay's runs run on, every one of them: the last
  // this process may use (`taskset -c` chooses it); -1 (where the scheduler
  // puts them) for a per-thread replay, whose threads need every core. The
  // whole runs after windows (peak RSS and page faults only) are not pinned.
  // On a shared machine a core's neighbours (its sibling hyperthread, its
  // share of the last-level cache) slow it in spells of milliseconds, each
  // core its own (docs/results.md, "Where the noise comes from"): runs on
  // whichever core was free met different neighbours from their pair's
  // (and, likely, a core newly taken held less of the trace in its caches).
  // On lru_cache 2000000, slab/st/single and jemalloc against glibc malloc,
  // 40 rounds, 5 sets each interleaved, measured: per-round spread of the
  // log ratio 0.20 and 0.19 on one CPU, 0.24 and 0.22 with the CPUs taken in
  // turn by round, 0.33 and 0.32 where the scheduler put them; the same
  // ratios.
  int cpu_;
  ServedChildren served_;  // served windows only
};

}  // namespace alloctrace::measure_internal

#endif  // ALLOCTRACE_REPLAYER_MEASURE_REPLAY_RUNNER_H_
