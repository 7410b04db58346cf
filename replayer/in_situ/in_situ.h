// In situ: the user's own program run under allocator candidates, the truth
// a replay only predicts (issue #18).
//
// A candidate runs the program as it is, in a fresh process each run:
// - a catalog pool policy through TraceAllocator's run-time switch
//   (ALLOCTRACE_POLICY=<name>, tracer/policy_switch.h): only in a program
//   instrumented with TraceAllocator;
// - a malloc (tcmalloc, jemalloc, mimalloc) by LD_PRELOAD, any program;
//   in an instrumented program with ALLOCTRACE_POLICY=std as well;
// - the reference: `std` (ALLOCTRACE_POLICY=std, glibc malloc) for an
//   instrumented program, `malloc` (nothing set) otherwise.
//
// Checks, so that no run is silently something else:
// - Instrumented: the first run (the reference's, round 0, a warm-up not
//   counted in the figures) carries
//   ALLOCTRACE_POLICY_ACK_FD; the program is instrumented iff the switch
//   acknowledged on it. Every pool-policy run must be acknowledged with its
//   own name, or it FAILED.
// - Preload: every malloc run also preloads libmalloc_probe.so (built beside
//   the replayer), whose constructor names on the same fd the file that
//   serves malloc (dladdr, as the replayer's own children check); a run
//   where that is not the preloaded library FAILED.
//
// Protocol: as replay runs (measure.h): rounds in a shuffled order, the
// reference in every round so ratios pair by round; a policy stops when its
// median time and its ratio to the reference have 95% bootstrap CIs
// within the precision (after min_runs), its budget is spent or max_runs is
// reached (the figure: --clock's, CPU or wall time). A run that exits non-zero, crashes or passes
// the time limit is FAILED (its reason and last stderr lines kept) and its policy stops; if the
// reference fails, nothing else is run.
//
// The program's stdout and stderr go to the log file, one header per run.
// Thread-safety: single-threaded; forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_H_
#define ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {

// How one candidate is run.
struct InSituCandidate {
  std::string name;          // "slab/st/single", "jemalloc", "std", "malloc"
  std::string policy;        // ALLOCTRACE_POLICY, "" for none
  std::string preload;       // the malloc's file name ("libjemalloc.so.2"), "" for none
  bool pool_policy = false;  // needs an instrumented program
  bool reference = false;
  std::string skipped;  // why it is not run ("" to run it)
  allocators::Adoption adopt;
  bool frees_blocks = true;  // false: never frees (summary.h: kNeverFreesMargin)
  std::string family;        // the registry's ("ours", "external", ...); "" for std
};

// One run's figures, from wait4.
struct InSituRun {
  int round = 0;
  double wall_s = 0;
  double cpu_s = 0;  // user + system
  int64_t peak_rss_bytes = 0;
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
};

struct InSituPolicy {
  std::string name;
  std::string status = "ok";             // ok | FAILED | skipped
  std::string failure;                   // FAILED: reason; skipped: why
  std::vector<std::string> stderr_tail;  // FAILED: the last lines of stderr
  bool reference = false;
  allocators::Adoption adopt;
  bool frees_blocks = true;     // as InSituCandidate's
  std::string family;           // as InSituCandidate's
  std::vector<InSituRun> runs;  // the successful ones
  int attempts = 0;
  std::string stop_reason;
  Estimate wall_s, cpu_s, peak_rss_bytes;
  Estimate ranked;  // wall_s or cpu_s, as InSituSettings::clock says
  Estimate
      vs_reference;  // the reference's ranked figure over this one's, paired by round (>1: faster)
  double minor_faults = 0, major_faults = 0;  // medians
  bool tied_fastest = false;
  bool ok() const { return status == "ok" && !runs.empty(); }
};

struct InSituSummary {
  std::vector<std::string> argv;  // the program and its arguments
  std::string log_path;
  bool instrumented = false;
  std::string reference;  // "std" or "malloc"
  std::string clock;      // what ranks: "cpu" (user + system) or "wall"
  int rounds = 0;
  double wall_seconds = 0;             // of the whole in-situ measurement
  std::vector<InSituPolicy> policies;  // ok by median wall, then FAILED, skipped
  int failed_policies = 0;
  // The verdict from the runs (DecideInSitu, the replay's rule: among
  // policies within the RSS slack of the smallest peak RSS, WithinRssSlack,
  // the FastestRecommendable group of the ranked figure, paired by round; of
  // it, PickFromGroup, keeping the replay's pick if it is one it would take).
  // `fastest`: the FastestTiedGroup among all ok policies, whatever their
  // RSS.
  std::vector<std::string> fastest;
  std::string recommended;  // "" if nothing ran
  allocators::Adoption adopt;
  std::string rule;
  // A faster policy that never frees, passed over (NeverFreesWords); "".
  std::string passed_over;
  // With a replay: its pick, whether it held (in the tied group the
  // recommendation is made from: within the RSS slack), and the sentence
  // saying so (and what the speed alone said, if the pick's RSS left it out).
  std::string replay_pick;
  bool replay_pick_held = false;
  // The pick's ranked time over the recommended one's, paired (>1: slower).
  Estimate pick_vs_best;
  std::string sentence;
};

struct InSituSettings {
  int min_runs = 10;
  int max_runs = 500;
  double precision = 0.03;     // CI half-width, as a fraction
  double budget_seconds = 3;   // per policy
  double timeout_seconds = 0;  // per run; 0: 300 s for round 0, then 10x its wall (>= 10 s)
  double rss_slack = 0.10;
  // What ranks and stops: "cpu" (the program's user + system time, as the
  // replay's default --clock; steadier on a shared machine) or "wall".
  std::string clock = "cpu";
  uint64_t seed = 1;
  bool progress = false;
  std::string log_path;       // "" : alloctrace-insitu.<pid>.log in the working directory
  std::string probe_library;  // libmalloc_probe.so; "" : mallocs are skipped
  std::string launcher;       // in_situ_launcher (in_situ_launcher.cc); required
};

// How `name` (a registry policy name, or "std") runs in situ.
InSituCandidate CandidateFor(const std::string& name);

// Runs argv under the reference and the candidates (see above). `argv[0]`
// as FindProgram returned it. Errors only for what stops everything (the
// log cannot be written); failed runs are in the summary.
absl::StatusOr<InSituSummary> MeasureInSitu(const std::vector<std::string>& argv,
                                            std::vector<InSituCandidate> candidates,
                                            const InSituSettings& s);

// Sets the verdict fields of `summary` from its runs; with `replay_pick`
// non-empty, also whether it held. Defined in in_situ_report.cc, with the
// replay's rule (summary.h: FastestTiedGroup, WithinRssSlack).
void DecideInSitu(InSituSummary& summary, const std::string& replay_pick, double rss_slack);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_H_
