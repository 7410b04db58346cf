#include "alloctrace/format/call_sites.h"

#include "absl/strings/str_cat.h"
#include "alloctrace/format/wire.h"

namespace alloctrace {
namespace {

bool IsEvent(OpKind kind) {
  return kind != OpKind::kSetArena && kind != OpKind::kSetThread && kind != OpKind::kTimestamp;
}

// Walks the ops column, calling on_op(kind) for each; stops when it
// returns false or at the end (or a corrupt varint).
template <typename OnOp>
void ForEachOp(const ChunkColumns& chunk, OnOp&& on_op) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(chunk.ops.data());
  const uint8_t* const end = p + chunk.ops.size();
  while (p < end) {
    uint64_t op;
    if (!ReadVarint(&p, end, &op)) return;
    if (!on_op(static_cast<OpKind>(op & kOpKindMask))) return;
  }
}

}  // namespace

uint64_t CountAllocations(const ChunkColumns& chunk) {
  uint64_t n = 0;
  ForEachOp(chunk, [&](OpKind kind) {
    n += kind == OpKind::kAlloc || kind == OpKind::kRealloc;
    return true;
  });
  return n;
}

uint64_t EventIndexOfAllocation(const ChunkColumns& chunk, uint64_t n) {
  uint64_t events = 0, allocations = 0;
  ForEachOp(chunk, [&](OpKind kind) {
    if (kind == OpKind::kAlloc || kind == OpKind::kRealloc) {
      if (allocations++ == n) return false;
    }
    events += IsEvent(kind);
    return true;
  });
  return events;
}

absl::Status CallSiteTable::AddChunk(const ChunkColumns& chunk) {
  for (const ModuleDef& m : chunk.module_defs) {
    if (m.id != modules_.size() + 1) {
      return absl::DataLossError(absl::StrCat("module ", m.id, " (", m.path,
                                              ") is defined out of order: the next id is ",
                                              modules_.size() + 1));
    }
    if (m.end <= m.start) {
      return absl::DataLossError(
          absl::StrCat("module ", m.id, " (", m.path, ") has an empty address range"));
    }
    modules_.push_back(m);
  }
  for (const StackDef& s : chunk.stack_defs) {
    if (s.id != stacks_.size() + 1) {
      return absl::DataLossError(absl::StrCat(
          "stack ", s.id, " is defined out of order: the next id is ", stacks_.size() + 1));
    }
    if (s.pcs.empty() || s.pcs.size() > kMaxStackDepth) {
      return absl::DataLossError(absl::StrCat("stack ", s.id, " has ", s.pcs.size(),
                                              " frames (1 to ", kMaxStackDepth, " allowed)"));
    }
    if (s.modules.size() != s.pcs.size()) {
      return absl::DataLossError(absl::StrCat("stack ", s.id, " has ", s.pcs.size(), " pcs but ",
                                              s.modules.size(), " module references"));
    }
    for (size_t i = 0; i < s.modules.size(); ++i) {
      if (s.modules[i] > modules_.size()) {
        return absl::DataLossError(absl::StrCat("stack ", s.id, ", frame ", i, ": module ",
                                                s.modules[i], " is not defined (", modules_.size(),
                                                " are)"));
      }
    }
    stacks_.push_back(s);
  }
  if (chunk.site.empty()) return absl::OkStatus();
  for (size_t i = 0; i < chunk.site.size(); ++i) {
    if (chunk.site[i] > stacks_.size()) {
      return absl::DataLossError(absl::StrCat(
          "event ", chunk.first_event + EventIndexOfAllocation(chunk, i), ": call site ",
          chunk.site[i], " is not in the stack table (", stacks_.size(), " stacks defined)"));
    }
  }
  const uint64_t allocations = CountAllocations(chunk);
  if (allocations != chunk.site.size()) {
    return absl::DataLossError(absl::StrCat("the site column has ", chunk.site.size(),
                                            " entries for the chunk's ", allocations,
                                            " allocations"));
  }
  return absl::OkStatus();
}

}  // namespace alloctrace
