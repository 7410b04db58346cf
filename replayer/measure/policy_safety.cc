#include "alloctrace/replayer/measure/policy_safety.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/allocators/registry.h"

namespace alloctrace {
namespace {

// The catalog's policy named `name`, or null.
const allocators::AllocatorInfo* Find(const std::string& name) {
  static const auto* const infos =
      new std::map<std::string, allocators::AllocatorInfo>(allocators::AllocatorInfosByName());
  auto it = infos->find(name);
  return it == infos->end() ? nullptr : &it->second;
}

// Its twin of the other threading: the policy named `name` with its first
// `from` ("/st/" or "/mt/") replaced by `to`, or null.
const allocators::AllocatorInfo* TwinOf(const std::string& name, const std::string& from,
                                        const std::string& to) {
  const size_t at = name.find(from);
  if (at == std::string::npos) return nullptr;
  std::string twin = name;
  twin.replace(at, from.size(), to);
  return Find(twin);
}

}  // namespace

std::string UnsafeReason(const allocators::AllocatorInfo& info, const ArenaUsageSummary& usage) {
  if (info.thread_safe || usage.shared_count == 0) return "";
  return absl::StrCat("not thread-safe: ", usage.SharingWords());
}

std::string UnsafeSharedStateReason(const allocators::AllocatorInfo& info,
                                    const ArenaUsageSummary& usage, uint64_t threads) {
  if (info.thread_safe || info.state_per_arena || usage.shared_count > 0 || threads <= 1) {
    return "";
  }
  return absl::StrCat("not thread-safe: its one pool serves every arena, and the trace's ", threads,
                      " threads allocate in them");
}

std::string PoolPerArenaReason(const allocators::AllocatorInfo& info,
                               const ArenaUsageSummary& usage, uint64_t allocations) {
  const uint64_t one_block = usage.arenas_single_block;
  if (!info.state_per_arena || one_block < kPoolPerArenaMinArenas || 2 * one_block < allocations) {
    return "";
  }
  return absl::StrCat(
      "not run: it keeps a pool per arena, and ", Grouped(one_block),
      " arenas never hold more than 1 block, at least half as many as the trace's ",
      Grouped(allocations),
      " allocations; each pool costs two allocations or more from the system allocator (the "
      "pool, its first chunk), so its pools alone call glibc malloc as often as glibc malloc is "
      "called for the whole trace: it cannot be faster than glibc malloc here (--policies=",
      info.name, " runs it anyway)");
}

std::string LockedTwinReason(const allocators::AllocatorInfo& info, uint64_t threads) {
  if (threads > 1 || !info.thread_safe) return "";
  const allocators::AllocatorInfo* twin = TwinOf(info.name, "/mt/", "/st/");
  if (twin == nullptr || twin->thread_safe) return "";
  return absl::StrCat("not run: the trace was recorded on one thread, where it is ", twin->name,
                      " plus a lock, never faster (--policies=", info.name, " runs it anyway)");
}

std::string StackTwinReason(const allocators::AllocatorInfo& info, const ArenaUsageSummary& usage,
                            uint64_t threads) {
  if (!info.state_per_arena || usage.arenas_used > 1) return "";
  const allocators::AllocatorInfo* twin = TwinOf(info.name, "/stack", "/single");
  if (twin == nullptr || !UnsafeReason(*twin, usage).empty() ||
      !UnsafeSharedStateReason(*twin, usage, threads).empty()) {
    return "";
  }
  return absl::StrCat(
      "not run: the trace's blocks all live in one arena, where its pool per "
      "arena is one pool, the same replay as ",
      twin->name, ", which runs (--policies=", info.name, " runs it anyway)");
}

std::vector<std::string> SafeVariants(const std::vector<std::string>& names,
                                      const ArenaUsageSummary& usage) {
  if (usage.shared_count == 0) return names;
  std::vector<std::string> out;
  for (const std::string& name : names) {
    std::string chosen = name;
    const allocators::AllocatorInfo* info = Find(name);
    if (info != nullptr && !info->thread_safe) {
      const allocators::AllocatorInfo* variant = TwinOf(name, "/st/", "/mt/");
      if (variant != nullptr && variant->thread_safe) chosen = variant->name;
    }
    if (std::find(out.begin(), out.end(), chosen) == out.end()) out.push_back(chosen);
  }
  return out;
}

}  // namespace alloctrace
