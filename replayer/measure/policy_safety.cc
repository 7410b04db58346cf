#include "alloctrace/replayer/measure/policy_safety.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/allocators/registry.h"

namespace alloctrace {

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
  const size_t mt = info.name.find("/mt/");
  if (threads > 1 || !info.thread_safe || mt == std::string::npos) return "";
  std::string twin = info.name;
  twin.replace(mt, 4, "/st/");
  for (const allocators::AllocatorInfo& other : allocators::AllAllocators()) {
    if (other.name == twin && !other.thread_safe) {
      return absl::StrCat("not run: the trace was recorded on one thread, where it is ", twin,
                          " plus a lock, never faster (--policies=", info.name, " runs it anyway)");
    }
  }
  return "";
}

std::vector<std::string> SafeVariants(const std::vector<std::string>& names,
                                      const ArenaUsageSummary& usage) {
  if (usage.shared_count == 0) return names;
  const std::vector<allocators::AllocatorInfo> all = allocators::AllAllocators();
  auto find = [&](const std::string& name) -> const allocators::AllocatorInfo* {
    for (const allocators::AllocatorInfo& info : all) {
      if (info.name == name) return &info;
    }
    return nullptr;
  };
  std::vector<std::string> out;
  for (const std::string& name : names) {
    std::string chosen = name;
    const allocators::AllocatorInfo* info = find(name);
    const size_t st = name.find("/st/");
    if (info != nullptr && !info->thread_safe && st != std::string::npos) {
      std::string mt = name;
      mt.replace(st, 4, "/mt/");
      const allocators::AllocatorInfo* variant = find(mt);
      if (variant != nullptr && variant->thread_safe) chosen = mt;
    }
    if (std::find(out.begin(), out.end(), chosen) == out.end()) out.push_back(chosen);
  }
  return out;
}

}  // namespace alloctrace
