// The replay's measurement of one trace: every policy run in rounds
// (rounds.h: the order shuffled each round, glibc malloc in every round as
// the reference of every ratio, the race), each run in a fresh child
// process, until each policy's median ns/op and its ratio to glibc malloc
// (paired by round) reach the stated precision, its time budget is spent or
// --max_runs is reached. This file is the replay's mode of the rounds: how
// one run of a policy is made and read (replay_runner.h), which policies
// enter (entries.h, article_grid.h), and the sampled windows (sampling.h).
//
// Contract:
// - A run disturbed by an involuntary context switch in its ranking passes
//   (the cold pass, or the warm ones with rank_by warm) or by a CPU
//   migration is run again, up to MeasureSettings::max_reruns times, unless
//   most runs so far were disturbed (a busy machine) or re-runs already
//   make a tenth of the runs; then it is kept and counted. Switches in the
//   other passes do not count: they leave the ranking figure as it is
//   (measured; docs/results.md). A per-thread replay is never counted
//   disturbed: its threads outnumber the cores and preempt one another.
// - A second malloc run set ("malloc (again)") gives the noise floor.
// - With the screen and the race, every article policy enters the race.
//   Without the race, the fastest article policy of each storage kind in a
//   short screen (MeasureSettings::screen_runs runs each) is added to the
//   set.
// - A policy that may not serve the trace (policy_safety.h), or whose
//   preloaded library is not installed, is skipped, saying why.
// - A failed run (crash, error, the configured time limit or the memory
//   limit) is never hidden: the policy is reported failed with its first
//   error.
// - In sampled windows (sampling.h; engine/windows.h), every run of a
//   round replays the same windows, drawn anew each round from the seed;
//   the run's figure is the windows' stratified estimate of a whole cold
//   pass, and the ranking is by cold passes. At the end, each contender
//   still in the race (not eliminated, failed or skipped) and glibc malloc
//   get one whole run of one pass, for what a window cannot see: its peak
//   RSS and page faults, and whether it passes the memory or time limit
//   over the whole trace (a policy that never frees can stay under the
//   limit in every window and pass it over the trace). A contender whose
//   whole run fails is failed with that error.
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
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/mix_spec.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/measure/isolated_run.h"
#include "alloctrace/replayer/measure/measured_trace.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/replayer/measure/runs.h"

namespace alloctrace {

// Every policy's registry info, by name (allocators::AllocatorInfosByName).
using PolicyInfos = std::map<std::string, allocators::AllocatorInfo>;

// One child started and waited for: its result, and how long it lived.
struct ChildRun {
  absl::StatusOr<RunResult> result;
  double seconds = 0;
};

// Starts one run's child, `argv` with `preload`, under `limits`, and waits
// for it: RunInFreshChild (with its result_fd=), timed by the steady clock.
// Tests give fakes.
using ChildRunner = std::function<ChildRun(std::vector<std::string> argv,
                                           const std::string& preload, const ChildLimits& limits)>;

// Whole runs or sampled windows (--windows). kAuto: windows for a long
// trace whose windowed run replays at most a quarter of its ops, whole
// runs otherwise (sampling.h: UsesWindows, the one decision).
enum class WindowsMode { kAuto, kNever, kAlways };
inline constexpr EnumWord<WindowsMode> kWindowsModeWords[] = {
    {WindowsMode::kAuto, "auto"}, {WindowsMode::kNever, "never"}, {WindowsMode::kAlways, "always"}};

// How the runs are made and when they stop. The defaults are the command
// line's (replayer/config.h).
struct MeasureSettings {
  RoundsSettings rounds;  // precision, budgets, the race, limits, the seed
  RunOptions run_options;
  // --touch=auto: run_options.touch (Touch::kProgram) is resolved per trace
  // (TouchFor).
  bool auto_touch = true;
  RankBy rank_by = kDefaultRankBy;
  TimingClock clock = kDefaultClock;  // resolved per trace (ResolveClock)
  int max_reruns = 2;
  int screen_runs = 3;  // without the race
  WindowsMode windows = WindowsMode::kAuto;
  bool progress = false;        // progress on stderr (rewritten in place)
  bool progress_lines = false;  // one progress line per round on stderr
  ChildRunner run_child;        // empty: a fresh child (RunInFreshChild)
  // What the serving children of served windows (engine/window_server.h),
  // a process per contender alive through the rounds, may hold resident
  // together (0: no bound); past it, the one holding most, other than the
  // one about to serve, is ended (its next window starts a new replay).
  int64_t served_memory_bytes = 0;
  // Names MeasureTrace measures as mixes (a policy per class of
  // containers, engine/mix_allocator.h) rather than registry policies:
  // run in the process of the mix's rest (its malloc's preload), their
  // safety per class checked by the caller (per_container/search.h).
  std::map<std::string, MixSpec> mixes;
  // Count what each malloc library adds to a process's start and end in
  // its cold figure (RunResult::process_seconds; --process_cost).
  bool process_cost = true;
};

// Probe pairs per malloc library for its process cost (ProcessCost). The
// cost is a millisecond or two for jemalloc and mimalloc, and a trace of a
// whole program's 1.6 M calls puts 1 ms at 0.6 ns an op, 2.5% of a malloc's
// figure: the median of 7 pairs moved from 0.4 to 2.9 ms between
// invocations and took the verdict across its 5% margin; of 21, 1.3 to 1.6
// ms (docs/fidelity.md). 21 pairs take about 0.6 s for the three mallocs.
inline constexpr int kProcessCostRounds = 21;

// A trace decoded and shared with the children before any timing
// (replayer_main.cc's LoadAndShare): the program, its schedule where it is
// replayed per thread, and the memfds the children map (ShareReplayView,
// ShareThreadSchedule). Its maker closes the fds, after every run.
struct SharedProgram {
  ReplayProgram program;
  std::optional<ThreadSchedule> schedule;  // a per-thread replay
  // Frees of an object another thread allocated (ThreadSchedule's count),
  // also where the trace replays on one thread (ReplaysPerThread).
  uint64_t cross_thread_frees = 0;
  int program_fd = -1;  // -1: nothing to time
  int schedule_fd = -1;
};

// Measures `names` on `shared`. With `screen`: with the race, every
// article policy races with them; without, the fastest article policy of
// each storage kind in a short screen is added. glibc malloc always runs.
// With a schedule the trace is replayed per thread.
MeasuredTrace MeasureTrace(const SharedProgram& shared, const std::vector<std::string>& names,
                           bool screen, const PolicyInfos& policies, const std::string& self,
                           const MeasureSettings& s);

// What the verdict and the reports need to know of `program`.
TraceFacts TraceFactsOf(const ReplayProgram& program);

// The garbage collector `header` says its program ran over the blocks it
// took from malloc (the "collector" label, which capture writes:
// "cpython"), or "".
std::string CollectorOf(const proto::Header& header);

// The touch `shared` replays with. With s.auto_touch: Touch::kWalk where
// the trace's program runs a collector that reads its live malloc blocks
// (CollectorOf) and the trace replays as a walk can, serialized (no
// schedule) and in whole runs (--windows not always; auto is then never);
// else s.run_options.touch. Without auto_touch: s.run_options.touch, as
// asked.
Touch TouchFor(const MeasureSettings& s, const SharedProgram& shared);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_MEASURE_H_
