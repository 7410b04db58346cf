// ReplayerConfig: the replayer's command line, parsed and validated once,
// typed end to end. The measurement's settings are its own structs
// (MeasureSettings, with its RoundsSettings and RunOptions), whose member
// defaults are the command line's: the flags (config.cc) take their
// defaults from a default-constructed ReplayerConfig, so the flags, the
// config and every struct the measurement takes cannot differ. Each enum
// flag is parsed and printed through its word table (base/enum_words.h).
// A child run's request is not here: it is the engine's
// (engine/child_request.h), never a flag.
//
// Thread-safety: ReplayerConfigFromFlags reads the process's flags; call it
// after absl::ParseCommandLine, from one thread. The rest are pure.
#ifndef ALLOCTRACE_REPLAYER_CONFIG_H_
#define ALLOCTRACE_REPLAYER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// --list-policies --format: the policy table, the adopt table of the docs,
// or a C++ file that compiles every type.
enum class ListFormat { kTable, kMarkdown, kCc };
inline constexpr EnumWord<ListFormat> kListFormatWords[] = {
    {ListFormat::kTable, "table"}, {ListFormat::kMarkdown, "markdown"}, {ListFormat::kCc, "cc"}};

struct ReplayerConfig {
  // What runs.
  std::string policies = "default";  // --policies, as typed (selected by main)
  bool list_policies = false;
  // With list_policies: no other flag is read or checked (nothing runs).
  ListFormat list_format = ListFormat::kTable;
  // How the runs are made and when they stop (precision, budgets, the
  // race, passes, touch, clock, ranking, seed).
  MeasureSettings measure;
  // How a trace recorded on several threads is replayed (--threads).
  ReplayThreads threads = ReplayThreads::kAuto;
  // Bounds on a child: 0 means the default (see ChildLimitsFor).
  double run_timeout_seconds = 0;
  double memory_limit_mb = 0;  // -1: none
  double memory_limit_factor = 16;
  double memory_limit_floor_mb = 512;
  // Output.
  std::vector<std::string> formats = {"table"};  // each a ReportFormat name
  std::vector<std::string> outs;                 // one per format, or none: stdout
  bool quiet = false;
  // In situ (replayer/in_situ_cli.h): the search in the program after
  // "--": the replay's `confirm` fastest (0: kDefaultLeaders) and the best
  // of each family, or (in_situ, no trace) --policies or the families;
  // bounded by in_situ_budget_seconds and in_situ_runs.
  int confirm = 0;
  bool in_situ = false;
  double in_situ_budget_seconds = 120;
  int in_situ_runs = 200;
  // Rank by speed alone (ReportContext::rss_slack < 0).
  bool speed_only = false;
  // After the single verdict, a policy per class of containers
  // (replayer/per_container/search.h); classes below min_share (a
  // fraction) are held.
  bool per_container = false;
  double min_share = 0.05;
  std::string in_situ_log;  // "": alloctrace-insitu.PID.log
  // The command that builds the program as shipped (in_situ/shipped_build.h);
  // "": the search runs the instrumented program under the switch.
  std::string shipped_build;
};

// Reads and checks every flag. InvalidArgument with a one-line message that
// names the flag (as "--passes=0: must be 1 to 1000") for a value out of
// range or a word not taken; the replayer exits 2 with it.
absl::StatusOr<ReplayerConfig> ReplayerConfigFromFlags();

// What the reports are told of how the runs were made and read.
ReportContext ReportContextFor(const ReplayerConfig& c);

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
