// In situ: the user's own program run under allocator candidates, the truth
// a replay only predicts. Its measurement is in situ's mode of the rounds
// (measure/rounds.h); what it measures is data (verdict/in_situ_verdict.h).
//
// A candidate runs the program as it is, in a fresh process each run:
// - a catalog pool policy through TraceAllocator's run-time switch
//   (ALLOCTRACE_POLICY=<name>, tracer/policy_switch.h): only in a program
//   instrumented with TraceAllocator;
// - a malloc (tcmalloc, jemalloc, mimalloc) by LD_PRELOAD, any program;
//   in an instrumented program with ALLOCTRACE_POLICY=std as well;
// - the reference: `std` (ALLOCTRACE_POLICY=std, glibc malloc) for an
//   instrumented program, `malloc` (nothing set) otherwise;
// - or, with InSituSettings::shipped, each of these as the build the user
//   would ship (shipped_build.h): the alias lines pasted and built, a
//   malloc preloaded into the std::allocator build; no switch is involved.
//
// Checks, so that no run is silently something else:
// - Instrumented: the first run (the reference's, round 0, a warm-up not
//   counted in the figures) carries
//   ALLOCTRACE_POLICY_ACK_FD; the program is instrumented iff the switch
//   acknowledged on it. Every pool-policy run must be acknowledged with its
//   own name, or it FAILED.
// - Shipped: a shipped build has no switch to acknowledge; a run of one
//   that acknowledges anything still has TraceAllocator in it (the build
//   command did not paste the lines) and FAILED.
// - Preload: every malloc run also preloads libmalloc_probe.so (built beside
//   the replayer), whose constructor names on the same fd the file that
//   serves malloc (dladdr, as the replayer's own children check); a run
//   where that is not the preloaded library FAILED.
//
// Protocol: the replay's rounds (measure/rounds.h): a shuffled order, the
// reference in every round so ratios pair by round, and its second run set
// (the noise contender) beside it, whose ratio to it is the noise floor. With
// the race (the search's way, InSituSettings::race), a candidate shown slower
// than its leader is eliminated, a run past 20x the fastest candidate's run
// time is stopped and its candidate eliminated (race.h), and the runs stop
// once the total budget of seconds or of program runs (every run of the
// program: round 0's, the noise floor's; never one more) is spent, or
// every candidate left is precise; without it, each policy runs until its median
// time and its ratio to the reference have 95% bootstrap CIs within the
// precision (after min_runs), its budget is spent or max_runs is reached
// (the figure: --clock's, CPU or wall time). A run that exits non-zero,
// crashes or passes the time limit is FAILED (its reason and last stderr
// lines kept) and its policy stops; if the reference fails, nothing else is
// run.
//
// The program's stdout and stderr go to the log file, one header per run.
// Thread-safety: single-threaded; forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_H_
#define ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/in_situ/shipped_build.h"
#include "alloctrace/replayer/measure/runs.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"

namespace alloctrace {

// How one candidate is run.
struct InSituCandidate {
  std::string name;          // "slab/st/single", "jemalloc", "std", "malloc"
  std::string policy;        // ALLOCTRACE_POLICY, "" for none
  std::string preload;       // the malloc's file name ("libjemalloc.so.2"), "" for none
  bool pool_policy = false;  // needs an instrumented program
  bool reference = false;
  bool noise = false;   // the reference's second run set (the noise floor)
  std::string skipped;  // why it is not run ("" to run it)
  // The executable run instead of argv[0] ("" : argv[0]): its shipped
  // build (shipped_build.h), which takes no policy and acknowledges none.
  std::string program;
  allocators::Adoption adopt;
  bool frees_blocks = true;  // false: never frees (summary.h: kNeverFreesMargin)
  allocators::Family family = allocators::Family::kBaseline;  // the registry's
};

struct InSituSettings {
  // The search's race with its total budgets (see above); false: every
  // policy to its own precision or budget.
  bool race = false;
  double total_budget_seconds = 120;
  int max_total_runs = 200;  // every run of the program, round 0's too
  int min_runs = 10;
  int max_runs = 500;
  double precision = 0.03;     // CI half-width, as a fraction
  double budget_seconds = 3;   // per policy
  double timeout_seconds = 0;  // per run; 0: 300 s for round 0, then 10x its wall (>= 10 s)
  double rss_slack = 0.10;
  // What ranks and stops: kCpu (the program's user + system time, as the
  // replay's default --clock; steadier on a shared machine) or kWall.
  TimingClock clock = TimingClock::kCpu;
  uint64_t seed = 1;
  bool progress = false;
  bool progress_lines = false;  // a line per round (for logs), not one rewritten in place
  std::string progress_label = "in the program";
  std::string log_path;       // "" : alloctrace-insitu.<pid>.log in the working directory
  bool append_log = false;    // add to the log (a later measurement of one search)
  std::string probe_library;  // libmalloc_probe.so; "" : mallocs are skipped
  std::string launcher;       // in_situ_launcher (in_situ_launcher.cc); required
  // Set: every candidate, the reference too, runs as its shipped build
  // (the alias lines for its policy or assignment built by the user's
  // command; a malloc: every class on std::allocator, preloaded) instead of
  // the instrumented program under ALLOCTRACE_POLICY. Shared by the
  // search's measurements, so each build is made once.
  std::shared_ptr<ShippedBuilds> shipped;
};

// How `name` (a registry policy name, or "std") runs in situ.
InSituCandidate CandidateFor(const std::string& name);

// Runs argv under the reference and the candidates (see above). `argv[0]`
// as FindProgram returned it. `reference`: the candidate every ratio pairs
// with, instead of std or malloc (the per-container search's held mix).
// Errors only for what stops everything (the log cannot be written, the
// reference's malloc is missing); failed runs are in the summary.
absl::StatusOr<InSituSummary> MeasureInSitu(const std::vector<std::string>& argv,
                                            std::vector<InSituCandidate> candidates,
                                            const InSituSettings& s,
                                            const InSituCandidate* reference = nullptr);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_IN_SITU_IN_SITU_H_
