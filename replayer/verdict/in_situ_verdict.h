// What in situ measured of the user's program (in_situ/in_situ.h runs it),
// as data: each candidate's runs and figures, and the verdict drawn from
// them (DecideInSitu, by the replay's rule). The reports render it; nothing
// here runs anything.
//
// Thread-safety: plain structs; DecideInSitu is a pure function of its
// argument.
#ifndef ALLOCTRACE_REPLAYER_VERDICT_IN_SITU_VERDICT_H_
#define ALLOCTRACE_REPLAYER_VERDICT_IN_SITU_VERDICT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/measure/runs.h"
#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// One run's figures, from wait4.
struct InSituRun {
  int round = 0;
  double wall_s = 0;
  double cpu_s = 0;            // user + system
  int64_t peak_rss_bytes = 0;  // ru_maxrss
  // Resident when the switch resolved, before the first container
  // allocated (an instrumented program; 0: unknown). The peak the verdict
  // weighs is peak_rss_bytes less this: what the build a user ships would
  // add too, without the tracing library and the switch.
  int64_t start_rss_bytes = 0;
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
};

struct InSituPolicy {
  std::string name;
  RunStatus status = RunStatus::kOk;
  std::string failure;                   // FAILED: reason; skipped: why
  std::vector<std::string> stderr_tail;  // FAILED: the last lines of stderr
  bool reference = false;
  allocators::Adoption adopt;
  bool frees_blocks = true;                                   // as InSituCandidate's
  allocators::Family family = allocators::Family::kBaseline;  // as InSituCandidate's
  std::vector<InSituRun> runs;                                // the successful ones
  int attempts = 0;
  std::string stop_reason;
  bool eliminated = false;  // by the race in the program (stop_reason says why)
  Estimate wall_s, cpu_s;
  Estimate peak_rss_bytes;  // each run's peak above its start where known (InSituRun)
  Estimate ranked;          // wall_s or cpu_s, as the clock says
  Estimate
      vs_reference;  // the reference's ranked figure over this one's, paired by round (>1: faster)
  double minor_faults = 0, major_faults = 0;  // medians
  bool tied_fastest = false;
  bool ok() const { return status == RunStatus::kOk && !runs.empty(); }
};

// What the in-situ runs decide (DecideInSitu), as data: which case holds
// and which policies it names. The reports put it in words
// (reports/words.h: InSituSentence).
struct InSituDecision {
  enum class Outcome {
    kNothingRan,   // no policy completed its runs
    kRecommended,  // no replay pick to judge (--in_situ): the recommendation alone
    kPickNotRun,   // the replay's pick did not run in situ (not a candidate, or failed)
    kPickIsBest,   // the pick is the recommendation: held
    // As fast as the recommendation (both within the margin of the fastest)
    // and within the RSS slack: the fixed order names the recommendation.
    kPickTied,
    kPickOverSlack,  // the pick's peak RSS is over the slack (held on speed when tied)
    kPickSlower,     // slower than the recommendation (or the fastest): did not hold
  };
  static constexpr size_t kNone = static_cast<size_t>(-1);
  Outcome outcome = Outcome::kNothingRan;
  // Indexes into InSituSummary::policies; kNone where there is none. The
  // choice's steps (choice.h).
  size_t recommended = kNone;
  size_t fastest = kNone;             // the lowest median, whatever its peak RSS
  std::vector<size_t> equivalent;     // practically as fast as the fastest
  double margin = 0;                  // of practical equivalence
  size_t memory_passed_over = kNone;  // what the preference would have taken, but for memory
  size_t smallest = kNone;            // the smallest median peak RSS
  size_t pick = kNone;                // the replay's pick, when it is a candidate
  size_t winner = kNone;              // kPickSlower: what the pick is held against
  size_t passed_over = kNone;         // a faster policy that never frees, kept out by the margin
  Estimate passed_over_edge;  // the recommended one's figure over it, paired (>1: it is faster)
  Estimate pick_vs_fastest;   // the pick's time over the fastest's, paired (>1: slower)
  Estimate pick_vs_winner;    // kPickSlower: the pick's time over the winner's
};

struct InSituSummary {
  std::vector<std::string> argv;  // the program and its arguments
  std::string log_path;
  bool instrumented = false;
  std::string reference;                  // "std" or "malloc"
  TimingClock clock = TimingClock::kCpu;  // what ranks: user + system, or wall
  int rounds = 0;
  int runs = 0;               // of the program, every candidate's, the noise floor's too
  double budget_seconds = 0;  // the total budgets the runs were held to (0: none)
  int max_total_runs = 0;
  // The reference against its second run set, paired by round (none
  // without one): how far two identical runs of the program read apart.
  Estimate noise_floor;
  double wall_seconds = 0;  // of the whole in-situ measurement
  // >0: every run was of a shipped build (the alias lines pasted and
  // built, replayer --shipped_build); how many builds so far, their time.
  int shipped_builds = 0;
  double shipped_build_seconds = 0;
  std::string build_log;  // the builds' output
  // ok, fastest first by the ratio to the reference paired by round, then
  // FAILED, then skipped
  std::vector<InSituPolicy> policies;
  int failed_policies = 0;
  // The verdict from the runs (DecideInSitu: the replay's rule, choice.h,
  // on the ranked figure paired by round, the noise floor's margin).
  // `fastest`: the FastestTiedGroup among all ok policies, whatever their
  // RSS.
  std::vector<std::string> fastest;
  std::string recommended;  // "" if nothing ran
  allocators::Adoption adopt;
  double rss_slack = 0.10;  // the rule's (DecideInSitu's argument)
  // With a replay: its pick and whether it held (in the tied group the
  // recommendation is made from: within the RSS slack).
  std::string replay_pick;
  bool replay_pick_held = false;
  // The pick's ranked time over the recommended one's, paired (>1: slower).
  Estimate pick_vs_best;
  InSituDecision decision;
};

// Orders `policies` as InSituSummary::policies are: ok ones fastest first
// by the reference's time over theirs paired by round (vs_reference; the
// reference is 1; one without paired rounds by its median against the
// reference's), then FAILED, then skipped. Not by unpaired medians: runs
// from different rounds may have met another machine, and a candidate the
// race stopped early would sit above one shown faster than it.
void OrderInSituPolicies(std::vector<InSituPolicy>& policies);

// The policy named `name` in `s`, or null.
const InSituPolicy* FindInSitu(const InSituSummary& s, const std::string& name);

// p's ranked figure (`clock`: wall or CPU seconds) per round.
std::map<int, double> FiguresByRound(const InSituPolicy& p, TimingClock clock);

// b's time over a's by `clock`, paired by round (>1: a is faster).
Estimate PairedSlowdown(const InSituPolicy& a, const InSituPolicy& b, TimingClock clock);

// The in-situ name a replay policy runs under: malloc and new are the
// reference (`reference`), anything else itself.
std::string InSituNameOf(const std::string& replay_name, const std::string& reference);

// Sets the verdict fields of `summary` from its runs; with `replay_pick`
// non-empty, also whether it held. With the replay's rule (summary.h:
// FastestTiedGroup, WithinRssSlack).
void DecideInSitu(InSituSummary& summary, const std::string& replay_pick, double rss_slack);

// How many of the replay's fastest join the search when --confirm does not
// say.
inline constexpr int kDefaultLeaders = 3;

// The search's candidates in the program after a replay, each once, in the
// replay's ranking order then the families': the replay's `leaders` fastest
// that can run in a program (not the harness floor, the baselines boost and
// pmr, which no switch serves; malloc and new as the reference) and its pick;
// every external malloc; and on a trace with container arenas, each of our
// pool kinds the replay measured (so the safety rule and the one-arena rule
// it applied hold: a pool it skipped is not offered) and the article grid's
// fastest. On a capture (no container arenas) no pool: the program is not
// instrumented.
std::vector<std::string> SearchCandidates(const TraceReport& replay, int leaders);

// Without a replay (--in_situ and no --policies): every external malloc and
// each of our pool kinds.
std::vector<std::string> FamilyCandidates();

// A class's race in the program (the per-container search): the held
// policy is the race's reference, and the class keeps it unless the choice
// (choice.h, with the held policy first in the order) names another that
// is shown faster than it (its paired ratio's 95% CI above 1): a class
// never moves to a policy not shown faster, and within the margin of
// practical equivalence it stays, so the same trace gives the same mix.
struct ClassRaceDecision {
  std::string policy;  // the race's label of the policy the class takes
  bool moved = false;
  Estimate gain;     // the held one's time over the chosen one's, paired (>1: faster)
  std::string note;  // why it stayed ("" when it moved)
  // The policy the race read fastest, ahead of the held one by its median
  // paired ratio however little ("" if none was): what the class leans to
  // when the margin holds it. Gains each within the margin can add up over
  // classes, so the search races the classes' leanings together.
  std::string leaning;
};
ClassRaceDecision DecideClassRace(const InSituSummary& race, double rss_slack);

// Makes the in-situ verdict the report's recommendation: verdict.recommended
// and adopt come from `in_situ` (the reports say the replay's alone after
// it), and `replay` keeps a pointer to the runs for the formats.
void ApplyInSitu(TraceReport& replay, std::shared_ptr<const InSituSummary> in_situ);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_VERDICT_IN_SITU_VERDICT_H_
