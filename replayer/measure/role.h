// What a policy is in a measurement, and so in its verdict and reports:
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

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ROLE_H_
