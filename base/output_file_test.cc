#include "alloctrace/base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using ::testing::HasSubstr;

// A fresh directory of this test's own.
std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/output_file_", name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::string Read(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "<cannot open>";
  ReadAll(fd, &out);
  ::close(fd);
  return out;
}

void Write(const std::string& path, const std::string& text) {
  ASSERT_TRUE(WriteOutputFile(path, text).ok()) << path;
}

unsigned Mode(const std::string& path, bool follow = true) {
  struct stat st;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return 0;
  return st.st_mode;
}

TEST(CheckOutputFileTest, ANewFileInAWritableDirectoryIsFine) {
  const std::string dir = TempDir("new");
  EXPECT_TRUE(CheckOutputFile(dir + "/report.txt").ok());
  Write(dir + "/existing.txt", "old");
  EXPECT_TRUE(CheckOutputFile(dir + "/existing.txt").ok());
}

TEST(CheckOutputFileTest, SaysWhatIsWrongWithThePlace) {
  const std::string dir = TempDir("bad");
  // Each a condition of the place, not of the command line.
  const auto why = [](const std::string& path) {
    const absl::Status s = CheckOutputFile(path);
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << path << ": " << s;
    return std::string(s.message());
  };
  EXPECT_THAT(why(dir), HasSubstr("is a directory"));
  EXPECT_THAT(why(dir + "/missing/report.txt"),
              HasSubstr("its directory " + dir + "/missing: No such file or directory"));
  Write(dir + "/plain", "x");
  EXPECT_THAT(why(dir + "/plain/report.txt"), HasSubstr("Not a directory"));
  EXPECT_EQ(CheckOutputFile("").message(), "an empty output path");
}

TEST(CheckOutputFileTest, RefusesAnInputHoweverSpelled) {
  const std::string dir = TempDir("input");
  const std::string trace = dir + "/run.trace";
  Write(trace, "trace bytes");
  ASSERT_EQ(::symlink(trace.c_str(), (dir + "/link.trace").c_str()) == 0 || errno == EEXIST, true);
  for (const std::string& spelling : {trace, dir + "/./run.trace", dir + "/link.trace"}) {
    // A usage error: the command line names one file twice.
    const absl::Status s = CheckOutputFile(spelling, {"other.trace", trace});
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << spelling << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("is being read")) << spelling;
  }
  EXPECT_TRUE(CheckOutputFile(dir + "/report.txt", {trace}).ok());
}

TEST(WriteOutputFileTest, ReplacesARegularFileAndLeavesNoTemporary) {
  const std::string dir = TempDir("replace");
  const std::string path = dir + "/report.txt";
  Write(path, "first, longer text");
  Write(path, "second");
  EXPECT_EQ(Read(path), "second");
  EXPECT_FALSE(absl::StrContains(Read(path), "longer"));
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  EXPECT_NE(::access(tmp.c_str(), F_OK), 0);
}

TEST(WriteOutputFileTest, ThroughASymbolicLinkWritesItsTarget) {
  const std::string dir = TempDir("link");
  const std::string target = dir + "/target.txt", link = dir + "/link.txt";
  Write(target, "old");
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  Write(link, "new");
  EXPECT_TRUE(S_ISLNK(Mode(link, /*follow=*/false)));
  EXPECT_EQ(Read(target), "new");
}

// A device or a FIFO is written in place, never replaced by a regular file
// (as root, a rename over /dev/null would break it for the machine). A
// FIFO of the test's own stands for them.
TEST(WriteOutputFileTest, WritesAFifoInPlace) {
  const std::string dir = TempDir("fifo");
  const std::string fifo = dir + "/pipe";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_TRUE(CheckOutputFile(fifo).ok());
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  Write(fifo, "through the pipe");
  EXPECT_TRUE(S_ISFIFO(Mode(fifo)));
  char buf[64] = {};
  EXPECT_EQ(::read(reader, buf, sizeof buf), 16);
  EXPECT_EQ(std::string(buf), "through the pipe");
  ::close(reader);
  EXPECT_EQ(::access(absl::StrCat(fifo, ".tmp.", ::getpid()).c_str(), F_OK), -1);
}

TEST(WriteOutputFileTest, AFailureNamesThePath) {
  const std::string dir = TempDir("fail");
  const absl::Status s = WriteOutputFile(dir + "/missing/report.txt", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot write " + dir + "/missing/report.txt: No such file"));
}

// A full device on standard output (/dev/full, as a full disk) is an
// error, not a report silently lost.
TEST(WriteStandardOutputTest, AWriteErrorIsReturned) {
  if (!S_ISCHR(Mode("/dev/full"))) GTEST_SKIP() << "no /dev/full here";
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(full, 0);
  ASSERT_GE(::dup2(full, STDOUT_FILENO), 0);
  const absl::Status s = WriteStandardOutput(std::string(10000, 'x'));
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(full);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot write to standard output: No space left on device"));
  EXPECT_TRUE(WriteStandardOutput("").ok());
}

}  // namespace
}  // namespace alloctrace
