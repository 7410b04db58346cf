// Writer -> file -> reader round trips, and the reader against damaged files.
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/trace.pb.h"
#include "format/trace_format.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"

namespace alloctrace {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(testing::TempDir(), "/", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
}

// What a reader saw, in a form easy to compare.
struct Decoded {
  std::vector<Event> events;
  std::vector<Shape> shapes;
  bool footer = false;
  std::string cut_short;
};

absl::StatusOr<Decoded> ReadAll(const std::string& path) {
  auto reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  Decoded d;
  std::vector<Event> chunk;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&chunk);
    if (!more.ok()) return more.status();
    if (!*more) break;
    d.events.insert(d.events.end(), chunk.begin(), chunk.end());
  }
  d.shapes = (*reader)->shapes();
  d.footer = (*reader)->has_footer();
  d.cut_short = (*reader)->cut_short();
  return d;
}

// A reference event stream written through TraceWriter: a few arenas and
// threads, random sizes, random frees, a realloc or two.
void WriteRandomTrace(const std::string& path, uint64_t seed, int n, uint32_t chunk_events,
                      bool finish, std::vector<std::pair<OpKind, uint64_t>>* expected) {
  proto::Header header;
  header.set_workload("random_test");
  auto writer = TraceWriter::Create(path, header, chunk_events);
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> live;
  uint64_t next_addr = 0x10000;
  (*writer)->ArenaCreate(0, 7);
  (*writer)->ArenaCreate(0, 9);
  for (int i = 0; i < n; ++i) {
    const uint32_t thread = rng() % 3 == 0 ? 1 : 0;
    const uint32_t arena = rng() % 2 == 0 ? 7 : 9;
    if (live.empty() || rng() % 3 != 0) {
      const Shape shape{uint64_t{8} << (rng() % 4), 1 + rng() % 3, 8};
      next_addr += 4096;
      (*writer)->Alloc(thread, arena, next_addr, shape);
      live.push_back(next_addr);
      expected->push_back({OpKind::kAlloc, shape.bytes()});
    } else if (rng() % 10 == 0) {
      const size_t k = rng() % live.size();
      next_addr += 4096;
      const Shape shape{1, 100 + rng() % 100, 16};
      (*writer)->Realloc(thread, arena, live[k], next_addr, shape);
      live[k] = next_addr;
      expected->push_back({OpKind::kRealloc, shape.bytes()});
    } else {
      const size_t k = rng() % live.size();
      ASSERT_TRUE((*writer)->Free(thread, arena, live[k]));
      live[k] = live.back();
      live.pop_back();
      expected->push_back({OpKind::kFree, 0});
    }
  }
  (*writer)->ArenaDestroy(0, 9);
  if (finish) {
    ASSERT_TRUE((*writer)->Finish().ok());
  } else {
    ASSERT_TRUE((*writer)->FlushChunk().ok());
  }
}

std::vector<std::pair<OpKind, uint64_t>> Summarize(const Decoded& d) {
  std::vector<std::pair<OpKind, uint64_t>> out;
  for (const Event& e : d.events) {
    if (e.kind == OpKind::kAlloc || e.kind == OpKind::kRealloc) {
      out.push_back({e.kind, d.shapes[e.shape].bytes()});
    } else if (e.kind == OpKind::kFree) {
      out.push_back({e.kind, 0});
    }
  }
  return out;
}

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

// Every truncation point of a small trace: never a crash; either a clear
// error or a prefix of the events, chunk by chunk, flagged as cut short.
TEST(TraceDamageTest, EveryTruncationPoint) {
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
  // Hand-made chunks with bad ids.
  auto with_chunk = [&](const std::string& name, const proto::Chunk& chunk) {
    proto::Packet h;
    FillStandardHeader(h.mutable_header());
    std::string b;
    AppendFramedPacket(h, &b);
    proto::Packet c;
    *c.mutable_chunk() = chunk;
    AppendFramedPacket(c, &b);
    const std::string path = TempPath(name);
    WriteFile(path, b);
    return path;
  };
  auto op = [](OpKind k, uint64_t payload) {
    return (payload << kOpKindBits) | static_cast<uint64_t>(k);
  };
  {
    proto::Chunk c;
    c.add_shape_elem_size(8);
    c.add_shape_count(1);
    c.add_shape_align(8);
    c.add_ops(op(OpKind::kAlloc, 0));
    c.add_ops(op(OpKind::kFree, ZigZagEncode(0)));
    c.add_ops(op(OpKind::kFree, ZigZagEncode(0)));  // object 0 again
    expect_error(with_chunk("double_free.trace", c), "event 2: FREE of object 0, which is not live");
  }
  {
    proto::Chunk c;
    c.add_shape_elem_size(8);
    c.add_shape_count(1);
    c.add_shape_align(8);
    c.add_ops(op(OpKind::kAlloc, 1));  // explicit id 5
    c.add_ids(5);
    c.add_ops(op(OpKind::kAlloc, 1));  // explicit id 5 again
    c.add_ids(5);
    expect_error(with_chunk("double_alloc.trace", c), "ALLOC of object 5, which is already live");
  }
  {
    proto::Chunk c;
    c.add_ops(op(OpKind::kAlloc, 3 << 1));  // shape 3 of none
    expect_error(with_chunk("bad_shape.trace", c), "ALLOC of shape 3 but only 0 shapes");
  }
  {
    proto::Chunk c;
    c.set_first_event(10);
    expect_error(with_chunk("gap.trace", c), "a chunk is missing or repeated");
  }
  // A corrupt varint in a packet length: ten continuation bytes.
  {
    proto::Packet h;
    FillStandardHeader(h.mutable_header());
    std::string out;
    AppendFramedPacket(h, &out);
    out.push_back(static_cast<char>(kPacketTag));
    for (int i = 0; i < 11; ++i) out.push_back(static_cast<char>(0xff));
    const std::string path = TempPath("varint.trace");
    WriteFile(path, out);
    expect_error(path, "corrupt varint");
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
