// The verdict per container in words (words.h), for every format.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/adopt.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {

std::string ClassLabel(const ClassVerdict& c) {
  if (c.facts.def.id == 0) return "(the rest)";
  const std::string alias = AliasName(c.facts.def);
  return alias.substr(0, alias.size() - 5);
}

std::string ClassPolicyWords(const PerContainerVerdict& v, const ClassVerdict& c) {
  return c.policy == kHeapPolicy ? absl::StrCat("heap (", v.heap, ")") : c.policy;
}

std::string ClassChoiceWords(const ClassVerdict& c) {
  if (c.contribution.has_data()) {
    return absl::StrCat(Times(c.contribution), " the speed with ", c.held);
  }
  return c.note;
}

namespace {

// The program's per-container verdict (PerContainerVerdict::in_program).
std::string InProgramSentence(const PerContainerVerdict& v) {
  const std::string vs_std =
      v.in_situ_vs_std.has_data() ? absl::StrCat(" and ", Times(v.in_situ_vs_std), " std's") : "";
  if (v.mix_is_single) {
    return absl::StrCat(
        "in the program, no class ran faster on another policy than on the best "
        "single choice (",
        v.best_single, "): the answer is ", v.best_single, " for every class",
        v.in_situ_vs_std.has_data() ? absl::StrCat(", ", Times(v.in_situ_vs_std), " std's speed")
                                    : "",
        ".");
  }
  if (!v.in_situ_failure.empty()) {
    return absl::StrCat("in the program, the mix did not run (", v.in_situ_failure, "): adopt ",
                        v.best_single, " for every class.");
  }
  const std::string ran =
      absl::StrCat("in the program", v.shipped_builds > 0 ? " (its shipped builds)" : "",
                   ", the mix ran at ", Times(v.in_situ_vs_single),
                   " the speed of the best single choice (", v.best_single, ")", vs_std);
  if (v.mix_faster) return absl::StrCat(ran, ": the mix is the answer (the alias lines below).");
  return absl::StrCat(ran, "; not shown faster than the best single choice: adopt ", v.best_single,
                      " for every class.");
}

}  // namespace

std::string AdoptHeading(const PerContainerVerdict& v) {
  return v.from_call_sites ? "Adopt, per call site (T: the element type of the containers that "
                             "allocate in the function):"
                           : "Adopt, per container (T: the container's element type):";
}

std::vector<std::string> AdoptLines(const PerContainerVerdict& v) {
  std::vector<std::string> lines;
  for (const ClassVerdict& c : v.classes) {
    if (!v.from_call_sites) {
      if (!c.alias.empty()) lines.push_back(c.alias);
    } else if (c.facts.def.id != 0) {
      lines.push_back(absl::StrCat(c.facts.def.name, ": ",
                                   c.policy == kHeapPolicy || c.adopt.cpp_type.empty()
                                       ? "std::allocator<T> (the heap)"
                                       : c.adopt.cpp_type));
    }
  }
  return lines;
}

std::string SiteClassesWords(const PerContainerVerdict& v) {
  if (!v.from_call_sites) return "";
  return "these classes are the capture's allocating functions: give the containers that "
         "allocate there a TraceAllocator of their own class, record the program, and run "
         "replayer --per_container TRACE -- PROGRAM to confirm in the program";
}

bool MixIsTheAnswer(const PerContainerVerdict& v) {
  return v.why_not.empty() && !v.mix_is_single && v.mix_faster && v.in_situ_failure.empty();
}

std::string MixSentence(const PerContainerVerdict& v) {
  if (!v.why_not.empty()) return absl::StrCat("no per-container verdict: ", v.why_not, ".");
  if (v.in_program) return InProgramSentence(v);
  if (v.mix_is_single) {
    // No figure of its own: the final race replays it as a mix (through
    // the per-class dispatch) in rounds of its own, so its speed differs
    // from the verdict's for the policy alone, and two speeds for one
    // choice read as a contradiction.
    return absl::StrCat("no class ran faster on another policy than on the best single choice (",
                        v.best_single, "): the mix is that choice (the verdict above).");
  }
  std::string o = absl::StrCat("the mix replays at ", Times(v.mix_vs_single),
                               " the speed of the best single choice (", v.best_single, ") and ",
                               Times(v.mix_vs_std), " std's (every class on glibc malloc); ",
                               Times(v.mix_vs_malloc), " glibc malloc's speed");
  if (v.mix_faster) return o + ".";
  return absl::StrCat(
      o, "; not shown faster than the best single choice: adopt ", v.best_single,
      " for every class unless the search in the program (TRACE -- PROGRAM) shows the mix "
      "faster.");
}

std::string MixCostWords(const PerContainerVerdict& v) {
  if (v.in_program) {
    return absl::StrFormat(
        "%d sweep%s, %d race%s of the program's runs, %.1f s; classes below %.0f%% of the memory "
        "ops held",
        v.sweeps, v.sweeps == 1 ? "" : "s", v.races, v.races == 1 ? "" : "s", v.seconds,
        100 * v.min_share);
  }
  return absl::StrFormat(
      "%d sweep%s, %d race%s, %.1f s (the single verdict: %.1f s); classes below %.0f%% of the "
      "memory ops held",
      v.sweeps, v.sweeps == 1 ? "" : "s", v.races, v.races == 1 ? "" : "s", v.seconds,
      v.single_seconds, 100 * v.min_share);
}

std::string HeapWords(const PerContainerVerdict& v) {
  return absl::StrCat(
      "heap: ", v.heap == "malloc" ? "glibc malloc, nothing to link" : AdoptWords(v.heap_adopt));
}

}  // namespace alloctrace
