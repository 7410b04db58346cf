// The call-site walk on this test's own frames (built with frame pointers),
// the process-wide interning, and the parse of /proc/self/maps.
#include "alloctrace/tracer/call_sites.h"

#include <cstdint>
#include <vector>

#include "alloctrace/tracer/module_map.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// Each level is a real call (noinline, frame pointers): Inner's walk sees
// Middle's and Outer's return addresses.
__attribute__((noinline)) int Inner(uint64_t* pcs, int depth) {
  const int n = WalkFrames(__builtin_frame_address(0), pcs, depth);
  asm volatile("" ::: "memory");
  return n;
}
__attribute__((noinline)) int Middle(uint64_t* pcs, int depth) {
  const int n = Inner(pcs, depth);
  asm volatile("" ::: "memory");
  return n;
}
__attribute__((noinline)) int Outer(uint64_t* pcs, int depth) {
  const int n = Middle(pcs, depth);
  asm volatile("" ::: "memory");
  return n;
}

bool Within(uint64_t pc, const void* function) {
  const auto start = reinterpret_cast<uint64_t>(function);
  return pc > start && pc < start + 256;  // these functions are short
}

TEST(CallSitesTest, WalkFollowsTheFramePointers) {
  uint64_t pcs[kMaxRecordedDepth] = {};
  const int n = Outer(pcs, 8);
  ASSERT_GE(n, 3);
  EXPECT_TRUE(Within(pcs[0], reinterpret_cast<const void*>(&Middle)));
  EXPECT_TRUE(Within(pcs[1], reinterpret_cast<const void*>(&Outer)));
  EXPECT_LE(n, 8);
  EXPECT_EQ(Outer(pcs, 1), 1);  // the depth asked for, no more
}

// Garbage in the frame-pointer register: the walk stops, reading nothing
// outside the stack (-16 once wrapped past the bounds check and crashed
// python3 at exit).
TEST(CallSitesTest, WalkStopsAtFramesOffTheStack) {
  uint64_t pcs[kMaxRecordedDepth] = {};
  for (const uintptr_t garbage :
       {~uintptr_t{15}, ~uintptr_t{0} - 7, uintptr_t{8}, uintptr_t{0x1000}}) {
    volatile uintptr_t fake[2] = {garbage, 0x401234};
    EXPECT_EQ(WalkFrames(const_cast<const uintptr_t*>(fake), pcs, 8), 1);
    EXPECT_EQ(pcs[0], 0x401234u);
  }
  // A chain that points back down the stack, or into the middle of a word.
  volatile uintptr_t chain[4] = {0, 0x401234, 0, 0x405678};
  chain[0] = reinterpret_cast<uintptr_t>(&chain[0]) + 3;
  EXPECT_EQ(WalkFrames(const_cast<const uintptr_t*>(chain), pcs, 8), 1);
  chain[0] = reinterpret_cast<uintptr_t>(&chain[2]);
  chain[2] = reinterpret_cast<uintptr_t>(&chain[0]);  // a loop: not above the last frame
  EXPECT_EQ(WalkFrames(const_cast<const uintptr_t*>(chain), pcs, 8), 2);
  EXPECT_EQ(pcs[1], 0x405678u);
}

TEST(CallSitesTest, InterningGivesOneIdPerStack) {
  const uint64_t a[] = {0x1000, 0x2000, 0x3000};
  const uint64_t b[] = {0x1000, 0x2000};
  const uint32_t ida = InternStack(a, 3);
  const uint32_t idb = InternStack(b, 2);
  EXPECT_NE(ida, 0u);
  EXPECT_NE(ida, idb);
  EXPECT_EQ(InternStack(a, 3), ida);
  std::vector<uint64_t> frames;
  ASSERT_TRUE(StackFrames(ida, &frames));
  EXPECT_EQ(frames, (std::vector<uint64_t>{0x1000, 0x2000, 0x3000}));
  EXPECT_FALSE(StackFrames(0, &frames));
  EXPECT_FALSE(StackFrames(1u << 30, &frames));
}

TEST(ModuleMapTest, ParsesTheExecutableMappingsOfFiles) {
  const std::vector<ModuleMap::Mapping> m = ModuleMap::ParseMaps(
      "55d0a0000000-55d0a0001000 r--p 00000000 08:01 123 /usr/bin/prog\n"
      "55d0a0001000-55d0a0005000 r-xp 00001000 08:01 123 /usr/bin/prog\n"
      "7f0000000000-7f0000100000 r-xp 00028000 08:01 456 /lib/with space.so (deleted)\n"
      "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n"
      "7f1000000000-7f1000001000 rwxp 00000000 00:00 0\n"
      "garbage line\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].start, 0x55d0a0001000u);
  EXPECT_EQ(m[0].end, 0x55d0a0005000u);
  EXPECT_EQ(m[0].offset, 0x1000u);
  EXPECT_EQ(m[0].path, "/usr/bin/prog");
  EXPECT_EQ(m[1].path, "/lib/with space.so");
}

TEST(ModuleMapTest, FindsThisProgramsCode) {
  ModuleMap map;
  const uint32_t id = map.Find(reinterpret_cast<uint64_t>(&Inner));
  ASSERT_NE(id, 0u);
  EXPECT_NE(map.module(id).path.find("call_sites_test"), std::string::npos);
  EXPECT_EQ(map.module(id).build_id.size(), 20u);
  EXPECT_EQ(map.Find(8), 0u);  // no file's code
}

}  // namespace
}  // namespace alloctrace
