#include "alloctrace/base/scoped_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(ScopedFdTest, ClosesWhatItHoldsWhenItGoes) {
  int fd = -1;
  {
    ScopedFd f(open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(f.valid());
    fd = f.get();
    EXPECT_TRUE(IsOpen(fd));
  }
  EXPECT_FALSE(IsOpen(fd));
}

TEST(ScopedFdTest, MovesOwnershipAndReleasesWithoutClosing) {
  ScopedFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int fd = a.get();
  ScopedFd b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(b.get(), fd);
  ScopedFd c;
  c = std::move(b);
  EXPECT_EQ(c.get(), fd);
  EXPECT_EQ(c.Release(), fd);
  EXPECT_FALSE(c.valid());
  EXPECT_TRUE(IsOpen(fd));  // released, not closed
  close(fd);
}

TEST(ScopedFdTest, ResetClosesTheOldOne) {
  ScopedFd f(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int old = f.get();
  f.Reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
  EXPECT_TRUE(f.valid());
  if (f.get() != old) {
    EXPECT_FALSE(IsOpen(old));
  }
  f.Reset();
  EXPECT_FALSE(f.valid());
}

TEST(PipeTest, BothEndsCloseOnExecAndCarryBytes) {
  absl::StatusOr<Pipe> p = Pipe::Make();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(fcntl(p->read.get(), F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(fcntl(p->write.get(), F_GETFD) & FD_CLOEXEC);
  ASSERT_EQ(write(p->write.get(), "x", 1), 1);
  p->write.Reset();  // the reader then sees the end
  char buf[2];
  EXPECT_EQ(read(p->read.get(), buf, 2), 1);
  EXPECT_EQ(read(p->read.get(), buf, 2), 0);
}

}  // namespace
}  // namespace alloctrace
