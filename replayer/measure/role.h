// What a policy is in a measurement, and why its runs stopped, as types:
// the words for either (stop_reason) are for people; logic reads these.
//
// Role: what a policy is in a measurement, and so in its verdict and reports:
// the reference every ratio is to (glibc malloc in the replay, the
// program's own in situ), the reference's second run set (the noise
// floor), the harness floor (bump: the replay's own cost, measured and
// shown, never a contender), or a candidate. Set once where the set is
// made (measure.cc, in_situ.cc); nothing downstream finds a role by name.
//
// Thread-safety: a plain enum.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ROLE_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ROLE_H_

namespace alloctrace {

enum class Role { kCandidate, kReference, kNoise, kFloor };

// Why a contender's runs stopped (its stop_reason says it in words, with
// the figures): not yet; precise; precise, but its CIs widened as it ran
// on; failed; its own budget spent; --max_runs reached; the total budget
// spent (seconds or runs); stopped at the total budget's cap mid-run; not
// run at all before the cap; eliminated by the race; still running when
// the others stopped.
enum class Stop {
  kNone,
  kPrecise,
  kPreciseThenWidened,
  kFailed,
  kOwnBudget,
  kMaxRuns,
  kTotalBudget,
  kAtCap,
  kNotRun,
  kEliminated,
  kWithOthers,
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ROLE_H_
