#include "alloctrace/base/output_file.h"

#include <dirent.h>
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

// Temporary files left in `dir`.
int Temporaries(const std::string& dir) {
  int n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) n += absl::StrContains(e->d_name, ".tmp.");
    ::closedir(d);
  }
  return n;
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
  EXPECT_EQ(Temporaries(dir), 0);
}

// A replaced file keeps its permissions: a report made private stays so.
TEST(WriteOutputFileTest, AReplacedFileKeepsItsMode) {
  const std::string dir = TempDir("mode");
  const std::string path = dir + "/private.txt";
  Write(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  Write(path, "new");
  EXPECT_EQ(Mode(path) & 07777, 0600u);
  EXPECT_EQ(Read(path), "new");
}

// A link whose target is not made yet: the target is written, the link
// stays a link.
TEST(WriteOutputFileTest, ADanglingLinkGetsItsTargetWritten) {
  const std::string dir = TempDir("dangling");
  const std::string target = dir + "/later.txt", link = dir + "/now.txt";
  ::unlink(target.c_str());
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink("later.txt", link.c_str()), 0);  // relative, as ln -s makes it
  EXPECT_TRUE(CheckOutputFile(link).ok());
  Write(link, "through the link");
  EXPECT_TRUE(S_ISLNK(Mode(link, /*follow=*/false)));
  EXPECT_EQ(Read(target), "through the link");
  EXPECT_EQ(ResolveOutputPath(link), ResolveOutputPath(target));
}

// /dev/stdout and its kin are descriptors, written as they are: a file
// opened for appending (a shell's >>) keeps what it held.
TEST(WriteOutputFileTest, ADescriptorIsWrittenAsItIs) {
  EXPECT_EQ(OutputDescriptor("/dev/stdout"), 1);
  EXPECT_EQ(OutputDescriptor("/dev/stderr"), 2);
  EXPECT_EQ(OutputDescriptor("/dev/fd/7"), 7);
  EXPECT_EQ(OutputDescriptor("/proc/self/fd/9"), 9);
  EXPECT_EQ(OutputDescriptor("/dev/fdx"), -1);
  EXPECT_EQ(OutputDescriptor("/dev/fd/x"), -1);
  const std::string dir = TempDir("fd");
  const std::string log = dir + "/log";
  Write(log, "header\n");
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string name = absl::StrCat("/dev/fd/", fd);
  EXPECT_TRUE(CheckOutputFile(name).ok());
  EXPECT_TRUE(WriteOutputFile(name, "report\n").ok());
  ::close(fd);
  EXPECT_EQ(Read(log), "header\nreport\n");
  EXPECT_TRUE(S_ISREG(Mode(log, /*follow=*/false)));
  // One not open for writing is said at once.
  const int reader = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  EXPECT_THAT(std::string(CheckOutputFile(absl::StrCat("/dev/fd/", reader)).message()),
              HasSubstr("is not open for writing"));
  ::close(reader);
}

// Two outputs that land in one file, however spelled, are found; standard
// output ("") and distinct files are not.
TEST(FindRepeatedOutputTest, FindsOneFileNamedTwice) {
  const std::string dir = TempDir("repeat");
  Write(dir + "/a.json", "x");
  ::unlink((dir + "/link.json").c_str());
  ASSERT_EQ(::symlink("a.json", (dir + "/link.json").c_str()), 0);
  EXPECT_EQ(FindRepeatedOutput({dir + "/a.json", dir + "/b.csv"}), std::string::npos);
  EXPECT_EQ(FindRepeatedOutput({"", ""}), std::string::npos);
  EXPECT_EQ(FindRepeatedOutput({dir + "/a.json", "", dir + "/./a.json"}), 2u);
  EXPECT_EQ(FindRepeatedOutput({dir + "/link.json", dir + "/a.json"}), 1u);
  EXPECT_EQ(FindRepeatedOutput(
                {dir + "/new.md", dir + "/../" + dir.substr(dir.rfind('/') + 1) + "/new.md"}),
            1u);
  EXPECT_EQ(FindRepeatedOutput({"/dev/stdout", "/dev/stdout"}), 1u);
}

// What would stop the rename at the end stops the check at the start: a
// name too long once the temporary file's suffix is added.
TEST(CheckOutputFileTest, ANameTooLongIsSaidBeforeTheWork) {
  const std::string dir = TempDir("long");
  const absl::Status s = CheckOutputFile(dir + "/" + std::string(250, 'r'));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("File name too long"));
  EXPECT_EQ(Temporaries(dir), 0);
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
  EXPECT_EQ(Temporaries(dir), 0);
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
