// What the measurement produces, as data: every run of every policy on a
// trace (PolicyRuns of RunRecords), how disturbed they were, and how a run
// is read (the figure that ranks: which pass kind, which clock). The
// verdict (replayer/verdict) and the reports read these; nothing here runs
// anything.
//
// Thread-safety: plain structs and pure functions.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_RUNS_H_
#define ALLOCTRACE_REPLAYER_MEASURE_RUNS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/measure/role.h"

namespace alloctrace {

// What times a pass and ranks (--clock). kAuto is the command line's
// default, resolved per trace before any figure is read (ResolveClock): CPU
// time for one-thread (serialized) replays; for per-thread ones, wall-clock
// time when the replay threads fit in the cores the replayer may run on
// (contention and waiting are then part of the cost), CPU time (the threads'
// own, without their waits) when they outnumber them: the wall clock would
// then time how the scheduler shares the cores out, not the allocator.
enum class TimingClock { kAuto, kCpu, kWall };
inline constexpr EnumWord<TimingClock> kTimingClockWords[] = {
    {TimingClock::kAuto, "auto"}, {TimingClock::kCpu, "cpu"}, {TimingClock::kWall, "wall"}};

// Which passes of a run rank the policies (--rank_by).
enum class RankBy { kCold, kWarm };
inline constexpr EnumWord<RankBy> kRankByWords[] = {{RankBy::kCold, "cold"},
                                                    {RankBy::kWarm, "warm"}};

// The command line's --clock and --rank_by (MeasureSettings, ReportContext).
inline constexpr TimingClock kDefaultClock = TimingClock::kAuto;
inline constexpr RankBy kDefaultRankBy = RankBy::kCold;

// How a policy's measurement ended, for the replay and in situ alike.
// kOverLimit: every failed run was stopped at the time or memory limit (or
// ran out of memory), an outcome of the measurement like the race's stops;
// kFailed: a run crashed or erred, which makes the exit status 3.
enum class RunStatus { kOk, kFailed, kOverLimit, kSkipped };
inline constexpr EnumWord<RunStatus> kRunStatusWords[] = {{RunStatus::kOk, "ok"},
                                                          {RunStatus::kFailed, "FAILED"},
                                                          {RunStatus::kOverLimit, "over limit"},
                                                          {RunStatus::kSkipped, "skipped"}};

// How a run's ranking figure is read.
struct Ranking {
  RankBy rank_by = kDefaultRankBy;
  int passes = RunOptions().max_passes;   // passes per run at most (1: cold only, so never warm)
  TimingClock clock = TimingClock::kCpu;  // resolved: kCpu or kWall

  // Whether the warm passes rank (rank_by warm, and there are warm passes).
  bool warm() const { return rank_by == RankBy::kWarm && passes > 1; }
};

// `clock` as it applies to a trace replayed on `replay_threads` threads (1:
// serialized) by a process that may use `cores` CPUs: kAuto is kWall for a
// per-thread replay whose threads fit in the cores, kCpu otherwise.
TimingClock ResolveClock(TimingClock clock, uint32_t replay_threads, uint32_t cores);

// One successful run as measured.
struct RunRecord {
  int round = 0;           // ratios to malloc pair runs of the same round
  int reruns = 0;          // times this slot was re-run for being disturbed
  bool disturbed = false;  // kept though still disturbed after the re-runs
  RunResult result;
};

// Everything measured for one policy on one trace.
struct PolicyRuns {
  std::string name;
  Role role = Role::kCandidate;  // set where the set is made (measure.cc)
  allocators::Family family = allocators::Family::kBaseline;
  std::string note;  // why it is in the set, if not obvious
  // What its malloc library adds to a process's start and end, CPU
  // seconds, counted in each run's cold figure (RunResult::process_seconds).
  double process_seconds = 0;
  allocators::Adoption adopt;   // how a user adopts it
  bool frees_blocks = true;     // false: deallocate is a no-op (keep, monotonic, bump)
  std::vector<RunRecord> runs;  // the successful ones
  int attempts = 0;             // runs started, failed ones included
  int failed = 0;
  // Of the failed runs, those stopped at the time or memory limit (or out
  // of memory): an outcome of the measurement, not a fault of the tool.
  int over_limit = 0;
  std::string first_error;  // "run 2: crashed with signal 11 (...)"
  std::string skipped;      // why it was not run (library not installed)
  Stop stop = Stop::kNone;  // why its runs stopped
  std::string stop_reason;  // the same in words (precise, budget, ...)
  bool eliminated = false;  // dropped by the race (stop_reason says when, why)
  // Measured in sampled windows (engine/windows.h): the whole runs made
  // at the end for what a window cannot see (peak RSS, page faults); what
  // failed in one; why none was made ("" if it had its whole run).
  std::vector<RunRecord> whole_runs;
  std::string whole_run_error;
  bool whole_run_over_limit = false;  // whole_run_error is a limit's
  std::string whole_run_note;
  // The storage kind if it joined the set as one of the article grid's
  // (--policies=default): only the fastest of its kind, and those tied with
  // it, are contenders (verdict: ScreenArticlePolicies). "" otherwise.
  std::string screen_kind;
};

// Runs disturbed by an involuntary context switch in their ranking passes or
// a CPU migration.
struct DisturbanceCounts {
  int runs = 0;       // successful runs made, re-runs included
  int disturbed = 0;  // of them, disturbed
  int kept = 0;       // disturbed but kept (re-runs spent or stopped)
};

// The figure a run contributes: ns per op of its cold pass or its warm
// passes (their mean), by `clock` (kWall: wall time, else CPU time), the
// cold pass's with the run's process_seconds spread over its ops.
// Negative if the run has no such pass.
double RunNsPerOp(const RunResult& r, bool warm, TimingClock clock);

// A policy's figure per round (RunNsPerOp; runs without the pass left out).
std::map<int, double> FiguresByRound(const std::vector<RunRecord>& runs, bool warm,
                                     TimingClock clock);

// The ranking figure of every run, in run order (RunNsPerOp > 0 only).
std::vector<double> RankFigures(const PolicyRuns& runs, const Ranking& ranking);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_RUNS_H_
