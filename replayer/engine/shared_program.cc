// ShareReplayView / MapSharedReplayView (replay_program.h): a decoded
// program written once into a memfd (base/shared_arrays.h) that re-executed
// children map.
#include <algorithm>

#include "alloctrace/base/shared_arrays.h"
#include "alloctrace/replayer/engine/replay_program.h"

namespace alloctrace {
namespace {

constexpr uint64_t kProgramKind = 0x70726f6772616d34;  // "program4": its layout's version
constexpr char kWhat[] = "replay program";

}  // namespace

absl::StatusOr<int> ShareReplayView(const ReplayView& v) {
  uint64_t num_big = 0, num_reallocs = 0;
  for (size_t i = 0; i < v.num_ops; ++i) {
    if (v.ops[i].bytes == kBigSize) num_big = std::max<uint64_t>(num_big, v.ops[i].aux + 1);
    num_reallocs += v.ops[i].kind == ReplayKind::kRealloc;
  }
  return WriteSharedArrays(
      "alloctrace-replay", kWhat, kProgramKind,
      {v.object_limit, v.arena_limit, v.memory_ops, v.live_at_end},
      {SharedSection::Of(v.ops, v.num_ops), SharedSection::Of(v.big_sizes, num_big),
       SharedSection::Of(v.reallocs, num_reallocs),
       SharedSection::Of(v.arena_classes, v.arena_classes != nullptr ? v.arena_limit : 0)});
}

absl::StatusOr<ReplayView> MapSharedReplayView(int fd, bool populate) {
  absl::StatusOr<MappedArrays> m = MapSharedArrays(fd, kWhat, kProgramKind, populate);
  if (!m.ok()) return m.status();
  if (!m->Has(4, {sizeof(ReplayOp), sizeof(uint64_t), sizeof(ReallocInfo), sizeof(uint32_t)}) ||
      (m->sections[3].count != 0 && m->sections[3].count != m->scalars[1])) {
    return absl::InvalidArgumentError("shared replay program is malformed");
  }
  if (!populate) {
    for (size_t i = 1; i < m->sections.size(); ++i) m->Populate(i);
  }
  ReplayView v;
  v.ops = m->As<ReplayOp>(0);
  v.num_ops = m->sections[0].count;
  v.big_sizes = m->As<uint64_t>(1);
  v.reallocs = m->As<ReallocInfo>(2);
  v.arena_classes = m->sections[3].count != 0 ? m->As<uint32_t>(3) : nullptr;
  v.object_limit = static_cast<uint32_t>(m->scalars[0]);
  v.arena_limit = static_cast<uint32_t>(m->scalars[1]);
  v.memory_ops = m->scalars[2];
  v.live_at_end = m->scalars[3];
  return v;
}

}  // namespace alloctrace
