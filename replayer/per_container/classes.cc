#include "alloctrace/replayer/per_container/classes.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {
namespace {

std::string ShortName(const ClassDef& def) {
  std::string name = AliasName(def);
  return name.substr(0, name.size() - 5);  // less "Alloc"
}

}  // namespace

std::vector<ClassSummary> ClassesOf(const ReplayProgram& program) {
  ClassStatsBuilder builder;
  size_t realloc_index = 0;
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const ReplayOp& op = program.ops[i];
    const uint32_t thread = program.op_threads.empty() ? 0 : program.op_threads[i];
    const uint64_t bytes = op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux];
    switch (op.kind) {
      case ReplayKind::kArenaCreate:
        builder.ArenaCreated(op.arena, program.arena_classes[op.arena]);
        break;
      case ReplayKind::kAlloc:
      case ReplayKind::kAllocZeroed:
        builder.Alloc(op.arena, thread, bytes);
        break;
      case ReplayKind::kFree:
        builder.Free(op.arena, thread, bytes);
        break;
      case ReplayKind::kRealloc: {
        const ReallocInfo& r = program.reallocs[realloc_index++];
        builder.Realloc(op.arena, r.old_bytes, op.arena, thread, r.new_bytes);
        break;
      }
      case ReplayKind::kArenaDestroy:
        break;
    }
  }
  const absl::flat_hash_map<uint32_t, ClassDef> table(program.classes.begin(),
                                                      program.classes.end());
  std::vector<ClassSummary> out = builder.Summarize(table);
  out.erase(
      std::remove_if(out.begin(), out.end(),
                     [](const ClassSummary& c) { return c.def.id == 0 && c.memory_ops == 0; }),
      out.end());
  std::stable_sort(out.begin(), out.end(), [](const ClassSummary& a, const ClassSummary& b) {
    if ((a.def.id == 0) != (b.def.id == 0)) return b.def.id == 0;
    return a.memory_ops > b.memory_ops;
  });
  return out;
}

std::string MixName(const MixSpec& spec, const std::vector<ClassSummary>& classes) {
  std::vector<std::string> parts;
  for (const ClassSummary& c : classes) {
    auto it = spec.by_class.find(c.def.id);
    if (it != spec.by_class.end()) parts.push_back(absl::StrCat(ShortName(c.def), "=", it->second));
  }
  if (parts.empty()) return kHeapPolicy;
  return absl::StrJoin(parts, ";");
}

std::string MixUnsafeReason(const MixSpec& spec, const std::vector<ClassSummary>& classes,
                            const std::map<std::string, allocators::AllocatorInfo>& infos,
                            HandOffs hand_offs) {
  // The classes and threads that reach each process-wide single-threaded pool.
  std::map<std::string, std::pair<std::vector<std::string>, std::set<uint32_t>>> reach;
  for (const ClassSummary& c : classes) {
    auto it = spec.by_class.find(c.def.id);
    if (it == spec.by_class.end() || it->second == kHeapPolicy) continue;
    const allocators::AllocatorInfo& info = infos.at(it->second);
    if (info.thread_safe) continue;
    if (c.shared_arenas > 0) {
      return absl::StrCat(it->second, " is not thread-safe, and ", c.shared_arenas, " of ",
                          ShortName(c.def), "'s arenas are used by several threads");
    }
    if (c.handed_off_arenas > 0 && hand_offs == HandOffs::kShared) {
      return absl::StrCat(it->second, " is not thread-safe, and ", c.handed_off_arenas, " of ",
                          ShortName(c.def),
                          "'s arenas pass from one thread to another (a replay's threads are "
                          "not ordered by the program's hand-off)");
    }
    if (!info.state_per_arena) {
      auto& [names, threads] = reach[it->second];
      names.push_back(ShortName(c.def));
      threads.insert(c.threads.begin(), c.threads.end());
    }
  }
  for (const auto& [policy, r] : reach) {
    if (r.second.size() > 1) {
      return absl::StrCat(policy, " keeps one pool for the process, and threads ",
                          absl::StrJoin(r.second, ", "), " reach it (through ",
                          absl::StrJoin(r.first, ", "), ")");
    }
  }
  return "";
}

std::vector<ClassVerdict> ClassRows(const std::vector<ClassSummary>& classes, bool search,
                                    double min_share) {
  std::vector<ClassVerdict> rows;
  for (const ClassSummary& c : classes) {
    ClassVerdict cv;
    cv.facts = c;
    cv.searched = search && c.def.id != 0 && c.share >= min_share;
    if (c.def.id == 0) {
      cv.note = "the global heap and unnamed arenas: the process's malloc";
    } else if (search && !cv.searched) {
      cv.note = absl::StrFormat("%.1f%% of the memory ops, below the %.0f%% searched: held",
                                100 * c.share, 100 * min_share);
    }
    rows.push_back(std::move(cv));
  }
  return rows;
}

std::string PolicyOf(const MixSpec& spec, uint32_t class_id) {
  auto it = spec.by_class.find(class_id);
  return it == spec.by_class.end() ? kHeapPolicy : it->second;
}

namespace {

bool IsMallocName(const std::string& name,
                  const std::map<std::string, allocators::AllocatorInfo>& infos) {
  auto it = infos.find(name);
  return name == "malloc" || name == kHeapPolicy ||
         (it != infos.end() && it->second.family == allocators::Family::kExternal);
}

}  // namespace

std::string AssignmentFor(const MixSpec& spec, const std::vector<ClassSummary>& classes,
                          const std::map<std::string, allocators::AllocatorInfo>& infos) {
  const bool rest_is_heap = IsMallocName(spec.rest, infos);
  std::string assignment;
  for (const ClassSummary& c : classes) {
    if (c.def.id == 0) continue;
    const std::string policy = PolicyOf(spec, c.def.id);
    if (policy != kHeapPolicy) {
      absl::StrAppend(&assignment, c.def.name, "=", policy, ";");
    } else if (!rest_is_heap) {
      absl::StrAppend(&assignment, c.def.name, "=std;");
    }
  }
  return absl::StrCat(assignment, "*=", rest_is_heap ? "std" : spec.rest);
}

std::string AdoptMix(const MixSpec& mix,
                     const std::map<std::string, allocators::AllocatorInfo>& infos,
                     const std::vector<ClassSummary>& classes, std::vector<ClassVerdict>& rows) {
  for (ClassVerdict& cv : rows) {
    cv.policy = cv.facts.def.id == 0 ? kHeapPolicy : PolicyOf(mix, cv.facts.def.id);
    if (cv.policy != kHeapPolicy) cv.adopt = infos.at(cv.policy).adopt;
    if (cv.facts.def.id != 0) cv.alias = AliasLine(cv.facts.def, cv.adopt);
  }
  return AssignmentFor(mix, classes, infos);
}

}  // namespace alloctrace
