// The rounds: the one protocol by which contenders are measured, the
// replay's policies and in situ's runs of the user's program alike (a new
// measurement mode brings a ContenderRunner and nothing else).
//
// A round runs every contender still measuring once, in an order shuffled
// by the seed, with the reference (glibc malloc in a replay, std or malloc
// in situ) in every round, so that every run has a reference run of the
// same round to pair with; the noise contender, the reference's second run
// set, runs with it. After each round each contender's stopping rule
// (UpdateDone: failed, precise, its own budget spent, max_runs) and, with the
// race, the race's look (race.h) decide who runs on; the race's leaders and
// the reference run as long as anyone does. With a total budget (race
// only), the runs stop once that many seconds are spent (the runs' and,
// between them, the rounds' own work, by the wall clock), checked
// before every run after the first round (so every contender gets a run;
// a limit on the number of runs, RoundsSettings::max_total_runs, holds in
// the first round too);
// after the first round the budget stretches, up to
// RoundsSettings::max_total_budget_seconds, to stretch_rounds rounds at
// the first round's pace, so that no verdict rests on a round or two, and
// then for the contenders the race leaves to reach reach_rounds rounds
// (to_cap, a long trace: to its cap, once the race has looked), while they are
// short of the precision. No
// run, not even in the first round, outlasts the stretched budget's cap
// (plus kBudgetRunAllowanceSeconds): a trace too costly for every
// contender to run once leaves the rest "not run", whatever its cost per
// event. With
// the race, a run's time limit follows the pace (race.h: RaceTimeLimit),
// and the reference runs first in the first round so the pace is known
// before a pathological contender runs.
//
// Thread-safety: single-threaded; the runner forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ROUNDS_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ROUNDS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "alloctrace/base/child_process.h"
#include "alloctrace/replayer/measure/role.h"

namespace alloctrace {

// What the rounds keep of one contender. The mode keeps the runs
// themselves (a replay's RunRecords, in situ's program runs); the core
// reads only their ranked figures.
struct Contender {
  std::string name;
  // kReference pairs every run: runs as long as anyone does; kNoise, the
  // reference's second run set, runs with it; kFloor (bump, the harness's
  // own cost) never leads nor is eliminated.
  Role role = Role::kCandidate;
  bool frees_blocks = true;  // the race's leaders: see race.h
  // One of the set a program adopts unchanged (a capture's mallocs): it
  // races the fastest of that set, never one the program cannot adopt
  // (race.h).
  bool races_apart = false;
  // The ranked figure (a time: lower is faster) of each round it has one.
  std::map<int, double> figures;
  int kept = 0;                     // runs kept (a kept run may lack a figure: no warm pass)
  std::vector<double> run_seconds;  // each kept run's wall time (the race's pace)
  double spent = 0;                 // seconds of its runs, failed ones included
  int attempts = 0;
  int failed = 0;
  bool fatal = false;  // a failure that makes more runs pointless (time, memory)
  bool done = false;
  bool eliminated = false;  // by the race (done too)
  std::string first_error;  // "run 2: crashed with signal 11 (...)"
  Stop stop = Stop::kNone;
  std::string stop_reason;  // `stop` in words: "precise", "budget of 3 s spent", ...
};

// How a run ended, as the mode's runner reports it.
struct RunOutcome {
  enum class End { kKept, kFailed, kStopped };  // kStopped: at the race's time limit
  End end = End::kKept;
  double figure = -1;      // kKept: the ranked figure; <= 0: none
  double seconds = 0;      // the wall time the run took, re-runs included (the budgets)
  double run_seconds = 0;  // kKept: the kept run's own wall time (the race's pace); 0: seconds
  std::string error;       // kFailed: what went wrong
  bool fatal = false;      // kFailed: another run would fail the same way
};

// A mode's way of running one contender once.
class ContenderRunner {
 public:
  virtual ~ContenderRunner() = default;
  // Runs contenders[index] once in `round`, killed past `limits`;
  // `race_limited`: the time limit is the race's (lower than the configured
  // one), so a run killed at it is kStopped, not failed. The mode keeps the
  // run's own record.
  virtual RunOutcome Run(size_t index, int round, const ChildLimits& limits, bool race_limited) = 0;
};

// With a total budget, the run under way when the budget's cap is reached
// may go this far past it, then is stopped (its contender eliminated, its
// row saying why); and a run's limit is never set below the floor.
inline constexpr double kBudgetRunAllowanceSeconds = 5;
inline constexpr double kBudgetRunFloorSeconds = 5;

// When the runs stop. Defaults are the replayer's command line's.
struct RoundsSettings {
  int min_runs = 10;
  int max_runs = 500;
  double precision = 0.03;           // CI half-width target, as a fraction
  double budget_seconds = 3;         // per contender, where OwnBudgetApplies
  bool race = true;                  // successive elimination (race.h)
  int race_min_runs = 3;             // paired rounds before a contender can be eliminated
  double total_budget_seconds = 16;  // with the race, all contenders together; 0: none
  // With the total budget, the runs (every contender's, the noise's too,
  // and runs_before) stop once this many were made, as once the seconds
  // are spent, checked before every run, in the first round too: never one
  // more (those whose first turn did not come are "not run"); 0: no such
  // bound (in situ bounds a program's runs by their number too).
  int max_total_runs = 0;
  // Runs the mode made before the rounds (in situ's warm-up, round 0),
  // which max_total_runs counts.
  int runs_before = 0;
  // The flag a user raises the total budget with, as the stop reasons name
  // it.
  std::string budget_flag = "--total_budget";
  // What the total budget may stretch to: with the decoding (6 to 7 s on a
  // 10 M-event trace), and the whole runs after windowed rounds taken out of
  // it (sampling.h), a long trace's command ends within a minute.
  double max_total_budget_seconds = 47;
  int stretch_rounds = 5;  // rounds at the first's pace the budget stretches to
  // A stretched budget stretches further, within its cap, so that the
  // contenders the race leaves reach this many rounds at their own pace.
  int reach_rounds = 10;
  // Or, on a long trace (replayed as sampled windows: sampling.h), to its
  // cap once the race has looked, whether or not they can reach that many
  // within it, and whether or not the first round stretched the budget.
  // Not on a short trace whose budget a slow first
  // round on a busy machine stretched: the sample trace's command would
  // take the cap, 43 s, rather than 16 to 25 s.
  bool to_cap = false;
  // Seconds of the cap kept for what a mode runs after the rounds (a
  // windowed replay's whole runs: sampling.h): at most kept_seconds, and,
  // given kept_for, no more than the contenders still in the race will
  // need (kept_for(i): contender i's seconds; < 0 while it cannot tell),
  // so the rounds get what the race's eliminations free.
  double kept_seconds = 0;
  std::function<double(size_t)> kept_for;
  ChildLimits limits;   // the configured limits of a run
  uint64_t seed = 1;    // of the order shuffled in each round
  int first_round = 0;  // in situ counts its warm-up as round 0
  // Without the reference no ratio can be paired: stop everyone if it fails
  // (in situ), or let the others run on unpaired (a replay).
  bool stop_without_reference = false;
  // Progress on stderr: "" for none, else a label ("simple_map.trace").
  // With progress_lines, one line per round (for logs); else one line
  // rewritten in place (for a terminal).
  std::string progress_label;
  bool progress_lines = false;
};

struct RoundsResult {
  int rounds = 0;           // rounds run (first_round + that many were numbered)
  double total_budget = 0;  // as stretched (0: none)
};

// Whether `c` has reached the precision: its median and its ratio to
// `reference` (paired by round; none if null or `c` itself), 95% bootstrap
// CIs within `precision`. The very estimates the reports give, so a
// contender stopped as precise is never listed as short of the precision.
bool Precise(const Contender& c, const Contender* reference, double precision);

// The race's looks: after every round up to 8, then once the rounds have
// grown by an eighth (9, 11, 13, 15, 17, 20, 23, 26, 30, ...); the round
// of the next look after one at `done` rounds. A look's level falls as the
// square of its number (race.h): looking after every round, a policy 1.4x
// slower than the leader, its log ratios spread by 0.3 a round against a
// noise floor of 10% (a captured 5-thread trace's jemalloc against
// mimalloc), was still running after 58 rounds; by the test's arithmetic it
// needed about 55 at 60 entrants, where looking by an eighth, its 44th
// round is the 18th look and eliminates it.
int NextLookAfter(int done);

// Whether a contender's own budget (RoundsSettings::budget_seconds) stops
// it: not in a race with a total budget, where the total budget and the
// race decide who runs on. On a long trace a contender's few seconds were
// spent after 15 to 20 windowed rounds, ending the measurement with most of
// its stretched budget unspent and the verdict's intervals wider than they
// had to be; and a --total_budget raised for tighter intervals bought none.
bool OwnBudgetApplies(const RoundsSettings& s);

// Sets `c.done` and `c.stop_reason` once it failed (after min_runs
// attempts, or at once if fatal), is precise after min_runs runs, spent its
// own budget after min_runs runs (where OwnBudgetApplies), or made max_runs
// runs.
void UpdateDone(Contender& c, const Contender* reference, const RoundsSettings& s);

// At the end: a contender stopped as "precise" that ran on (a race's
// leader, or the reference, run as long as anyone runs so that every run
// has its pair) may have widened its CIs since; if it is no longer Precise,
// its stop_reason says so.
void RecheckPrecise(Contender& c, const Contender* reference, double precision);

// Runs rounds over `contenders` (see above) until every one is done, the
// total budget is spent or a backstop of max_runs * 3 rounds. Exactly one
// contender must be the reference; at most one the noise.
RoundsResult RunRounds(std::vector<Contender>& contenders, ContenderRunner& runner,
                       const RoundsSettings& s);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ROUNDS_H_
