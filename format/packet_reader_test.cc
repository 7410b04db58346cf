// The framing layer: truncation anywhere is "cut short" (or, before a
// header is complete, "not a trace"), corrupt framing is an error.
#include "alloctrace/format/packet_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/proto/trace.pb.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::Summarize;
using testing_util::TempPath;
using testing_util::WriteFile;
using testing_util::WriteRandomTrace;

TEST(PacketReaderTest, ReadsPacketsAndOffsets) {
  proto::Packet h;
  FillStandardHeader(h.mutable_header());
  std::string bytes;
  AppendFramedPacket(h, &bytes);
  const size_t first = bytes.size();
  AppendFramedPacketBody(proto::Packet::kChunkFieldNumber, "", &bytes);
  const std::string path = TempPath("two_packets.trace");
  WriteFile(path, bytes);
  auto in = PacketReader::Open(path);
  ASSERT_TRUE(in.ok()) << in.status();
  auto got = (*in)->Next();
  ASSERT_TRUE(got.ok() && *got);
  EXPECT_EQ((*in)->packet_offset(), 0u);
  got = (*in)->Next();
  ASSERT_TRUE(got.ok() && *got);
  EXPECT_EQ((*in)->packet_offset(), first);
  EXPECT_EQ((*in)->packet().size(), 2u);  // tag and a zero length
  got = (*in)->Next();
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(*got);
  EXPECT_TRUE((*in)->cut_short().empty());
  EXPECT_EQ((*in)->offset(), bytes.size());
}

TEST(PacketReaderTest, CorruptLengthVarint) {
  proto::Packet h;
  FillStandardHeader(h.mutable_header());
  std::string out;
  AppendFramedPacket(h, &out);
  out.push_back(static_cast<char>(kPacketTag));
  for (int i = 0; i < 11; ++i) out.push_back(static_cast<char>(0xff));
  const std::string path = TempPath("varint.trace");
  WriteFile(path, out);
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("corrupt varint"), std::string::npos) << d.status();
}

TEST(PacketReaderTest, NotATag) {
  proto::Packet h;
  FillStandardHeader(h.mutable_header());
  std::string out;
  AppendFramedPacket(h, &out);
  const size_t at = out.size();
  out += "\x07zz";
  const std::string path = TempPath("not_a_tag.trace");
  WriteFile(path, out);
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find(absl::StrCat("byte ", at)), std::string::npos) << d.status();
  EXPECT_NE(d.status().message().find("expected packet tag 0x0a, found 0x07"), std::string::npos)
      << d.status();
}

TEST(PacketReaderTest, DirectoryIsNotATrace) {
  auto in = PacketReader::Open(testing::TempDir());
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("not a regular file (a directory)"), std::string::npos)
      << in.status();
}

// A FIFO is refused at once: opening it for reading must not wait for a
// writer (without one, it would wait for ever).
TEST(PacketReaderTest, FifoIsNotATraceAndIsNotWaitedOn) {
  const std::string fifo = TempPath("pipe.trace");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto in = PacketReader::Open(fifo);
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find(fifo + ": not a regular file (a FIFO)"), std::string::npos)
      << in.status();
}

// A file the kernel makes reports a size of 0 and holds bytes: not a trace,
// and not "empty". /proc/self/status is on every Linux this builds on.
TEST(PacketReaderTest, KernelFileWithSizeZeroIsNotATrace) {
  struct stat st = {};
  ASSERT_EQ(::stat("/proc/self/status", &st), 0);
  ASSERT_EQ(st.st_size, 0);
  auto in = PacketReader::Open("/proc/self/status");
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("/proc/self/status: not a trace (its size reads 0 but it "
                                       "holds bytes"),
            std::string::npos)
      << in.status();
}

// Every truncation point of a small trace: never a crash; either a clear
// error or a prefix of the events, chunk by chunk, flagged as cut short.
TEST(PacketReaderTest, EveryTruncationPoint) {
  const std::string full_path = TempPath("full.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(full_path, 4, 300, 40, true, &expected);
  const std::string bytes = ReadFile(full_path);
  auto full = ReadAll(full_path);
  ASSERT_TRUE(full.ok());
  const auto full_summary = Summarize(*full);
  const std::string path = TempPath("truncated.trace");
  int errors = 0, prefixes = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    WriteFile(path, bytes.substr(0, len));
    auto d = ReadAll(path);
    if (!d.ok()) {
      ++errors;
      EXPECT_NE(d.status().message().find(path), std::string::npos) << d.status();
      continue;
    }
    ++prefixes;
    EXPECT_FALSE(d->footer) << "length " << len;
    EXPECT_FALSE(d->cut_short.empty());
    const auto got = Summarize(*d);
    ASSERT_LE(got.size(), full_summary.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), full_summary.begin())) << "length " << len;
  }
  EXPECT_GT(prefixes, 0);
  EXPECT_GT(errors, 0);  // the first bytes (no complete header) are not a trace
}

}  // namespace
}  // namespace alloctrace
