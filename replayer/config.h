// ReplayerConfig: the replayer's command line, parsed and validated once,
// typed (enums where a flag takes one of a few words). Its member defaults
// are the command line's defaults: the flags (config.cc) take their
// defaults from a default-constructed ReplayerConfig, so the two cannot
// differ. The measurement's own settings (MeasureSettings, ReportContext,
// ChildLimits) are made from it in one place, ToMeasureSettings and
// ChildLimitsFor.
//
// Thread-safety: ReplayerConfigFromFlags reads the process's flags; call it
// after absl::ParseCommandLine, from one thread. The rest are pure.
#ifndef ALLOCTRACE_REPLAYER_CONFIG_H_
#define ALLOCTRACE_REPLAYER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/measure/isolated_run.h"
#include "alloctrace/replayer/measure/measure.h"

namespace alloctrace {

// What times a pass (--clock). kAuto: CPU time for one-thread
// (serialized) replays, wall-clock time for per-thread ones, where
// contention and waiting are part of the cost (MeasureTrace resolves it).
enum class TimingClock { kAuto, kCpu, kWall };
// Which passes rank the policies (--rank_by).
enum class RankBy { kCold, kWarm };

struct ReplayerConfig {
  // What runs.
  std::string policies = "default";  // --policies, as typed (selected by main)
  bool list_policies = false;
  // With list_policies: "table", "markdown" or "cc" (--format); then no
  // other flag is read or checked (nothing runs).
  std::string list_format = "table";
  // When a policy's runs stop.
  double precision_percent = 3;  // CI half-width target, percent
  double budget_seconds = 3;     // per policy and trace
  int min_runs = 10;
  int max_runs = 500;
  int max_reruns = 2;
  int screen_runs = 3;               // without the race
  bool race = true;                  // successive elimination (race.h)
  int race_min_runs = 3;             // the first look: kMinPairedRounds
  double total_budget_seconds = 16;  // with the race, per trace; 0: none
  uint64_t seed = 1;
  // What a run does and how it is timed.
  int passes = 50;
  double warm_ms = 5;
  RankBy rank_by = RankBy::kCold;
  TimingClock clock = TimingClock::kAuto;
  // How a trace recorded on several threads is replayed (--threads).
  ReplayThreads threads = ReplayThreads::kAuto;
  Touch touch = Touch::kProgram;
  int rss_samples = 200;
  // Bounds on a child: 0 means the default (see ChildLimitsFor).
  double run_timeout_seconds = 0;
  double memory_limit_mb = 0;  // -1: none
  double memory_limit_factor = 16;
  double memory_limit_floor_mb = 512;
  // Output.
  std::vector<std::string> formats = {"table"};  // each a ReportFormat name
  std::vector<std::string> outs;                 // one per format, or none: stdout
  bool quiet = false;
  // In situ (replayer/in_situ_cli.h): the program after "--" run under the
  // replay's top `confirm` policies, or (in_situ) under --policies alone.
  int confirm = 0;
  bool in_situ = false;
  std::string in_situ_log;  // "": alloctrace-insitu.PID.log
};

// The words of the command line for each enum value, and back. The parsers
// return InvalidArgument naming the flag and the words it takes.
absl::string_view TimingClockName(TimingClock c);
absl::string_view RankByName(RankBy r);
absl::string_view TouchName(Touch t);
absl::string_view ReplayThreadsName(ReplayThreads t);
absl::StatusOr<TimingClock> ParseTimingClock(absl::string_view text);
absl::StatusOr<ReplayThreads> ParseReplayThreads(absl::string_view text);
absl::StatusOr<RankBy> ParseRankBy(absl::string_view text);
absl::StatusOr<Touch> ParseTouch(absl::string_view text);

// Reads and checks every flag. InvalidArgument with a one-line message that
// names the flag (as "--passes=0: must be 1 to 1000") for a value out of
// range or a word not taken; the replayer exits 2 with it.
absl::StatusOr<ReplayerConfig> ReplayerConfigFromFlags();

// The measurement's settings. RankBy::kWarm with one pass ranks by the cold
// pass (there is no warm one). MeasureSettings::progress is left false.
MeasureSettings ToMeasureSettings(const ReplayerConfig& c);

// Half of MemAvailable (/proc/meminfo) now, in bytes: the most a child's
// default memory limit may be. 0 if it cannot be read.
int64_t MachineMemoryCap();

// The bounds on each child replaying `program`. The time limit is
// --run_timeout, or 60 s + 100 us per memory op. The memory limit is
// --memory_limit_mb if given (-1: none), else the trace's ideal peak live
// bytes x --memory_limit_factor + --memory_limit_floor_mb + the pointer
// table, but never more than `machine_cap` bytes (if > 0): what a trace
// claims never lets a child take more than the machine can give.
ChildLimits ChildLimitsFor(const ReplayerConfig& c, const ReplayProgram& program,
                           int64_t machine_cap);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_CONFIG_H_
