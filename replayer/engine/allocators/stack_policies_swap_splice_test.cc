// The Dr. Dobb's article notes that swap and list::splice need allocators
// that compare equal: with one pool per container (`stack` holding), a node
// freed into a pool other than the one that made it corrupts both. This test
// replays the checked-in swap_splice trace (maps swapped, lists spliced;
// every free recorded in the arena that allocated the node) through every
// registered allocator, the stack-holding ones above all, and checks what a
// replay must get right: every block keeps its contents until it is freed,
// no two live blocks overlap, and no block of an arena is touched after the
// arena is destroyed.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "gtest/gtest.h"

namespace alloctrace::allocators {
namespace {

unsigned char PatternByte(uint32_t object, size_t i) {
  return static_cast<unsigned char>(object * 131 + i * 7 + 1);
}

struct ReplayChecked {
  const ReplayProgram* program;
  int* stack_policies;
  int* checked;

  template <typename A>
  void operator()(const AllocatorInfo& info) {
    ++*checked;
    if (A::kArenaReleasesBlocks) ++*stack_policies;
    A allocator;
    std::vector<unsigned char*> ptrs(program->object_limit + 1, nullptr);
    std::vector<uint32_t> object_arena(program->object_limit + 1, 0);
    std::vector<uint8_t> arena_destroyed;
    std::map<uintptr_t, uintptr_t> live;  // start -> end
    size_t index = 0;
    for (const ReplayOp& op : program->ops) {
      const size_t bytes = op.bytes;
      const size_t align = size_t{1} << op.align_log2;
      if (op.arena >= arena_destroyed.size()) arena_destroyed.resize(op.arena + 1, 0);
      switch (op.kind) {
        case ReplayKind::kAlloc: {
          ASSERT_FALSE(arena_destroyed[op.arena]) << info.name << " op " << index;
          auto* p = static_cast<unsigned char*>(allocator.Allocate(bytes, align, op.arena));
          ASSERT_NE(p, nullptr) << info.name;
          const auto start = reinterpret_cast<uintptr_t>(p);
          auto next = live.lower_bound(start);
          ASSERT_TRUE(next == live.end() || next->first >= start + bytes)
              << info.name << ": overlap at op " << index;
          ASSERT_TRUE(next == live.begin() || std::prev(next)->second <= start)
              << info.name << ": overlap at op " << index;
          live.emplace(start, start + bytes);
          for (size_t i = 0; i < bytes; ++i) p[i] = PatternByte(op.object, i);
          ptrs[op.object] = p;
          object_arena[op.object] = op.arena;
          break;
        }
        case ReplayKind::kFree: {
          unsigned char* p = ptrs[op.object];
          ASSERT_NE(p, nullptr) << info.name << " op " << index;
          ASSERT_EQ(op.arena, object_arena[op.object]) << info.name << " op " << index;
          ASSERT_FALSE(arena_destroyed[op.arena]) << info.name << " op " << index;
          for (size_t i = 0; i < bytes; ++i) {
            ASSERT_EQ(p[i], PatternByte(op.object, i))
                << info.name << ": object " << op.object << " damaged at byte " << i << ", op "
                << index;
          }
          live.erase(reinterpret_cast<uintptr_t>(p));
          allocator.Deallocate(p, bytes, align, op.arena);
          ptrs[op.object] = nullptr;
          break;
        }
        case ReplayKind::kArenaCreate:
          arena_destroyed[op.arena] = 0;
          allocator.ArenaCreated(op.arena);
          break;
        case ReplayKind::kArenaDestroy:
          arena_destroyed[op.arena] = 1;
          allocator.ArenaDestroyed(op.arena);
          break;
        default:
          FAIL() << "swap_splice has only allocs, frees and arena events; op " << index;
      }
      ++index;
    }
    EXPECT_TRUE(live.empty()) << info.name;
  }
};

TEST(StackPoliciesTest, EveryPolicyReplaysSwapsAndSplicesCorrectly) {
  absl::StatusOr<ReplayProgram> program = LoadReplayProgram("traces/swap_splice.trace");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_GT(program->arena_events, 8u);
  ASSERT_GT(program->frees, 10000u);
  int stack_policies = 0, checked = 0;
  ForEachAllocatorType(ReplayChecked{&*program, &stack_policies, &checked});
  EXPECT_EQ(checked, static_cast<int>(AllAllocators().size()));
  // 24 article pools with stack holding, slab and small_node with it, st and mt.
  EXPECT_EQ(stack_policies, 28);
}

}  // namespace
}  // namespace alloctrace::allocators
