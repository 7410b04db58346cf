#include "alloctrace/base/did_you_mean.h"

#include <algorithm>
#include <string>
#include <vector>

namespace alloctrace {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  // One row of the dynamic-programming table at a time: row[j] is the
  // distance between the prefix of `a` read so far and b[0, j).
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];  // the distance of a[0, i-1) and b[0, j-1)
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestName(absl::string_view name, const std::vector<std::string>& candidates) {
  const size_t most = std::max<size_t>(2, name.size() / 3);
  const std::string* best = nullptr;
  size_t best_distance = most + 1;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  return best == nullptr ? "" : *best;
}

}  // namespace alloctrace
