// Writer -> file -> reader round trips, and the reader against damaged
// files as a whole. Framing cases are in packet_reader_test, bad ops in
// chunk_decoder_test.
#include "alloctrace/format/trace_reader.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/proto/trace.pb.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::Decoded;
using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::Summarize;
using testing_util::TempPath;
using testing_util::WriteFile;
using testing_util::WriteRandomTrace;

TEST(TraceRoundTripTest, EventsComeBackInOrderAcrossChunks) {
  const std::string path = TempPath("roundtrip.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(path, 1, 5000, 333, /*finish=*/true, &expected);
  auto d = ReadAll(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->footer);
  EXPECT_TRUE(d->cut_short.empty());
  EXPECT_EQ(Summarize(*d), expected);
  // Arena create x2 + destroy x1 are events too.
  EXPECT_EQ(d->events.size(), expected.size() + 3);
}

TEST(TraceRoundTripTest, ObjectIdsStayBelowPeakLiveCount) {
  const std::string path = TempPath("ids.trace");
  proto::Header header;
  auto writer = TraceWriter::Create(path, header);
  ASSERT_TRUE(writer.ok());
  for (int round = 0; round < 100; ++round) {
    for (uint64_t a = 1; a <= 10; ++a) (*writer)->Alloc(0, 0, a * 64 + round * 4096, {16, 1, 8});
    for (uint64_t a = 1; a <= 10; ++a) (*writer)->Free(0, 0, a * 64 + round * 4096);
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<Event> events;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&events);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
  }
  EXPECT_EQ((*reader)->object_id_limit(), 10u);
  // 2000 events in about a byte each (plus header and footer).
  EXPECT_LT((*reader)->file_size(), 2000u + 300u);
}

TEST(TraceRoundTripTest, CallocShapesKeepTheirZeroedFlag) {
  const std::string path = TempPath("calloc.trace");
  auto writer = TraceWriter::Create(path, proto::Header());
  ASSERT_TRUE(writer.ok());
  (*writer)->Alloc(0, 0, 0x1000, Shape{8, 10, 16, /*zeroed=*/true});
  (*writer)->Alloc(0, 0, 0x2000, Shape{8, 10, 16, /*zeroed=*/false});
  ASSERT_TRUE((*writer)->Finish().ok());
  auto d = ReadAll(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->events.size(), 2u);
  EXPECT_TRUE(d->shapes[d->events[0].shape].zeroed);
  EXPECT_FALSE(d->shapes[d->events[1].shape].zeroed);
  EXPECT_NE(d->events[0].shape, d->events[1].shape);
}

TEST(TraceRoundTripTest, FileIsAValidTraceMessage) {
  const std::string path = TempPath("whole.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(path, 2, 1000, 100, true, &expected);
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(path)));
  ASSERT_GE(trace.packet_size(), 3);
  EXPECT_TRUE(trace.packet(0).has_header());
  EXPECT_EQ(trace.packet(0).header().magic(), kTraceMagic);
  EXPECT_TRUE(trace.packet(1).has_chunk());
  EXPECT_TRUE(trace.packet(trace.packet_size() - 1).has_footer());
  EXPECT_EQ(trace.packet(trace.packet_size() - 1).footer().events(), 1003u);
}

// The footer's counts are the writer's own: they must match what the
// chunks hold, across every kind of op (thread and arena switches,
// timestamps, reallocs, an allocation over a live address) and chunks.
TEST(TraceRoundTripTest, FooterCountsEveryOpAndEvent) {
  const std::string path = TempPath("counts.trace");
  auto writer = TraceWriter::Create(path, proto::Header(), /*chunk_events=*/7);
  ASSERT_TRUE(writer.ok());
  TraceWriter& w = **writer;
  w.ArenaCreate(0, 5);
  w.ArenaCreate(1, 6);
  for (uint64_t i = 0; i < 40; ++i) {
    const uint32_t thread = static_cast<uint32_t>(i % 3);
    if (i % 4 == 0) w.Timestamp(1000 * i);
    w.Alloc(thread, i % 2 == 0 ? 5 : 6, 0x1000 + 64 * i, {16, 1, 8});
    if (i % 5 == 0) w.Realloc(thread, 5, 0x1000 + 64 * i, 0x900000 + 64 * i, {32, 1, 8});
  }
  w.Alloc(0, 5, 0x1000 + 64 * 1, {16, 1, 8});  // over a live block: a free first
  EXPECT_FALSE(w.Free(2, 6, 0x77777770));      // unknown: no event
  w.ArenaDestroy(1, 6);
  ASSERT_TRUE(w.Finish().ok());
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(path)));
  uint64_t ops = 0;
  for (const proto::Packet& p : trace.packet()) {
    if (p.has_chunk()) ops += static_cast<uint64_t>(p.chunk().ops_size());
  }
  const proto::Footer& footer = trace.packet(trace.packet_size() - 1).footer();
  EXPECT_EQ(footer.ops(), ops);
  auto d = ReadAll(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(footer.events(), d->events.size());
  EXPECT_GT(ops, d->events.size());  // thread, arena and time ops too
  EXPECT_GT(footer.chunks(), 1u);
}

TEST(TraceRoundTripTest, CutShortRecordingKeepsCompleteChunks) {
  const std::string path = TempPath("cut.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(path, 3, 1000, 100, /*finish=*/false, &expected);
  auto d = ReadAll(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->footer);
  EXPECT_NE(d->cut_short.find("no footer"), std::string::npos) << d->cut_short;
  EXPECT_EQ(Summarize(*d), expected);
}

// Flipped bytes anywhere: an error that names the file, or a valid decode;
// never a crash or hang (ASan and UBSan watch the decode).
TEST(TraceDamageTest, FlippedBytes) {
  const std::string full_path = TempPath("flip_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(full_path, 5, 400, 50, true, &expected);
  const std::string bytes = ReadFile(full_path);
  const std::string path = TempPath("flipped.trace");
  std::mt19937_64 rng(99);
  int errors = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    std::string damaged = bytes;
    damaged[pos] = static_cast<char>(damaged[pos] ^ (1 << (rng() % 8)));
    WriteFile(path, damaged);
    auto d = ReadAll(path);
    if (!d.ok()) {
      ++errors;
      EXPECT_NE(d.status().message().find(path), std::string::npos) << d.status();
    }
  }
  EXPECT_GT(errors, static_cast<int>(bytes.size() / 4));
}

// A chunk packet's length changed so that it runs past the end of the
// file: where the file ends with a footer that is a damaged length, not a
// recording cut short (which would silently drop the chunks from there on).
TEST(TraceDamageTest, LengthPastTheEndOfAFileWithAFooter) {
  const std::string src = TempPath("length_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(src, 8, 300, 100, true, &expected);
  std::string bytes = ReadFile(src);
  // The second chunk's frame: its tag, then its length (two bytes).
  auto reader = TraceReader::Open(src);
  ASSERT_TRUE(reader.ok());
  std::vector<Event> events;
  ASSERT_TRUE(*(*reader)->NextChunk(&events));
  const size_t second = (*reader)->offset();
  ASSERT_EQ(static_cast<uint8_t>(bytes[second]), kPacketTag);
  ASSERT_GE(static_cast<uint8_t>(bytes[second + 1]), 0x80);
  bytes[second + 2] = static_cast<char>(bytes[second + 2] ^ 0x40);  // 8 KiB more
  const std::string path = TempPath("length.trace");
  WriteFile(path, bytes);
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(
      d.status().message().find(absl::StrCat(
          path, ": byte ", second, " (packet 2): file ends inside the packet at byte ", second)),
      std::string::npos)
      << d.status();
  EXPECT_NE(d.status().message().find(
                "yet the file ends with a footer (4 chunks): the packet's length changed after it "
                "was written, not a recording cut short"),
            std::string::npos)
      << d.status();
  // Without the footer it is what a cut looks like: the first chunk is read.
  while (*(*reader)->NextChunk(&events) && (*reader)->chunks_read() < 4) {
  }
  ASSERT_EQ((*reader)->chunks_read(), 4u);
  const size_t footer = (*reader)->offset();                        // the end of the last chunk
  ASSERT_TRUE((*TraceReader::Open(src))->NextChunk(&events).ok());  // the first chunk again
  WriteFile(path, bytes.substr(0, footer));
  d = ReadAll(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->events.size(), events.size());
  EXPECT_NE(d->cut_short.find("file ends inside the packet"), std::string::npos) << d->cut_short;
}

TEST(TraceDamageTest, ClearErrors) {
  const std::string good = TempPath("good.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  WriteRandomTrace(good, 6, 50, 1000, true, &expected);
  const std::string bytes = ReadFile(good);

  auto expect_error = [](const std::string& path, const std::string& needle) {
    auto d = ReadAll(path);
    ASSERT_FALSE(d.ok()) << "expected an error containing: " << needle;
    EXPECT_NE(d.status().message().find(needle), std::string::npos)
        << "wanted: " << needle << "\ngot:    " << d.status().message();
  };

  expect_error(TempPath("does_not_exist.trace"), "cannot open");
  const std::string empty = TempPath("empty.trace");
  WriteFile(empty, "");
  expect_error(empty, "file is empty");
  const std::string text = TempPath("text.trace");
  WriteFile(text, "hello, this is not a trace\n");
  expect_error(text, "not an alloctrace trace");

  // A header with another magic.
  {
    proto::Packet p;
    p.mutable_header()->set_magic("perfetto");
    p.mutable_header()->set_format_version(1);
    std::string b;
    AppendFramedPacket(p, &b);
    const std::string path = TempPath("magic.trace");
    WriteFile(path, b);
    expect_error(path, "not an alloctrace trace");
  }
  // A newer format.
  {
    proto::Packet p;
    p.mutable_header()->set_magic(kTraceMagic);
    p.mutable_header()->set_format_version(kFormatVersion + 1);
    std::string b;
    AppendFramedPacket(p, &b);
    const std::string path = TempPath("newer.trace");
    WriteFile(path, b);
    expect_error(path, "newer than this reader");
  }
  // Something after the footer.
  {
    const std::string path = TempPath("trailing.trace");
    WriteFile(path, bytes + "xyz");
    expect_error(path, "3 unexpected bytes after the footer");
  }
}

}  // namespace
}  // namespace alloctrace
