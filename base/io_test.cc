#include "alloctrace/base/io.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

class Pipe {
 public:
  Pipe() { EXPECT_EQ(::pipe2(fds_, O_CLOEXEC), 0); }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void CloseRead() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    fds_[0] = -1;
  }
  void CloseWrite() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(IoTest, WriteAllThenReadAllRoundTripsMoreThanAPipeHolds) {
  // 1 MiB does not fit in a pipe (64 KiB): the writer sees short writes and
  // blocks until the reader catches up.
  std::string data(1 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 % 251);
  Pipe p;
  int write_error = -1;
  size_t written = 0;
  std::thread writer([&] {
    write_error = WriteAll(p.write_fd(), data, &written);
    p.CloseWrite();
  });
  std::string got = "prefix:";
  EXPECT_EQ(ReadAll(p.read_fd(), &got), 0);
  writer.join();
  EXPECT_EQ(write_error, 0);
  EXPECT_EQ(written, data.size());
  EXPECT_EQ(got, "prefix:" + data);
}

void NoOp(int) {}

TEST(IoTest, WriteAllRetriesWritesInterruptedBySignals) {
  // A handler installed without SA_RESTART makes a blocked write(2) return
  // EINTR (or a short count): WriteAll must carry on.
  struct sigaction sa = {};
  sa.sa_handler = NoOp;
  sigemptyset(&sa.sa_mask);
  struct sigaction old;
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  const std::string data(1 << 20, 'x');
  Pipe p;
  int write_error = -1;
  std::thread writer([&] {
    write_error = WriteAll(p.write_fd(), data);
    p.CloseWrite();
  });
  for (int i = 0; i < 5; ++i) {  // the writer is blocked: the pipe is full
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pthread_kill(writer.native_handle(), SIGUSR1);
  }
  std::string got;
  EXPECT_EQ(ReadAll(p.read_fd(), &got), 0);
  writer.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(write_error, 0);
  EXPECT_EQ(got.size(), data.size());
}

TEST(IoTest, WriteAllReportsTheErrnoAndHowMuchWasWritten) {
  signal(SIGPIPE, SIG_IGN);
  Pipe p;
  p.CloseRead();
  size_t written = 123;
  EXPECT_EQ(WriteAll(p.write_fd(), "abc", &written), EPIPE);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(WriteAll(-1, "abc"), EBADF);
}

TEST(IoTest, EmptyWriteSucceedsWithoutTouchingTheDescriptor) {
  size_t written = 7;
  EXPECT_EQ(WriteAll(-1, "", &written), 0);
  EXPECT_EQ(written, 0u);
}

TEST(IoTest, ReadAllReportsTheErrno) {
  std::string out;
  EXPECT_EQ(ReadAll(-1, &out), EBADF);
  EXPECT_TRUE(out.empty());
}

TEST(IoTest, ReadAllReadsARegularFile) {
  const std::string path = std::string(::getenv("TEST_TMPDIR")) + "/io_test.txt";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(WriteAll(fd, "line 1\nline 2\n"), 0);
  ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  std::string out;
  EXPECT_EQ(ReadAll(fd, &out), 0);
  EXPECT_EQ(out, "line 1\nline 2\n");
  ::close(fd);
}

TEST(FileKindTest, NamesEachKind) {
  EXPECT_EQ(FileKind(S_IFREG), "");
  EXPECT_EQ(FileKind(S_IFDIR), "a directory");
  EXPECT_EQ(FileKind(S_IFCHR), "a character device");
  EXPECT_EQ(FileKind(S_IFIFO), "a FIFO");
}

}  // namespace
}  // namespace alloctrace
