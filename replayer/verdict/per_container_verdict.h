// The verdict per container, as data: for each class of containers (the
// trace's class table: tracer/trace_allocator.h names them), the policy the
// per-container search (replayer/per_container/search.h) settled on and
// the line that adopts it, then the whole program: the mix against the
// best single choice and against std, paired. The reports render it;
// nothing here runs anything.
//
// Thread-safety: plain structs and pure functions.
#ifndef ALLOCTRACE_REPLAYER_VERDICT_PER_CONTAINER_VERDICT_H_
#define ALLOCTRACE_REPLAYER_VERDICT_PER_CONTAINER_VERDICT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "alloctrace/format/trace_format.h"
#include "alloctrace/inspect/class_stats.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// What "the heap" means in a mix: the process's one malloc, which every
// class not given a pool shares (and which the pools get their chunks
// from).
inline constexpr char kHeapPolicy[] = "heap";

// One candidate of a class's race: its figure with that class on it, the
// others held.
struct ClassCandidate {
  std::string policy;  // a registry name, or kHeapPolicy
  Estimate ns_per_op;  // the whole trace's, as the race ranks it
  Estimate vs_malloc;  // glibc malloc's figure over this one's, paired (>1: faster)
  // In the program (PerContainerVerdict::in_program): the median time of
  // its runs, and the held policy's over its, paired (>1: faster).
  Estimate seconds;
  Estimate vs_held;
  bool tied_fastest = false;
  std::string skipped;  // why it did not run (the safety rule), "" if it ran
};

struct ClassVerdict {
  // What the trace says of the class, as `inspect` does (facts.def.id 0:
  // the rest, the global heap and unnamed arenas).
  ClassSummary facts;
  std::string policy;          // the mix's: a registry name, or kHeapPolicy
  allocators::Adoption adopt;  // of `policy` (empty for the heap)
  std::string alias;           // the alias template line to paste
  bool searched = false;       // false: below the share, held (note says)
  std::string note;            // why it is as it is, when not searched or not changed
  // Its race: the chosen policy against the one the class held before it,
  // paired (>1: the change made the program's replay faster); no data if
  // it did not change.
  std::string held;  // the policy it held when its race began
  Estimate contribution;
  std::vector<ClassCandidate> candidates;  // its last race, fastest first
};

struct PerContainerVerdict {
  // Searched in the program itself (in_situ/per_container_search.h), each
  // race a race of the program's runs; else in the replay.
  bool in_program = false;
  std::string why_not;      // "" or why there is no per-container verdict
  std::string best_single;  // the single verdict's pick
  std::string heap;         // the process's malloc: "malloc" or a preloaded one
  allocators::Adoption heap_adopt;
  std::vector<ClassVerdict> classes;  // by share, largest first; the rest last
  // ALLOCTRACE_POLICY for the mix: the classes by the trace's names, the
  // heap's as std (its malloc preloaded or linked: heap_adopt).
  std::string assignment;
  bool mix_is_single = false;  // no class changed: the mix is the best single choice
  // The classes are a capture's allocating functions (inspect
  // --classes_out): no container type to alias and no ALLOCTRACE_POLICY
  // to run under; the verdict names each function and the type its
  // containers would take (MarkCallSiteClasses).
  bool from_call_sites = false;
  // The final race, glibc malloc the reference (>1: faster than it).
  Estimate mix_vs_malloc, single_vs_malloc, std_vs_malloc;
  Estimate mix_vs_single;  // the best single choice's figure over the mix's, paired
  Estimate mix_vs_std;
  bool mix_faster = false;  // mix_vs_single's CI above 1: the mix is shown faster
  int races = 0;
  int sweeps = 0;
  int final_rounds = 0;
  double seconds = 0;         // the search's wall time
  double single_seconds = 0;  // the single verdict's
  double min_share = 0;       // classes below it are held
  // In the program: the final race's mix (ALLOCTRACE_POLICY = assignment,
  // the heap's malloc preloaded), paired by round with the best single
  // choice and with the reference (std), >1: the mix faster; no data in a
  // replay, or when no class moved from std.
  Estimate in_situ_vs_single, in_situ_vs_std;
  std::string in_situ_failure;  // the mix's runs failed in the program: why
  // In the program with --shipped_build: the builds made by the end of the
  // search (the single one's too), every race run on them; 0 otherwise.
  int shipped_builds = 0;
};

// The in-situ candidate's name for the mix (the final race in the program).
inline constexpr char kMixCandidate[] = "mix";
// ... and for the mix of every class's leaning (in_situ/per_container_search.h).
inline constexpr char kLeaningsCandidate[] = "leanings";

// The labels of the replay's final race (per_container/search.h): the
// mix, the best single choice and std, each a mix.
inline constexpr char kMixLabel[] = "mix";
inline constexpr char kBestSingleLabel[] = "best single";
inline constexpr char kStdLabel[] = "std";

// A class's race in the replay, decided. The class keeps the policy it
// held while that policy is in the race's fastest tied group (summary.h:
// FastestTiedGroup, under the race's noise margin) and takes the group's
// fastest otherwise: a class never moves on a difference inside the noise.
// With no candidate measured it holds.
struct ReplayClassMove {
  std::string policy;  // the class's policy after the race (a label of `labels`)
  bool moved = false;
  std::vector<std::string> tied_fastest;  // the fastest tied group, fastest first
  // The held policy's figure over the chosen one's, paired by round (>1:
  // the move made the replay faster); no data when the class held.
  Estimate gain;
  std::string note;  // why it held ("" when it moved)
};
// `labels`: the race's candidates, each a policy of `race` if it ran;
// `held` is one of them.
ReplayClassMove DecideReplayClassRace(const TraceReport& race,
                                      const std::vector<std::string>& labels,
                                      const std::string& held, const Ranking& ranking);

// The mix is the answer where it is shown faster than the best single
// choice: the paired ratio of the single's figure over the mix's has its
// 95% CI above 1, from kMinPairedRounds rounds or more. The replay's rule
// and the program's alike.
bool MixShownFaster(bool mix_is_single, const Estimate& single_over_mix);

// The replay's final race (kMixLabel, kBestSingleLabel and kStdLabel; the
// mix absent when `v.mix_is_single`, std absent when `single_is_std`) read
// into `v`: each against glibc malloc, the mix against the single choice
// and against std, paired, and MixShownFaster.
void ReadFinalRace(const TraceReport& race, const Ranking& ranking, bool single_is_std,
                   PerContainerVerdict& v);

// The alias template's name for a class: a tag's last name ("OrderIndex"
// from "app::OrderIndex") or the value type's words joined
// ("pair_const_long_Msg"), then "Alloc".
std::string AliasName(const ClassDef& def);

// "template <class T> using OrderIndexAlloc = <type>;" for a class on
// `adopt` (std::allocator<T> for the heap).
std::string AliasLine(const ClassDef& def, const allocators::Adoption& adopt);

// For a trace whose classes are a capture's call sites (ClassesAreCallSites):
// marks `v` so (from_call_sites), without alias lines or an assignment,
// which would name types and a switch the captured program does not have.
void MarkCallSiteClasses(PerContainerVerdict& v);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_VERDICT_PER_CONTAINER_VERDICT_H_
