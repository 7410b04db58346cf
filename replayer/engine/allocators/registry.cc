#include "alloctrace/replayer/engine/allocators/registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/did_you_mean.h"

namespace alloctrace::allocators {
namespace {

// Debian's Abseil has its own string_view type, not an alias of std's.
absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

struct CollectInfo {
  std::vector<AllocatorInfo>* infos;
  template <typename A>
  void operator()(const AllocatorInfo& info) {
    infos->push_back(info);
  }
};

}  // namespace

std::vector<AllocatorInfo> AllAllocators() {
  std::vector<AllocatorInfo> infos;
  infos.reserve(AllAllocatorTypes::kSize);
  ForEachAllocatorType(CollectInfo{&infos});
  return infos;
}

std::map<std::string, AllocatorInfo> AllocatorInfosByName() {
  std::map<std::string, AllocatorInfo> out;
  for (AllocatorInfo& info : AllAllocators()) out.emplace(info.name, std::move(info));
  return out;
}

std::vector<std::string> DefaultPolicyNames() {
  std::vector<std::string> names;
  for (const AllocatorInfo& info : AllAllocators()) {
    if (info.family == Family::kArticle || info.floor) continue;
    // Of our pools, the single-threaded variants in both holdings; their
    // thread-safe twins replace them on traces that need it
    // (replayer/measure/policy_safety.h).
    if (info.family == Family::kOurs && info.thread_safe) continue;
    names.push_back(info.name);
  }
  return names;
}

std::vector<std::string> ArticleStorageKinds() { return {"simple", "boundary", "ordered"}; }

bool MatchesGlob(std::string_view pattern, std::string_view name) {
  size_t p = 0;
  size_t n = 0;
  size_t star = std::string_view::npos;  // Position of the last '*'.
  size_t star_match = 0;                 // Where that '*' match ends so far.
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_match = n;
    } else if (star != std::string_view::npos) {
      // Let the last '*' swallow one more character and retry.
      p = star + 1;
      n = ++star_match;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::StatusOr<std::vector<std::string>> SelectAllocators(
    std::string_view comma_separated_patterns) {
  const std::vector<AllocatorInfo> all = AllAllocators();
  std::vector<std::string> selected;
  bool any_pattern = false;
  for (absl::string_view piece : absl::StrSplit(ToAbsl(comma_separated_patterns), ',')) {
    const absl::string_view pattern = absl::StripAsciiWhitespace(piece);
    if (pattern.empty()) continue;
    any_pattern = true;
    bool matched = false;
    for (const AllocatorInfo& info : all) {
      if (!MatchesGlob(std::string_view(pattern.data(), pattern.size()), info.name)) {
        continue;
      }
      matched = true;
      if (std::find(selected.begin(), selected.end(), info.name) == selected.end()) {
        selected.push_back(info.name);
      }
    }
    if (!matched) {
      // A plain name (no glob) may be a typo of a name, or of a family
      // ("slab" for slab/*): suggest the nearest name or family glob.
      std::string near;
      if (pattern.find_first_of("*?") == absl::string_view::npos) {
        std::vector<std::string> names;
        for (const AllocatorInfo& info : all) names.push_back(info.name);
        for (const AllocatorInfo& info : all) {
          for (size_t slash = info.name.find('/'); slash != std::string::npos;
               slash = info.name.find('/', slash + 1)) {
            std::string family = info.name.substr(0, slash) + "/*";
            if (std::find(names.begin(), names.end(), family) == names.end()) {
              names.push_back(std::move(family));
            }
          }
        }
        near = NearestName(pattern, names);
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy '", pattern, "'",
                       near.empty() ? "" : absl::StrCat("; did you mean ", near, "?"),
                       near.empty() ? "; see --list-policies" : " See --list-policies"));
    }
  }
  if (!any_pattern) {
    return absl::InvalidArgumentError(
        "no policy given (expected comma-separated names or globs such as "
        "\"malloc,slab,pool/*/exp/*\"); see --list-policies");
  }
  return selected;
}

}  // namespace alloctrace::allocators
