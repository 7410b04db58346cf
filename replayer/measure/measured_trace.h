// What MeasureTrace hands on (measure.h): the facts of the trace the
// verdict and the reports need, and every policy's runs. Plain data,
// independent of the replay program it came from.
//
// Thread-safety: plain structs.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_MEASURED_TRACE_H_
#define ALLOCTRACE_REPLAYER_MEASURE_MEASURED_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "alloctrace/replayer/measure/runs.h"

namespace alloctrace {

// What a report says of the trace itself.
struct TraceFacts {
  std::string path;  // as the user wrote it
  std::string workload;
  uint64_t memory_ops = 0;  // alloc, free, realloc: what a pass times
  uint64_t arena_events = 0;
  uint64_t arenas_used = 0;  // arenas with at least one block, 0 included
  uint64_t threads = 0;
  // ArenaUsageSummary's words (inspect/arena_usage.h): which arenas
  // several threads use, and whether most arenas hold one block; "" when
  // there is nothing to say.
  std::string arena_sharing;
  std::string arena_shape;
  std::vector<std::string> class_table_notes;  // ReplayProgram's
  // What the default set left out of the trace, and why (the article
  // policies not worth running on it).
  std::vector<std::string> left_out_notes;
  uint64_t peak_live_bytes = 0;  // the ideal
  uint64_t peak_live_objects = 0;
  std::string cut_short;        // how a recording cut short ends; "" if complete
  double recorded_seconds = 0;  // ReplayProgram::recorded_seconds
  bool recorded_cpu = false;    // ReplayProgram::recorded_cpu
  // The garbage collector the header says the program ran over its malloc
  // blocks (its "collector" label, written by capture: "cpython"); "" if
  // none.
  std::string collector;
};

// How the runs sampled the trace: whole runs, or sampled windows
// (engine/windows.h): served (a window a round, each contender's process
// replaying the trace once), or rebuilt (every run a window per stratum,
// each timed after its state is rebuilt and a lead-in replayed).
struct SamplingFacts {
  bool windowed = false;
  int strata = 0;           // the trace's strata
  int per_run = 0;          // windows per run: 1 served, else strata
  uint64_t window_ops = 0;  // ops timed per window (fewer in a shorter stratum)
  uint64_t lead_ops = 0;    // ops replayed untimed before each
  // Of the trace's ops, the share a run times.
  double timed_share = 0;
  // Served windows (engine/window_server.h): one replay per contender,
  // a window a round.
  bool served = false;
};

// Every policy's runs on one trace, as measured.
struct MeasuredTrace {
  TraceFacts trace;
  std::vector<PolicyRuns> policies;
  PolicyRuns noise;  // glibc malloc's second run set (may be empty)
  int rounds = 0;
  // Seconds of runs the rounds could spend in all, as stretched (0: no
  // total budget).
  double total_budget = 0;
  DisturbanceCounts disturbance;
  // The clock that timed the ranking figure, resolved (kCpu or kWall).
  TimingClock clock = TimingClock::kCpu;
  // 1: the serialized replay; more: the per-thread replay, with its waits
  // and its frees of another thread's objects.
  uint32_t replay_threads = 1;
  uint64_t sync_points = 0;
  uint64_t cross_thread_frees = 0;
  SamplingFacts sampling;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_MEASURED_TRACE_H_
