// The replayer's in-situ modes, as replayer_main.cc calls them:
//   replayer --confirm=N TRACE -- PROGRAM [ARGS...]
//   replayer --in_situ --policies=LIST -- PROGRAM [ARGS...]
// Kept out of replayer_main.cc so that main stays a list of modes
// (in_situ/in_situ.h has the runs, verdict/in_situ_verdict.h the verdict).
//
// Thread-safety: one call at a time (the runs fork).
#ifndef ALLOCTRACE_REPLAYER_IN_SITU_CLI_H_
#define ALLOCTRACE_REPLAYER_IN_SITU_CLI_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "alloctrace/replayer/config.h"
#include "alloctrace/replayer/in_situ/in_situ.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// Whether the in-situ flags make sense together: InvalidArgument (a usage
// error) unless exactly one of --confirm=1..100 with one trace or
// --in_situ with none, and a program after "--"; NotFound or
// PermissionDenied if the program cannot be run. Makes program[0] the path
// to execute.
absl::Status CheckInSituUsage(int confirm, bool in_situ_only, size_t traces,
                              std::vector<std::string>& program);

// Where a helper program or library of the replayer (in_situ_launcher,
// libmalloc_probe.so) is: beside this binary (bazel-bin, a CMake build
// tree) or, in a CMake install, in the directory ALLOCTRACE_HELPER_DIR_FROM_BIN
// names relative to it (../libexec/alloctrace). The path beside the binary if
// neither exists.
std::string HelperPath(const std::string& name);

// The in-situ settings from the replay's: the same precision, budget, run
// counts, clock and seed; the time limit of --run_timeout (0: the default
// of InSituSettings); the launcher and the preload check library found
// by HelperPath; with --shipped_build and `program` (the trace's, whose
// class table names the aliases), the shipped builds every measurement of
// the search shares (build output in alloctrace-builds.PID.log).
InSituSettings InSituFromConfig(const ReplayerConfig& c, bool progress,
                                const ReplayProgram* program = nullptr);

// --in_situ: the program under `names` (registry names or "std"; with
// `drop_unrunnable`, names that cannot run in situ are left out rather than
// reported skipped; empty: FamilyCandidates), no replay, decided without a
// replay pick.
absl::StatusOr<InSituSummary> MeasureInSituOnly(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& names,
                                                const InSituSettings& settings,
                                                bool drop_unrunnable);

// TRACE -- PROGRAM: the search in the program over SearchCandidates
// (`leaders` of the replay's fastest, 0: kDefaultLeaders, and the best of
// each family); the in-situ verdict becomes `replay`'s (ApplyInSitu).
// Errors: as MeasureInSitu. A FAILED policy is in
// replay.in_situ->failed_policies.
absl::Status Search(TraceReport& replay, int leaders, const std::vector<std::string>& argv,
                    const InSituSettings& settings);

// --per_container TRACE -- PROGRAM, after Search: the per-container search
// in the program (in_situ/per_container_search.h) from the search's best
// single choice; its verdict becomes replay.per_container.
void SearchPerContainer(TraceReport& replay, const ReplayProgram& program,
                        const std::vector<std::string>& argv, const InSituSettings& settings,
                        double min_share);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_IN_SITU_CLI_H_
