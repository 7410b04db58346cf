#include "alloctrace/replayer/verdict/per_container_verdict.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/verdict/choice.h"

namespace alloctrace {
namespace {

// A race's ranked figure per round for `label` (none if it did not run).
std::map<int, double> ByRound(const TraceReport& r, const std::string& label,
                              const Ranking& ranking) {
  const PolicyResult* p = FindPolicy(r, label);
  return p != nullptr ? FiguresByRound(p->raw, ranking.warm(), ranking.clock)
                      : std::map<int, double>();
}

}  // namespace

ReplayClassMove DecideReplayClassRace(const TraceReport& race,
                                      const std::vector<std::string>& labels,
                                      const std::string& held, const Ranking& ranking) {
  ReplayClassMove out;
  out.policy = held;
  std::vector<size_t> members;
  for (size_t i = 0; i < race.policies.size(); ++i) {
    const PolicyResult& p = race.policies[i];
    if (p.ok() && p.ns_per_op.has_data() &&
        std::find(labels.begin(), labels.end(), p.name) != labels.end()) {
      members.push_back(i);
    }
  }
  if (members.empty()) {
    out.note = "no candidate of its race has a figure: held";
    return out;
  }
  for (size_t i :
       FastestTiedGroup(race.policies, members, ranking, NoiseMargin(race.noise_floor))) {
    out.tied_fastest.push_back(race.policies[i].name);
  }
  if (std::find(out.tied_fastest.begin(), out.tied_fastest.end(), held) != out.tied_fastest.end()) {
    out.note = absl::StrCat("its race did not show a policy faster than ", held,
                            " (tied with the fastest): held");
    return out;
  }
  out.policy = out.tied_fastest[0];
  out.moved = true;
  out.gain = PairedRatio(ByRound(race, held, ranking), ByRound(race, out.policy, ranking));
  return out;
}

bool MixShownFaster(bool mix_is_single, const Estimate& single_over_mix) {
  return !mix_is_single && single_over_mix.n >= kMinPairedRounds && single_over_mix.lo > 1;
}

void ReadFinalRace(const TraceReport& race, const Ranking& ranking, bool single_is_std,
                   PerContainerVerdict& v) {
  v.final_rounds = race.rounds;
  auto vs_malloc = [&](const char* label) {
    const PolicyResult* p = FindPolicy(race, label);
    return p != nullptr ? p->vs_malloc : Estimate();
  };
  const char* mix = v.mix_is_single ? kBestSingleLabel : kMixLabel;
  const char* std_label = single_is_std ? kBestSingleLabel : kStdLabel;
  v.single_vs_malloc = vs_malloc(kBestSingleLabel);
  v.std_vs_malloc = vs_malloc(std_label);
  v.mix_vs_malloc = vs_malloc(mix);
  const std::map<int, double> mix_rounds = ByRound(race, mix, ranking);
  v.mix_vs_single = v.mix_is_single
                        ? Estimate()
                        : PairedRatio(ByRound(race, kBestSingleLabel, ranking), mix_rounds);
  v.mix_vs_std = PairedRatio(ByRound(race, std_label, ranking), mix_rounds);
  v.mix_faster = MixShownFaster(v.mix_is_single, v.mix_vs_single);
}

std::string AliasName(const ClassDef& def) {
  std::string name = def.name;
  if (def.tagged) {
    const size_t colons = name.rfind("::");
    if (colons != std::string::npos) name = name.substr(colons + 2);
  } else {
    // The type's identifiers joined by '_': std::, the library's inline
    // namespaces (__cxx11::) and punctuation dropped, and no word starting
    // with '_' (names with "__" or "_X" are the implementation's).
    std::string words;
    for (size_t i = 0; i < name.size();) {
      if (name.compare(i, 5, "std::") == 0) {
        i += 5;
        continue;
      }
      if (name.compare(i, 9, "__cxx11::") == 0) {
        i += 9;
        continue;
      }
      if (name[i] == '_' && (words.empty() || words.back() == '_')) {
        ++i;
        continue;
      }
      const unsigned char c = static_cast<unsigned char>(name[i]);
      if (std::isalnum(c) || c == '_') {
        words.push_back(static_cast<char>(c));
      } else if (!words.empty() && words.back() != '_') {
        words.push_back('_');
      }
      ++i;
    }
    while (!words.empty() && words.back() == '_') words.pop_back();
    name = words;
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    name = absl::StrCat("Class", def.id, name.empty() ? "" : "_", name);
  }
  return absl::StrCat(name, "Alloc");
}

void MarkCallSiteClasses(PerContainerVerdict& v) {
  v.from_call_sites = true;
  v.assignment.clear();
  for (ClassVerdict& c : v.classes) c.alias.clear();
}

std::string AliasLine(const ClassDef& def, const allocators::Adoption& adopt) {
  return absl::StrCat("template <class T> using ", AliasName(def), " = ",
                      adopt.cpp_type.empty() ? "std::allocator<T>" : adopt.cpp_type, ";");
}

}  // namespace alloctrace
