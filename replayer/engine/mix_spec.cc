#include "alloctrace/replayer/engine/mix_spec.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace alloctrace {

std::string MixSpecWord(const MixSpec& spec) {
  std::string out;
  for (const auto& [id, policy] : spec.by_class) absl::StrAppend(&out, id, "=", policy, ";");
  absl::StrAppend(&out, "*=", spec.rest);
  return out;
}

absl::StatusOr<MixSpec> ParseMixSpecWord(const std::string& word) {
  MixSpec spec;
  bool rest = false;
  for (absl::string_view entry : absl::StrSplit(word, ';')) {
    const size_t eq = entry.find('=');
    const absl::string_view key = entry.substr(0, eq);
    const absl::string_view policy = eq == absl::string_view::npos ? "" : entry.substr(eq + 1);
    uint32_t id = 0;
    if (policy.empty() || (key != "*" && (!absl::SimpleAtoi(key, &id) || id == 0)) ||
        (key == "*" && rest) || (key != "*" && spec.by_class.count(id) > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "mix entry '", std::string(entry), "' is not class-id=policy or *=policy, once each"));
    }
    if (key == "*") {
      spec.rest = std::string(policy);
      rest = true;
    } else {
      spec.by_class[id] = std::string(policy);
    }
  }
  if (!rest) return absl::InvalidArgumentError(absl::StrCat("mix '", word, "' has no *= entry"));
  return spec;
}

}  // namespace alloctrace
