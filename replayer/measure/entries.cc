// The replay's contenders (entries.h): an entry per policy or mix, the
// safety rule's reasons as its skip, and the process costs of the malloc
// libraries, measured once per process.
#include "alloctrace/replayer/measure/entries.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/measure/isolated_run.h"
#include "alloctrace/replayer/measure/policy_safety.h"

namespace alloctrace::measure_internal {
namespace {

// A mix named `name` (MeasureSettings::mixes): run by its rest's process
// (that malloc's preload), MixAllocator serving each class. Its safety
// per class is the caller's rule.
Entry MakeMixEntry(const PolicyInfos& policies, const std::string& name, const MixSpec& spec) {
  Entry e;
  const allocators::AllocatorInfo& rest = policies.at(spec.rest);
  e.policy = spec.rest;
  e.mix = MixSpecWord(spec);
  e.runs.name = name;
  e.runs.family = allocators::Family::kOurs;
  if (!rest.preload.empty()) {
    e.preload_path = FindPreloadLibrary(rest.preload);
    if (e.preload_path.empty()) {
      e.runs.skipped = absl::StrCat(rest.preload, " is not installed");
      e.skip = Skip::kOther;
    }
  }
  return e;
}

// The malloc library `preload`'s ProcessCost, measured once per process
// (kProcessCostRounds pairs of probes) on the CPU the replay's runs are
// pinned to.
absl::StatusOr<double> ProcessCostOf(const std::string& self, const std::string& preload) {
  static std::mutex mu;
  static auto* const costs = new std::map<std::string, absl::StatusOr<double>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = costs->find(preload);
  if (it == costs->end()) {
    it = costs
             ->emplace(preload,
                       ProcessCost({self, kProbeMarker}, preload, kProcessCostRounds, ReplayCpu()))
             .first;
  }
  return it->second;
}

}  // namespace

Entry MakeEntry(const PolicyInfos& policies, const std::string& name,
                const std::string& display_name, const ReplayProgram& program, bool default_set,
                const std::map<std::string, MixSpec>& mixes) {
  Entry e;
  auto mix = mixes.find(name);
  if (mix != mixes.end()) return MakeMixEntry(policies, name, mix->second);
  const allocators::AllocatorInfo& info = policies.at(name);
  e.policy = name;
  e.runs.name = display_name;
  e.runs.family = info.family;
  e.runs.adopt = info.adopt;
  e.runs.frees_blocks = info.frees_blocks;
  if (info.floor) e.runs.role = Role::kFloor;
  // The first reason that applies, and its kind.
  auto skip = [&e](Skip kind, std::string reason) {
    if (!e.runs.skipped.empty() || reason.empty()) return;
    e.runs.skipped = std::move(reason);
    e.skip = kind;
  };
  skip(Skip::kOther, UnsafeReason(info, program.arena_usage));
  skip(Skip::kOther, UnsafeSharedStateReason(info, program.arena_usage, program.threads));
  if (e.runs.skipped.empty() && default_set) {
    skip(Skip::kPoolPerArena,
         PoolPerArenaReason(info, program.arena_usage, program.allocs + program.reallocs_count));
    skip(Skip::kLockedTwin, LockedTwinReason(info, program.threads));
    skip(Skip::kStackTwin, StackTwinReason(info, program.arena_usage, program.threads));
  }
  if (e.runs.skipped.empty() && !info.preload.empty()) {
    e.preload_path = FindPreloadLibrary(info.preload);
    if (e.preload_path.empty()) skip(Skip::kOther, absl::StrCat(info.preload, " is not installed"));
  }
  return e;
}

void AddProcessCosts(std::vector<Entry>& entries, const std::string& self) {
  for (Entry& e : entries) {
    if (e.preload_path.empty() || !e.runs.skipped.empty()) continue;
    absl::StatusOr<double> cost = ProcessCostOf(self, e.preload_path);
    if (cost.ok()) {
      e.runs.process_seconds = *cost;
    } else {
      e.runs.note = absl::StrCat("its process cost is not counted: ", cost.status().message());
    }
  }
}

bool Has(const std::vector<Entry>& entries, const std::string& policy) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const Entry& e) { return e.policy == policy && e.mix.empty(); });
}

}  // namespace alloctrace::measure_internal
