#include "alloctrace/inspect/class_stats.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/json.h"

namespace alloctrace {

ClassStatsBuilder::Arena& ClassStatsBuilder::Touch(uint32_t arena, uint32_t thread) {
  if (arena >= arenas_.size()) arenas_.resize(size_t{arena} + 1);
  Arena& a = arenas_[arena];
  a.used = true;
  if (a.thread == kNone) {
    a.thread = thread;
    classes_[a.class_id].threads.insert(thread);
  } else if (a.thread != thread) {
    // A thread that used the arena before, back after another: their uses
    // interleave. Else the arena passes to `thread` (a hand-off). `earlier`
    // holds each thread once (a thread in it is in its class's threads), so
    // a switch scans the threads that used the arena, never its switches:
    // a capture's one arena switches threads at nearly every event.
    if (std::find(a.earlier.begin(), a.earlier.end(), thread) != a.earlier.end()) {
      a.shared = true;
    } else {
      classes_[a.class_id].threads.insert(thread);
    }
    if (std::find(a.earlier.begin(), a.earlier.end(), a.thread) == a.earlier.end()) {
      a.earlier.push_back(a.thread);
    }
    a.thread = thread;
  }
  return a;
}

void ClassStatsBuilder::ArenaCreated(uint32_t arena, uint32_t class_id) {
  if (arena >= arenas_.size()) arenas_.resize(size_t{arena} + 1);
  arenas_[arena].class_id = class_id;
  arenas_[arena].used = true;
}

void ClassStatsBuilder::AllocIn(Arena& a, uint64_t bytes) {
  Class& c = classes_[a.class_id];
  ++c.blocks[bytes];
  c.live_bytes += bytes;
  c.peak_live_bytes = std::max(c.peak_live_bytes, c.live_bytes);
  a.frees_since_alloc = 0;
}

void ClassStatsBuilder::FreeIn(Arena& a, uint64_t bytes) {
  Class& c = classes_[a.class_id];
  c.live_bytes -= std::min(c.live_bytes, bytes);
  ++a.frees;
  ++a.frees_since_alloc;
}

void ClassStatsBuilder::Alloc(uint32_t arena, uint32_t thread, uint64_t bytes) {
  Arena& a = Touch(arena, thread);
  ++classes_[a.class_id].memory_ops;
  ++memory_ops_;
  AllocIn(a, bytes);
}

void ClassStatsBuilder::Free(uint32_t arena, uint32_t thread, uint64_t bytes) {
  Arena& a = Touch(arena, thread);
  ++classes_[a.class_id].memory_ops;
  ++memory_ops_;
  FreeIn(a, bytes);
}

void ClassStatsBuilder::Realloc(uint32_t old_arena, uint64_t old_bytes, uint32_t arena,
                                uint32_t thread, uint64_t bytes) {
  FreeIn(Touch(old_arena, thread), old_bytes);
  Arena& a = Touch(arena, thread);
  ++classes_[a.class_id].memory_ops;
  ++memory_ops_;
  AllocIn(a, bytes);
}

std::vector<ClassSummary> ClassStatsBuilder::Summarize(
    const absl::flat_hash_map<uint32_t, ClassDef>& table) const {
  std::map<uint32_t, ClassSummary> out;
  for (const Arena& a : arenas_) {
    if (!a.used) continue;
    ClassSummary& s = out[a.class_id];
    ++s.arenas;
    s.shared_arenas += a.shared;
    s.handed_off_arenas += !a.shared && !a.earlier.empty();
    // Frees before the arena's last allocation were made while in use.
    const uint64_t during_use = a.frees - a.frees_since_alloc;
    if (static_cast<double>(during_use) <= kBuiltOnceMaxChurn * static_cast<double>(a.frees)) {
      ++s.built_once_arenas;
    } else {
      ++s.churned_arenas;
    }
  }
  for (const auto& [id, c] : classes_) {
    ClassSummary& s = out[id];
    s.memory_ops = c.memory_ops;
    s.share = memory_ops_ == 0 ? 0.0 : static_cast<double>(c.memory_ops) / memory_ops_;
    s.peak_live_bytes = c.peak_live_bytes;
    s.threads.assign(c.threads.begin(), c.threads.end());
    for (const auto& [bytes, n] : c.blocks) s.allocs += n;
    if (!c.blocks.empty()) {
      s.min_block = c.blocks.begin()->first;
      s.max_block = c.blocks.rbegin()->first;
      uint64_t seen = 0;
      for (const auto& [bytes, n] : c.blocks) {
        seen += n;
        if (2 * seen >= s.allocs) {
          s.median_block = bytes;
          break;
        }
      }
    }
  }
  std::vector<ClassSummary> v;
  for (auto& [id, s] : out) {
    auto it = table.find(id);
    if (it != table.end()) s.def = it->second;
    s.def.id = id;
    v.push_back(std::move(s));
  }
  return v;
}

std::vector<uint32_t> ClassStatsBuilder::ArenaClasses() const {
  std::vector<uint32_t> out;
  for (const Arena& a : arenas_) {
    if (a.used) out.push_back(a.class_id);
  }
  return out;
}

ClassTableCheck CheckClassTable(const absl::flat_hash_map<uint32_t, ClassDef>& table,
                                const std::vector<uint32_t>& arena_classes) {
  ClassTableCheck out;
  const absl::flat_hash_set<uint32_t> used(arena_classes.begin(), arena_classes.end());
  const std::map<uint32_t, ClassDef> sorted(table.begin(), table.end());
  std::map<std::string, std::vector<uint32_t>> by_name;
  for (const auto& [id, def] : sorted) {
    if (used.contains(id)) {
      by_name[def.name].push_back(id);
    } else {
      out.notes.push_back(absl::StrCat("class ", id, " (\"", def.name,
                                       "\") is in the trace's class table, but no arena of it was "
                                       "created: it has no verdict"));
    }
  }
  for (const auto& [name, ids] : by_name) {  // ids ascending
    out.kept[ids[0]] = sorted.at(ids[0]);
    if (ids.size() == 1) continue;
    for (size_t i = 1; i < ids.size(); ++i) out.merged_into[ids[i]] = ids[0];
    out.notes.push_back(absl::StrCat(
        "classes ", absl::StrJoin(ids, ", "), " of the trace's class table are all named \"", name,
        "\": a replay takes them as one class, since ALLOCTRACE_POLICY and the alias lines name a "
        "class by its name (give their tags distinct names to tell them apart)"));
  }
  return out;
}

namespace {

std::string ClassName(const ClassSummary& c) { return c.def.id == 0 ? "(unnamed)" : c.def.name; }

std::string Blocks(const ClassSummary& c) {
  if (c.allocs == 0) return "-";
  if (c.min_block == c.max_block) return absl::StrCat(c.min_block);
  return absl::StrCat(c.min_block, "/", c.median_block, "/", c.max_block);
}

// Threads per arena: "2 of 3 shared", "one thread each", "4 of 5 handed
// off"; for one arena "one thread", "several threads" or "handed off".
std::string Threads(const ClassSummary& c) {
  if (c.arenas == 1) {
    return c.shared_arenas > 0       ? "several threads"
           : c.handed_off_arenas > 0 ? "handed off"
                                     : "one thread";
  }
  std::string o = c.shared_arenas == 0 ? (c.handed_off_arenas == 0 ? "one thread each" : "")
                                       : absl::StrCat(c.shared_arenas, " of ", c.arenas, " shared");
  if (c.handed_off_arenas > 0) {
    absl::StrAppend(&o, o.empty() ? "" : ", ", c.handed_off_arenas, " of ", c.arenas,
                    " handed off");
  }
  return o;
}

std::string Lifetime(const ClassSummary& c) {
  if (c.churned_arenas == 0) return "built once";
  if (c.built_once_arenas == 0) return "churned";
  return absl::StrCat(c.built_once_arenas, " built once, ", c.churned_arenas, " churned");
}

}  // namespace

std::vector<std::string> ClassHeaders() {
  return {"id",     "by",        "arenas",  "mem ops",  "share",
          "blocks", "peak live", "threads", "lifetime", "class"};
}

std::vector<std::string> ClassRow(const ClassSummary& c) {
  return {absl::StrCat(c.def.id),
          c.def.id == 0 ? "-" : (c.def.tagged ? "tag" : "type"),
          absl::StrCat(c.arenas),
          absl::StrCat(c.memory_ops),
          absl::StrFormat("%.1f%%", 100.0 * c.share),
          Blocks(c),
          absl::StrCat(c.peak_live_bytes),
          Threads(c),
          Lifetime(c),
          ClassName(c)};
}

std::string FormatClassTable(const std::vector<ClassSummary>& classes, bool has_class_table,
                             bool captured) {
  std::string o;
  if (!has_class_table) {
    const ClassSummary none;
    const ClassSummary& c = classes.empty() ? none : classes.front();
    absl::StrAppend(&o, "classes: one class (unnamed): ",
                    captured ? "a whole-program capture records every allocation in arena 0"
                             : "the trace has no class table (recorded before classes, or by "
                               "allocators that name none)",
                    "; ", c.arenas, c.arenas == 1 ? " arena, " : " arenas, ", c.memory_ops,
                    " memory ops, blocks of ", Blocks(c),
                    c.min_block == c.max_block ? " bytes" : " bytes (min/median/max)",
                    ", peak live ", c.peak_live_bytes, " bytes, ", Threads(c), ", ", Lifetime(c),
                    "\n");
    return o;
  }
  absl::StrAppend(&o, "classes: ", classes.size(),
                  " (tag names or value types as the compiler spells them; blocks: "
                  "min/median/max bytes; built once: at most 10% of an arena's frees before "
                  "its last allocation)\n");
  const std::vector<std::string> headers = ClassHeaders();
  auto line = [&o](const std::vector<std::string>& f) {
    absl::StrAppendFormat(&o, "  %-4s %-4s %7s %10s %6s %-17s %12s  %-18s %-26s %s\n", f[0], f[1],
                          f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]);
  };
  line(headers);
  for (const ClassSummary& c : classes) line(ClassRow(c));
  return o;
}

std::string FormatClassTableJson(const std::vector<ClassSummary>& classes) {
  std::vector<std::string> rows;
  for (const ClassSummary& c : classes) {
    rows.push_back(absl::StrCat(
        "{\"id\": ", c.def.id, ", \"name\": ", JsonString(c.def.name),
        ", \"tagged\": ", c.def.tagged ? "true" : "false", ", \"elem_size\": ", c.def.elem_size,
        ", \"arenas\": ", c.arenas, ", \"memory_ops\": ", c.memory_ops,
        ", \"share\": ", absl::StrFormat("%.4f", c.share), ", \"allocs\": ", c.allocs,
        ", \"min_block\": ", c.min_block, ", \"median_block\": ", c.median_block,
        ", \"max_block\": ", c.max_block, ", \"peak_live_bytes\": ", c.peak_live_bytes,
        ", \"shared_arenas\": ", c.shared_arenas, ", \"handed_off_arenas\": ", c.handed_off_arenas,
        ", \"built_once_arenas\": ", c.built_once_arenas,
        ", \"churned_arenas\": ", c.churned_arenas, "}"));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ",\n    "), "]");
}

}  // namespace alloctrace
