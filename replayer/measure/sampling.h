// Sampled windows (--windows; engine/windows.h), the measurement's one
// home for them: whether a trace is measured in windows (UsesWindows, the
// one decision), the windows every run of a round replays (Sampling: drawn
// once a round from the seed, their start states shared with the
// children), and the whole-run pass after windowed rounds: one whole run
// of one pass per contender left, for what a window cannot see (peak RSS,
// page faults, a limit passed over the whole trace).
//
// Thread-safety: single-threaded, as the rounds are.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_SAMPLING_H_
#define ALLOCTRACE_REPLAYER_MEASURE_SAMPLING_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alloctrace/base/child_process.h"
#include "alloctrace/base/scoped_fd.h"
#include "alloctrace/replayer/engine/windows.h"
#include "alloctrace/replayer/measure/entries.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/replayer/measure/runs.h"

namespace alloctrace {

// Where WindowsMode::kAuto's line is. A whole run of a million memory ops
// takes 20 to 60 ms a pass here (glibc malloc to the slower pools), two
// passes at least, so a round of the default set (about 70 runs) takes 5 s
// or more and the total budget gets fewer than the 10 rounds a verdict
// wants; below the line whole runs do, and they measure everything.
inline constexpr uint64_t kWindowsFromMemoryOps = 1'000'000;

// Whether a trace of `num_ops` ops, `memory_ops` of them memory ops, is
// measured in windows under `mode`, a windowed run replaying
// `windowed_run_ops()` ops (asked only where the answer turns on it: it
// walks the trace). Never when the warm passes rank (`rank_warm`: a window
// estimates a cold pass) or the trace has no memory op; always under
// kAlways; under kAuto, for kWindowsFromMemoryOps memory ops or more whose
// windowed run replays at most a quarter of the ops. A window rebuilds
// the heap live at its start, so on a trace whose live heap is large
// beside its length (a cache of many small containers, say) a windowed run
// costs as much as a whole run or more, and whole runs, which also measure
// memory, are the better use of the budget.
bool UsesWindows(WindowsMode mode, bool rank_warm, uint64_t num_ops, uint64_t memory_ops,
                 const std::function<uint64_t()>& windowed_run_ops);

// The sampled windows of one measurement, and its whole-run pass.
class Sampling {
 public:
  // `shared`'s windows under `mode`, seeded by `seed`, or null where it is
  // measured in whole runs (UsesWindows). A per-thread replay, and a
  // serialized replay whose windows would rebuild much, are served
  // (engine/windows.h: ShapeFor); `shared` outlives the result.
  static std::unique_ptr<Sampling> For(const SharedProgram& shared, WindowsMode mode,
                                       const Ranking& ranking, uint64_t seed);
  Sampling(const Sampling&) = delete;
  Sampling& operator=(const Sampling&) = delete;

  // Round `round`'s windows, as the child's windows= word (served windows
  // of a per-thread replay: with each stream's bounds) and as windows.
  const std::string& WordFor(int round);
  const std::vector<ReplayWindow>& WindowsOf(int round);
  // The round's shared start states; -1 if they could not be shared (the
  // children then work them out) or are not needed (served windows).
  int StatesFdFor(int round);
  // Whether the windows are served (engine/window_server.h).
  bool served() const;
  // What the reports say of the windows.
  SamplingFacts Facts() const;

  // Keeps in `rounds` the whole runs' allowance from the total budget's
  // cap: what the contenders left will need by their windows' estimates,
  // at most the allowance (MakeWholeRuns). `entries` outlives the rounds.
  void KeepForWholeRuns(const std::vector<measure_internal::Entry>& entries,
                        RoundsSettings* rounds) const;

  // One whole run of entries[i] under `limits`, kept in its runs (or its
  // failure noted); returns the seconds it took.
  using WholeRun = std::function<double(size_t i, const ChildLimits& limits)>;

  // After the rounds: one whole run for each contender left (not
  // eliminated, failed or skipped) and for glibc malloc, the cheapest
  // first, as many as fit in the allowance; a contender whose whole run
  // fails gets that error (its windows could not see it).
  void MakeWholeRuns(std::vector<measure_internal::Entry>& entries,
                     const std::vector<Contender>& contenders, const WholeRun& whole_run,
                     const RoundsSettings& rounds, const Ranking& ranking) const;

 private:
  Sampling(const SharedProgram& shared, const WindowShape& shape, uint64_t seed);
  void Plan(int round);

  const SharedProgram& shared_;
  uint64_t num_ops_;
  WindowShape shape_;
  std::vector<uint64_t> weights_;
  uint64_t seed_;
  int round_ = -1;
  std::vector<ReplayWindow> windows_;
  std::string word_;
  ScopedFd states_fd_;  // the round's shared start states, if any
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_SAMPLING_H_
