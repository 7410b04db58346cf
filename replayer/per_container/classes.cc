#include "alloctrace/replayer/per_container/classes.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {
namespace {

constexpr uint32_t kNoThread = ~uint32_t{0};

bool IsMemoryOp(ReplayKind k) {
  return k == ReplayKind::kAlloc || k == ReplayKind::kAllocZeroed || k == ReplayKind::kFree ||
         k == ReplayKind::kRealloc;
}

std::string ShortName(const ClassDef& def) {
  std::string name = AliasName(def);
  return name.substr(0, name.size() - 5);  // less "Alloc"
}

}  // namespace

std::vector<ClassFacts> ClassFactsOf(const ReplayProgram& program) {
  std::map<uint32_t, ClassFacts> by_id;
  std::map<uint32_t, std::set<uint32_t>> threads;
  std::vector<uint32_t> first_thread(program.arena_limit, kNoThread);
  std::vector<uint8_t> shared(program.arena_limit, 0);
  auto class_of = [&](uint32_t arena) {
    return arena < program.arena_classes.size() ? program.arena_classes[arena] : 0;
  };
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const ReplayOp& op = program.ops[i];
    const uint32_t thread = program.op_threads.empty() ? 0 : program.op_threads[i];
    const uint32_t id = class_of(op.arena);
    ClassFacts& c = by_id[id];
    if (IsMemoryOp(op.kind)) ++c.memory_ops;
    if (op.arena >= first_thread.size()) continue;
    uint32_t& first = first_thread[op.arena];
    if (first == kNoThread) {
      first = thread;
      threads[id].insert(thread);
      if (op.arena != 0) ++c.arenas;
    } else if (first != thread && !shared[op.arena]) {
      shared[op.arena] = 1;
      ++c.shared_arenas;
      threads[id].insert(thread);
    } else if (first != thread) {
      threads[id].insert(thread);
    }
  }
  std::vector<ClassFacts> out;
  const double total = static_cast<double>(std::max<uint64_t>(1, program.memory_ops()));
  for (auto& [id, c] : by_id) {
    if (id == 0 && c.memory_ops == 0) continue;
    auto def = program.classes.find(id);
    c.def = def != program.classes.end() ? def->second : ClassDef{id, "", 0, false};
    c.def.id = id;
    c.share = static_cast<double>(c.memory_ops) / total;
    c.threads.assign(threads[id].begin(), threads[id].end());
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const ClassFacts& a, const ClassFacts& b) {
    if ((a.def.id == 0) != (b.def.id == 0)) return b.def.id == 0;
    return a.memory_ops > b.memory_ops;
  });
  return out;
}

std::string MixName(const MixSpec& spec, const std::vector<ClassFacts>& classes) {
  std::vector<std::string> parts;
  for (const ClassFacts& c : classes) {
    auto it = spec.by_class.find(c.def.id);
    if (it != spec.by_class.end()) parts.push_back(absl::StrCat(ShortName(c.def), "=", it->second));
  }
  if (parts.empty()) return kHeapPolicy;
  return absl::StrJoin(parts, ";");
}

std::string MixUnsafeReason(const MixSpec& spec, const std::vector<ClassFacts>& classes,
                            const std::map<std::string, allocators::AllocatorInfo>& infos) {
  // The classes and threads that reach each process-wide single-threaded pool.
  std::map<std::string, std::pair<std::vector<std::string>, std::set<uint32_t>>> reach;
  for (const ClassFacts& c : classes) {
    auto it = spec.by_class.find(c.def.id);
    if (it == spec.by_class.end()) continue;
    const allocators::AllocatorInfo& info = infos.at(it->second);
    if (info.thread_safe) continue;
    if (c.shared_arenas > 0) {
      return absl::StrCat(it->second, " is not thread-safe, and ", c.shared_arenas, " of ",
                          ShortName(c.def), "'s arenas are used by several threads");
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

}  // namespace alloctrace
