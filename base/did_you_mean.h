// "Did you mean ...?": the name a user most likely meant when the one they
// typed is unknown (a flag, a policy, an allocator).
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_BASE_DID_YOU_MEAN_H_
#define ALLOCTRACE_BASE_DID_YOU_MEAN_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace alloctrace {

// The Levenshtein distance between `a` and `b`: the fewest single-character
// insertions, deletions and substitutions that turn one into the other.
// O(|a| * |b|) time, O(|b|) memory.
size_t EditDistance(absl::string_view a, absl::string_view b);

// The candidate nearest to `name` by EditDistance, if it is near enough to
// be the one meant (at most max(2, |name| / 3) edits away); "" if none is.
// Ties go to the candidate listed first.
std::string NearestName(absl::string_view name, const std::vector<std::string>& candidates);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_DID_YOU_MEAN_H_
