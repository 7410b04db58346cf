// Checksums (Chunk.crc32c, Header.crc32c, Footer.crc32c): the writer gives
// every chunk, the header and the footer one; the reader refuses any of them
// with a changed byte, reads traces written before checksums as before, and
// still reads every complete chunk of a trace cut short.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/crc32c.h"
#include "alloctrace/format/packet_reader.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/wire.h"
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

// A packet of a trace file: where its frame lies, and its bytes (without
// the frame).
struct Packet {
  size_t begin = 0, end = 0;
  std::string bytes;
  bool is_chunk() const {
    return !bytes.empty() &&
           static_cast<uint8_t>(bytes[0]) ==
               WireTag(proto::Packet::kChunkFieldNumber, WireType::kLengthDelimited);
  }
};

std::vector<Packet> Packets(const std::string& path) {
  std::vector<Packet> out;
  auto in = PacketReader::Open(path);
  EXPECT_TRUE(in.ok()) << in.status();
  if (!in.ok()) return out;
  while (true) {
    absl::StatusOr<bool> got = (*in)->Next();
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || !*got) break;
    out.push_back({(*in)->packet_offset(), (*in)->offset(), std::string((*in)->packet())});
  }
  return out;
}

// A chunk packet's Chunk message, and where it starts in the packet.
std::pair<std::string, size_t> ChunkOf(const std::string& packet) {
  const auto* begin = reinterpret_cast<const uint8_t*>(packet.data());
  const uint8_t* p = begin + 1;
  uint64_t length = 0;
  EXPECT_TRUE(ReadVarint(&p, begin + packet.size(), &length));
  const size_t at = static_cast<size_t>(p - begin);
  EXPECT_EQ(at + length, packet.size());
  return {packet.substr(at), at};
}

// The packets framed again as a file, each chunk given as its message.
std::string Frame(const std::vector<std::string>& packets) {
  std::string out;
  for (const std::string& p : packets)
    AppendLengthDelimited(proto::Trace::kPacketFieldNumber, p, &out);
  return out;
}
std::string ChunkPacket(const std::string& chunk) {
  std::string out;
  AppendLengthDelimited(proto::Packet::kChunkFieldNumber, chunk, &out);
  return out;
}

void ExpectError(const std::string& path, const std::string& needle) {
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok()) << "expected an error containing: " << needle;
  EXPECT_NE(d.status().message().find(needle), std::string::npos)
      << "wanted: " << needle << "\ngot:    " << d.status().message();
}

// Each byte of packet `p` of the trace `bytes` changed by each single bit
// and by 0xff, written to `path` and read: on_error(pos, x, status) for
// every change the reader refuses; returns those it read, in words.
template <typename OnError>
std::vector<std::string> ChangeEachByte(const std::string& bytes, const Packet& p,
                                        const std::string& path, int* tried,
                                        const OnError& on_error) {
  std::vector<std::string> silent;
  for (size_t pos = p.begin; pos < p.end; ++pos) {
    for (const int x : {1, 2, 4, 8, 16, 32, 64, 128, 255}) {
      std::string damaged = bytes;
      damaged[pos] = static_cast<char>(damaged[pos] ^ x);
      WriteFile(path, damaged);
      ++*tried;
      auto d = ReadAll(path);
      if (d.ok()) {
        silent.push_back(absl::StrCat("byte ", pos, " ^ ", x, " (packet at ", p.begin,
                                      "): ", d->events.size(), " events, footer ", d->footer,
                                      ", cut short: ", d->cut_short));
        continue;
      }
      EXPECT_NE(d.status().message().find(path), std::string::npos) << d.status();
      on_error(pos, x, d.status());
    }
  }
  return silent;
}

TEST(ChunkChecksumTest, WriterChecksumsEveryChunkAndTheTraceRoundTrips) {
  const std::string path = TempPath("checksummed.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(path, 11, 2000, 300, /*finish=*/true, &expected));
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(path)));
  EXPECT_TRUE(trace.packet(0).header().chunks_have_crc32c());
  int chunks = 0;
  for (const Packet& p : Packets(path)) {
    if (!p.is_chunk()) continue;
    ++chunks;
    const std::string chunk = ChunkOf(p.bytes).first;
    const size_t n = chunk.size();
    ASSERT_GT(n, kChunkCrc32cFieldBytes);
    // The last 5 bytes: the tag, then the CRC32C of all before it.
    EXPECT_EQ(static_cast<uint8_t>(chunk[n - 5]), 0x75);
    const uint32_t stored = LoadFixed32(reinterpret_cast<const uint8_t*>(chunk.data()) + n - 4);
    EXPECT_EQ(stored, Crc32c(chunk.data(), n - 5));
    proto::Chunk parsed;
    ASSERT_TRUE(parsed.ParseFromString(chunk));
    EXPECT_TRUE(parsed.has_crc32c());
    EXPECT_EQ(parsed.crc32c(), stored);
  }
  EXPECT_EQ(chunks, 7);  // 2000 events and 3 of arenas, 300 a chunk
  auto d = ReadAll(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->footer);
  EXPECT_EQ(Summarize(*d), expected);
}

// Every byte of every chunk packet of a written trace, frame included,
// changed by each single bit and by 0xff: always an error naming the file,
// never a silent decode. Inside the bytes the checksum covers (and in the
// checksum itself) the error is the checksum's.
TEST(ChunkChecksumTest, EveryChangedByteOfAChunkIsAnError) {
  const std::string src = TempPath("flip_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(src, 12, 300, 60, /*finish=*/true, &expected));
  const std::string bytes = ReadFile(src);
  const std::string path = TempPath("flip.trace");
  int tried = 0, mismatches = 0;
  std::vector<std::string> silent;
  for (const Packet& p : Packets(src)) {
    if (!p.is_chunk()) continue;
    const size_t frame = p.end - p.begin - p.bytes.size();          // packet tag and length
    const size_t body = p.begin + frame + ChunkOf(p.bytes).second;  // the Chunk message
    const size_t tag = p.end - kChunkCrc32cFieldBytes;              // the checksum's tag
    const std::vector<std::string> read =
        ChangeEachByte(bytes, p, path, &tried, [&](size_t pos, int x, const absl::Status& s) {
          if (pos >= body && pos != tag) {
            EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos)
                << "byte " << pos << " ^ " << x << ": " << s;
          }
          mismatches += s.message().find("checksum mismatch") != std::string::npos;
        });
    silent.insert(silent.end(), read.begin(), read.end());
  }
  EXPECT_TRUE(silent.empty()) << silent.size() << " changes read without an error:\n"
                              << absl::StrJoin(silent, "\n");
  EXPECT_GT(tried, 9 * 300);
  EXPECT_GT(mismatches, tried * 9 / 10);
}

// `message` serialized and sealed with its checksum as the writer seals it,
// framed as the one `body_field` record of a packet.
std::string Sealed(google::protobuf::MessageLite& message, int body_field, uint8_t tag) {
  std::string body = message.SerializeAsString();
  AppendCrc32cField(tag, &body);
  std::string framed;
  AppendFramedPacketBody(body_field, body, &framed);
  return framed;
}

// Every byte of the header and footer packets of a written trace, frame
// included, changed by each single bit and by 0xff: always an error naming
// the file, never a trace read with other metadata (a workload name, a
// label, the program's recorded time) than was written. Headers and
// footers of several lengths, and varints of several lengths at their
// ends (the pid, the start time, the program's time), fixed so that every
// run changes the same bytes.
TEST(ChunkChecksumTest, EveryChangedByteOfTheHeaderOrFooterIsAnError) {
  const std::string src = TempPath("flip_ends_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(src, 16, 300, 100, /*finish=*/true, &expected));
  const std::string written = ReadFile(src);
  const std::vector<Packet> written_packets = Packets(src);
  ASSERT_GE(written_packets.size(), 3u);
  proto::Packet header_packet, footer_packet;
  ASSERT_TRUE(header_packet.ParseFromString(written_packets.front().bytes));
  ASSERT_TRUE(footer_packet.ParseFromString(written_packets.back().bytes));
  struct Variant {
    std::string workload;
    uint32_t pid;
    uint64_t start_ns, program_cpu_ns;
  };
  const std::vector<Variant> variants = {
      {"", 7, 1, 0},
      {"w", 300, uint64_t{1} << 40, 90},
      {std::string(40, 'w'), 70000, 1796000000000000000u, 1u << 20},
      {std::string(100, 'w'), 4194303, 1796000000123456789u, 123456789012u},
      {"simple_map", 1 << 21, 127, 1u << 27},
      {std::string(130, 'w'), 65535, 1u << 30, 5}};
  const std::string path = TempPath("flip_ends.trace");
  int tried = 0, mismatches = 0;
  std::vector<std::string> silent;
  for (const Variant& v : variants) {
    proto::Header header = header_packet.header();
    header.set_workload(v.workload);
    header.set_pid(v.pid);
    header.set_start_unix_ns(v.start_ns);
    header.clear_crc32c();
    proto::Footer footer = footer_packet.footer();
    footer.set_end_unix_ns(v.start_ns + 1);
    footer.set_program_cpu_ns(v.program_cpu_ns);
    footer.clear_crc32c();
    const std::string bytes =
        Sealed(header, proto::Packet::kHeaderFieldNumber, kHeaderCrc32cTag) +
        written.substr(written_packets.front().end,
                       written_packets.back().begin - written_packets.front().end) +
        Sealed(footer, proto::Packet::kFooterFieldNumber, kFooterCrc32cTag);
    WriteFile(src, bytes);
    ASSERT_TRUE(ReadAll(src).ok()) << v.workload.size();
    const std::vector<Packet> packets = Packets(src);
    for (const Packet* p : {&packets.front(), &packets.back()}) {
      const std::vector<std::string> read =
          ChangeEachByte(bytes, *p, path, &tried, [&](size_t, int, const absl::Status& s) {
            mismatches += s.message().find("checksum mismatch") != std::string::npos;
          });
      silent.insert(silent.end(), read.begin(), read.end());
    }
  }
  EXPECT_TRUE(silent.empty()) << silent.size() << " of " << tried
                              << " changes read without an error:\n"
                              << absl::StrJoin(silent, "\n");
  EXPECT_GT(mismatches, tried / 2);
}

// The header's and footer's errors, and the traces without their
// checksums that still read.
TEST(ChunkChecksumTest, HeaderAndFooterChecksums) {
  const std::string src = TempPath("ends_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(src, 17, 200, 100, /*finish=*/true, &expected));
  const std::vector<Packet> packets = Packets(src);
  ASSERT_EQ(packets.size(), 5u);  // header, 3 chunks, footer
  proto::Packet header, footer;
  ASSERT_TRUE(header.ParseFromString(packets[0].bytes));
  ASSERT_TRUE(footer.ParseFromString(packets[4].bytes));
  EXPECT_TRUE(header.header().has_crc32c());
  EXPECT_TRUE(footer.footer().has_crc32c());
  // Each ends with its tag and the CRC32C of the bytes before.
  for (const auto& [p, tag] :
       {std::pair{&packets[0], kHeaderCrc32cTag}, std::pair{&packets[4], kFooterCrc32cTag}}) {
    const std::string body = ChunkOf(p->bytes).first;  // the one record's bytes
    ASSERT_GT(body.size(), 5u);
    EXPECT_EQ(static_cast<uint8_t>(body[body.size() - 5]), tag);
    EXPECT_EQ(LoadFixed32(reinterpret_cast<const uint8_t*>(body.data()) + body.size() - 4),
              Crc32c(body.data(), body.size() - 5));
  }
  auto with = [&](const std::string& first, const std::string& last, const std::string& name) {
    std::vector<std::string> p;
    for (const Packet& q : packets) p.push_back(q.bytes);
    if (!first.empty()) p[0] = first;
    if (!last.empty()) p[4] = last;
    const std::string path = TempPath(name);
    WriteFile(path, Frame(p));
    return path;
  };
  // A changed field: the message names the packet and both checksums.
  proto::Packet renamed = header;
  renamed.mutable_header()->set_workload("random_tesT");  // same length, crc kept
  const std::string renamed_path = with(renamed.SerializeAsString(), "", "renamed.trace");
  ExpectError(renamed_path,
              "renamed.trace: byte 0 (header): checksum mismatch: the header's "
              "bytes changed after they were written (stored 0x");
  proto::Packet recounted = footer;
  recounted.mutable_footer()->set_program_cpu_ns(footer.footer().program_cpu_ns() + 1);
  ExpectError(with("", recounted.SerializeAsString(), "recounted.trace"),
              absl::StrCat("byte ", packets[4].begin,
                           " (footer): checksum mismatch: the footer's bytes changed"));
  // A footer without one, where the header has one: refused; a trace
  // written before checksums (neither has one) reads.
  proto::Packet bare_footer = footer;
  bare_footer.mutable_footer()->clear_crc32c();
  ExpectError(with("", bare_footer.SerializeAsString(), "bare_footer.trace"),
              "(footer): the footer has no checksum, though the header has one");
  proto::Packet old_header = header;
  old_header.mutable_header()->clear_crc32c();
  auto old = ReadAll(
      with(old_header.SerializeAsString(), bare_footer.SerializeAsString(), "old_ends.trace"));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(old->footer);
  EXPECT_EQ(Summarize(*old), expected);
  // A header packet holding more than its one record: refused, checksum or not.
  ExpectError(
      with(old_header.SerializeAsString() + std::string("\x18\x01", 2), "", "two_records.trace"),
      "damaged header: the packet at byte 0");
}

// The message names the file, the chunk's byte offset and index, and both
// checksums.
TEST(ChunkChecksumTest, MismatchMessage) {
  const std::string src = TempPath("message_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(src, 13, 300, 100, /*finish=*/true, &expected));
  const std::vector<Packet> packets = Packets(src);
  ASSERT_TRUE(packets[2].is_chunk());
  const Packet& p = packets[2];  // chunk 1
  std::string bytes = ReadFile(src);
  const size_t pos = (p.begin + p.end) / 2;
  bytes[pos] = static_cast<char>(bytes[pos] ^ 0x10);
  const std::string path = TempPath("message.trace");
  WriteFile(path, bytes);
  const std::string chunk =
      bytes.substr(p.end - ChunkOf(p.bytes).first.size(), ChunkOf(p.bytes).first.size());
  const uint32_t stored =
      LoadFixed32(reinterpret_cast<const uint8_t*>(chunk.data()) + chunk.size() - kFixed32Bytes);
  const uint32_t computed = Crc32c(chunk.data(), chunk.size() - kChunkCrc32cFieldBytes);
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            absl::StrFormat("%s: byte %d (chunk 1): checksum mismatch: the chunk's bytes changed "
                            "after they were written (stored 0x%08x, computed 0x%08x)",
                            path, p.begin, stored, computed));
}

// What the reader refuses besides a mismatch, and what it still reads.
TEST(ChunkChecksumTest, WhereTheChecksumMayBeAndWhenItMayBeMissing) {
  const std::string src = TempPath("rules_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(src, 14, 200, 100, /*finish=*/true, &expected));
  std::vector<std::string> packets;
  for (const Packet& p : Packets(src)) packets.push_back(p.bytes);
  ASSERT_EQ(packets.size(), 5u);  // header, 3 chunks, footer
  const std::string chunk = ChunkOf(packets[2]).first;
  const std::string unchecked = chunk.substr(0, chunk.size() - kChunkCrc32cFieldBytes);
  proto::Packet header;
  ASSERT_TRUE(header.ParseFromString(packets[0]));
  header.mutable_header()->set_chunks_have_crc32c(false);
  header.mutable_header()->clear_crc32c();
  const std::string old_header = header.SerializeAsString();
  auto with = [&](size_t index, const std::string& packet, const std::string& name,
                  const std::string& first = std::string()) {
    std::vector<std::string> p = packets;
    p[index] = packet;
    if (!first.empty()) p[0] = first;
    const std::string path = TempPath(name);
    WriteFile(path, Frame(p));
    return path;
  };

  // The checksum removed: refused where the header promises one...
  ExpectError(with(2, ChunkPacket(unchecked), "missing.trace"),
              "byte " + std::to_string(Packets(src)[2].begin) +
                  " (chunk 1): the chunk has no checksum, though the header says every chunk "
                  "has one");
  // ... read where it does not (as a trace written before checksums).
  EXPECT_TRUE(ReadAll(with(2, ChunkPacket(unchecked), "old.trace", old_header)).ok());
  // A wrong checksum is refused whatever the header says.
  std::string wrong = chunk;
  wrong.back() = static_cast<char>(wrong.back() ^ 1);
  ExpectError(with(2, ChunkPacket(wrong), "wrong_old.trace", old_header), "checksum mismatch");
  // Not the last field: the bytes after it would go unchecked.
  ExpectError(with(2, ChunkPacket(chunk + std::string("\x08\x00", 2)), "not_last.trace"),
              "the checksum field (crc32c, field 14) is not the chunk's last field: 2 bytes "
              "follow it");
  ExpectError(with(2, ChunkPacket(unchecked + "\x75\x01\x02"), "cut.trace", old_header),
              "the checksum field (crc32c, field 14) is cut short: 2 of its 4 bytes");
  ExpectError(with(2, ChunkPacket(unchecked + "\x70\x01"), "varint.trace", old_header),
              "the checksum field (crc32c, field 14) has wire type 0, not fixed32");
  // A chunk framed another way (here with an unknown Packet field after
  // it) is read through protobuf's re-encoding, which a checksum cannot
  // cover.
  ExpectError(with(2, ChunkPacket(chunk) + std::string("\x78\x01", 2), "reframed.trace"),
              "(chunk 1): the chunk has a checksum but is not framed as its packet's one "
              "Packet.chunk record");
  // The same without a checksum, in a trace written before them: read.
  EXPECT_TRUE(ReadAll(with(2, ChunkPacket(unchecked) + std::string("\x78\x01", 2),
                           "reframed_old.trace", old_header))
                  .ok());
}

// Traces written before checksums (the checked-in samples) read as before:
// no checksum promised, none present, every event up to the footer's count.
TEST(ChunkChecksumTest, TracesWithoutChecksumsStillRead) {
  int traces = 0;
  for (const char* name : {"simple_map", "order_book", "capture_sort", "thread_map_churn",
                           "records_by_value", "shared_ptr_new"}) {
    const std::string path = absl::StrCat("traces/", name, ".trace");
    auto reader = TraceReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_FALSE((*reader)->header().chunks_have_crc32c()) << path;
    for (const Packet& p : Packets(path)) {
      if (!p.is_chunk()) continue;
      proto::Chunk chunk;
      ASSERT_TRUE(chunk.ParseFromString(ChunkOf(p.bytes).first));
      EXPECT_FALSE(chunk.has_crc32c()) << path;
    }
    auto d = ReadAll(path);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->footer) << path;
    auto again = TraceReader::Open(path);
    ASSERT_TRUE(again.ok());
    ASSERT_TRUE(
        (*again)
            ->ForEachEvent([](const auto&) {}, [](const Event&) { return absl::OkStatus(); })
            .ok());
    EXPECT_EQ((*again)->events_read(), (*again)->footer().events()) << path;
    EXPECT_EQ((*again)->events_read(), d->events.size()) << path;
    ++traces;
  }
  EXPECT_EQ(traces, 6);
}

// A written trace cut at any byte after its header: every chunk complete
// before the cut is read, with no error, and the trace says it was cut.
TEST(ChunkChecksumTest, CutAnywhereKeepsEveryCompleteChunk) {
  const std::string src = TempPath("cut_src.trace");
  std::vector<std::pair<OpKind, uint64_t>> expected;
  ASSERT_TRUE(WriteRandomTrace(src, 15, 400, 80, /*finish=*/true, &expected));
  const std::string bytes = ReadFile(src);
  // Each chunk's end and its events.
  std::vector<std::pair<size_t, size_t>> chunk_ends;
  {
    auto reader = TraceReader::Open(src);
    ASSERT_TRUE(reader.ok());
    std::vector<Event> events;
    for (const Packet& p : Packets(src)) {
      if (!p.is_chunk()) continue;
      absl::StatusOr<bool> more = (*reader)->NextChunk(&events);
      ASSERT_TRUE(more.ok() && *more);
      chunk_ends.push_back({p.end, events.size()});
    }
  }
  ASSERT_EQ(chunk_ends.size(), 6u);
  const size_t header_end = Packets(src)[0].end;
  const std::string path = TempPath("cut.trace");
  for (size_t cut = header_end; cut < bytes.size(); ++cut) {
    WriteFile(path, bytes.substr(0, cut));
    size_t want = 0;
    for (const auto& [end, events] : chunk_ends) {
      if (end <= cut) want += events;
    }
    auto d = ReadAll(path);
    ASSERT_TRUE(d.ok()) << "cut at " << cut << ": " << d.status();
    EXPECT_FALSE(d->footer);
    EXPECT_FALSE(d->cut_short.empty());
    ASSERT_EQ(d->events.size(), want) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace alloctrace
