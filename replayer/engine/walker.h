// Walker: Touch::kWalk's model of a program walking its containers.
//
// A replay times the allocator's calls; a program also walks the blocks it
// holds (a tree's descent on every insert, a lookup), and how fast it walks
// depends on where the allocator put them: nodes packed closer share cache
// lines and pages. The walker reads, after each allocation, the blocks a
// balanced tree over the same arena's live blocks would read on an insert:
// one block per level, floor(log2(live)) levels, level k chosen among the
// first 2^k blocks of the arena's live list (so the upper levels stay hot
// in the cache, as a tree's do, and the last ones land anywhere), each
// read's address depending on the previous read's value (a descent is a
// chain of dependent loads). The choices are the same for every allocator
// (a fixed seed, the trace's object ids), so only the blocks' places differ
// between two replays.
//
// The live lists are built in one array sized from the trace before the
// run (each arena's slice holds its peak live count), so nothing is
// allocated while a pass is timed. Blocks of 0 bytes are not walked.
//
// Thread-compatible: one walker per serialized replay.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_WALKER_H_
#define ALLOCTRACE_REPLAYER_ENGINE_WALKER_H_

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/types/span.h"
#include "alloctrace/replayer/engine/replay_program.h"

namespace alloctrace::replay_internal {

class Walker {
 public:
  explicit Walker(const ReplayView& program)
      : pos_(program.object_limit + 1, kNotListed),
        arena_of_(program.object_limit + 1, 0),
        begin_(program.arena_limit + 1, 0),
        size_(program.arena_limit, 0) {
    // Each arena's peak live count (an upper bound: every allocation counts).
    std::vector<uint32_t> live(program.arena_limit, 0);
    std::vector<uint32_t> peak(program.arena_limit, 0);
    std::vector<uint32_t> arena_of(program.object_limit + 1, kNotListed);
    size_t ri = 0;
    for (const ReplayOp& op : absl::MakeConstSpan(program.ops, program.num_ops)) {
      switch (op.kind) {
        case ReplayKind::kRealloc:
          Unlist(arena_of, live, program.reallocs[ri++].old_object);
          [[fallthrough]];
        case ReplayKind::kAlloc:
        case ReplayKind::kAllocZeroed:
          arena_of[op.object] = op.arena;
          if (++live[op.arena] > peak[op.arena]) peak[op.arena] = live[op.arena];
          break;
        case ReplayKind::kFree:
          Unlist(arena_of, live, op.object);
          break;
        default:
          break;
      }
    }
    for (uint32_t a = 0; a < program.arena_limit; ++a) begin_[a + 1] = begin_[a] + peak[a];
    list_.assign(begin_[program.arena_limit] + 1, 0);
    // Resident before the replay's baseline, as the pointer table is.
    std::memset(list_.data(), 0, list_.size() * sizeof(uint32_t));
  }

  // Every list emptied and the choices restarted: a pass starts with
  // nothing live.
  void Reset() {
    std::fill(size_.begin(), size_.end(), 0);
    std::fill(pos_.begin(), pos_.end(), kNotListed);
    rng_ = kSeed;
  }

  // `object` (of `bytes`, in `arena`) was allocated: walk the arena's
  // blocks as an insert into a tree of them would, then list it.
  inline __attribute__((always_inline)) void Allocated(uint32_t arena, uint32_t object,
                                                        size_t bytes, void* const* ptrs,
                                                        uint64_t& read_sink) {
    const uint32_t n = size_[arena];
    uint32_t* list = &list_[begin_[arena]];
    uint64_t chain = 0;
    for (uint32_t k = 1; (uint64_t{1} << k) <= n; ++k) {
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      const uint32_t i = static_cast<uint32_t>((rng_ ^ chain) & ((uint64_t{1} << k) - 1));
      chain = *static_cast<const volatile unsigned char*>(ptrs[list[i]]);
      read_sink += chain;
    }
    if (bytes == 0) {
      pos_[object] = kNotListed;
      return;
    }
    pos_[object] = n;
    arena_of_[object] = arena;
    list[n] = object;
    size_[arena] = n + 1;
  }

  // `object` is about to be freed: unlisted (the arena's last block takes
  // its place).
  inline __attribute__((always_inline)) void Freed(uint32_t object) {
    const uint32_t i = pos_[object];
    if (i == kNotListed) return;
    pos_[object] = kNotListed;
    const uint32_t arena = arena_of_[object];
    uint32_t* list = &list_[begin_[arena]];
    const uint32_t last = list[--size_[arena]];
    list[i] = last;
    if (last != object) pos_[last] = i;
  }

 private:
  static constexpr uint32_t kNotListed = ~uint32_t{0};
  static constexpr uint64_t kSeed = 0x9e3779b97f4a7c15u;

  static void Unlist(std::vector<uint32_t>& arena_of, std::vector<uint32_t>& live,
                     uint32_t object) {
    if (arena_of[object] == kNotListed) return;
    --live[arena_of[object]];
    arena_of[object] = kNotListed;
  }

  std::vector<uint32_t> pos_;       // per object: its index in its arena's list
  std::vector<uint32_t> arena_of_;  // per object: its arena
  std::vector<uint64_t> begin_;     // per arena: its slice of list_
  std::vector<uint32_t> size_;      // per arena: blocks listed
  std::vector<uint32_t> list_;
  uint64_t rng_ = kSeed;
};

}  // namespace alloctrace::replay_internal

#endif  // ALLOCTRACE_REPLAYER_ENGINE_WALKER_H_
