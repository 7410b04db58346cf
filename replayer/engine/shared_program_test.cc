// ShareReplayView and MapSharedReplayView: the program a parent shares with
// its re-executed children.
#include <sys/resource.h>
#include <unistd.h>

#include "alloctrace/replayer/engine/replay_program.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(SharedProgramTest, MapsBackWhatWasShared) {
  auto p = LoadReplayProgram("traces/simple_map.trace");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<int> fd = ShareReplayView(ViewOf(*p));
  ASSERT_TRUE(fd.ok()) << fd.status();
  absl::StatusOr<ReplayView> v = MapSharedReplayView(*fd);
  close(*fd);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->num_ops, p->ops.size());
  EXPECT_EQ(v->memory_ops, p->memory_ops());
  EXPECT_EQ(v->object_limit, p->object_limit);
  EXPECT_EQ(v->arena_limit, p->arena_limit);
  EXPECT_EQ(v->live_at_end, p->live_at_end);
  for (size_t i = 0; i < v->num_ops; ++i) {
    ASSERT_EQ(v->ops[i].object, p->ops[i].object) << i;
    ASSERT_EQ(v->ops[i].bytes, p->ops[i].bytes) << i;
    ASSERT_EQ(v->ops[i].kind, p->ops[i].kind) << i;
  }
}

// A failure is a status naming the call, not -1 and an errno to be read
// later: with no file descriptor left, memfd_create fails.
TEST(SharedProgramTest, FailureIsAStatusThatSaysWhy) {
  ReplayProgram p;
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit none = saved;
  none.rlim_cur = 0;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &none), 0);
  absl::StatusOr<int> fd = ShareReplayView(ViewOf(p));
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(fd.status().message(),
            "cannot share the replay program: memfd_create: Too many open files");
}

TEST(SharedProgramTest, AnFdWithoutAProgramIsRefused) {
  EXPECT_FALSE(MapSharedReplayView(-1).ok());
}

}  // namespace
}  // namespace alloctrace
