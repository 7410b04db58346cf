// The replay's contenders as the measurement holds them (measure.h): a
// policy, or a mix, with what runs it and its runs; made from the registry
// with the reason it may not serve the trace (policy_safety.h) or is not
// installed, and each malloc library's process cost. measure.cc, the
// runner (replay_runner.h), the article grid (article_grid.h) and the
// whole-run pass (sampling.h) share them.
//
// Thread-safety: plain data and functions; AddProcessCosts forks children.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ENTRIES_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ENTRIES_H_

#include <map>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/mix_spec.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/runs.h"

namespace alloctrace::measure_internal {

// The reference of every ratio, glibc malloc, and the name of its second
// run set, for the noise floor.
inline constexpr char kReferencePolicy[] = "malloc";
inline constexpr char kNoiseName[] = "malloc (again)";

// Why an entry is skipped (its words in PolicyRuns::skipped): the default
// set's rules (policy_safety.h: PoolPerArenaReason, LockedTwinReason,
// StackTwinReason), which the article grid's note counts, or another
// (not safe on the trace, library not installed).
enum class Skip { kNone, kPoolPerArena, kLockedTwin, kStackTwin, kOther };

// A policy as the replay measures it: what runs it, and its runs.
struct Entry {
  std::string policy;  // the registry name to run (kNoiseName's runs malloc; a mix's rest)
  std::string mix;     // a mix's MixSpecWord, "" for one policy
  std::string preload_path;
  Skip skip = Skip::kNone;
  PolicyRuns runs;
};

// A policy to measure on `program`, or skipped (with the reason) if it may
// not serve it (policy_safety.h) or its library is not installed.
// `default_set`: the policy comes from the default set or the article
// grid, not from the user's list, and one not worth running on the trace
// is skipped too (PoolPerArenaReason, LockedTwinReason, StackTwinReason).
// A name in `mixes` is a mix (MeasureSettings::mixes).
Entry MakeEntry(const PolicyInfos& policies, const std::string& name,
                const std::string& display_name, const ReplayProgram& program,
                bool default_set = false, const std::map<std::string, MixSpec>& mixes = {});

// Gives each malloc's entry its library's process cost (0 for glibc
// malloc's, the process's own: the pools' and the reference's runs start
// no other library), or a note where it could not be measured. `self` is
// re-executed as the probe.
void AddProcessCosts(std::vector<Entry>& entries, const std::string& self);

// Whether `entries` runs registry policy `policy` on its own (not a mix).
bool Has(const std::vector<Entry>& entries, const std::string& policy);

}  // namespace alloctrace::measure_internal

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ENTRIES_H_
