// The chunk decoder: every valid encoding of a chunk decodes alike, and
// hand-made chunks no writer produces are refused with the file, byte
// offset, event index and what is wrong.
#include "alloctrace/format/chunk_decoder.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/wire.h"
#include "alloctrace/proto/trace.pb.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::AddShape;
using testing_util::Op;
using testing_util::ReadAll;
using testing_util::WriteTrace;

// Decodes `chunk` (a trace of that one chunk) and expects an error
// containing `needle`.
void ExpectError(const std::string& name, const proto::Chunk& chunk, const std::string& needle) {
  const std::string path = WriteTrace(name, {chunk});
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok()) << "expected an error containing: " << needle;
  EXPECT_NE(d.status().message().find(needle), std::string::npos)
      << "wanted: " << needle << "\ngot:    " << d.status().message();
  EXPECT_NE(d.status().message().find(path), std::string::npos) << d.status();
}

TEST(ChunkDecoderTest, DoubleFree) {
  proto::Chunk c;
  AddShape(&c, 8, 1, 8);
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));  // object 0 again
  ExpectError("double_free.trace", c, "event 2: FREE of object 0, which is not live");
}

TEST(ChunkDecoderTest, DoubleAlloc) {
  proto::Chunk c;
  AddShape(&c, 8, 1, 8);
  c.add_ops(Op(OpKind::kAlloc, 0));  // object 0
  c.add_ops(Op(OpKind::kAlloc, 0));  // object 1
  c.add_ops(Op(OpKind::kAlloc, 1));  // explicit id 1 again
  c.add_ids(1);
  ExpectError("double_alloc.trace", c, "event 2: ALLOC of object 1, which is already live");
}

// The crafted traces of the hostile-input review, each refused or accepted
// with bounded state. Object ids are dense: an explicit id may be a freed
// one or the next unused one, nothing beyond.
TEST(ChunkDecoderTest, ExplicitIdBeyondTheDenseLimit) {
  proto::Chunk c;
  AddShape(&c, 16, 1, 8);
  c.add_ops(Op(OpKind::kAlloc, 1));
  c.add_ids((uint64_t{1} << 28) - 1);
  ExpectError("big_id.trace", c,
              "(chunk 0), event 0: ALLOC of object 268435455, beyond the limit of 0 (ids are "
              "dense: a freed id or the next unused one)");
}

TEST(ChunkDecoderTest, ExplicitIdsReuseFreedIds) {
  proto::Chunk c;
  AddShape(&c, 16, 1, 8);
  for (int i = 0; i < 3; ++i) c.add_ops(Op(OpKind::kAlloc, 0));  // 0 1 2
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));                 // 0
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(1)));                 // 1
  c.add_ops(Op(OpKind::kAlloc, 1));                              // explicit 0
  c.add_ids(0);
  c.add_ops(Op(OpKind::kAlloc, 1));  // explicit 3 (next unused)
  c.add_ids(3);
  c.add_ops(Op(OpKind::kAlloc, 0));  // implicit: 1 (0 is live again, skipped)
  c.add_ops(Op(OpKind::kAlloc, 0));  // implicit: 4
  auto d = ReadAll(WriteTrace("explicit_reuse.trace", {c}));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->events.size(), 9u);
  EXPECT_EQ(d->events[5].object, 0u);
  EXPECT_EQ(d->events[6].object, 3u);
  EXPECT_EQ(d->events[7].object, 1u);
  EXPECT_EQ(d->events[8].object, 4u);
}

TEST(ChunkDecoderTest, AnyThreadIdMapsToADenseIndex) {
  proto::Chunk c;
  AddShape(&c, 16, 1, 8);
  c.add_ops(Op(OpKind::kSetThread, 0xFFFFFFFFu));
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
  c.add_ops(Op(OpKind::kSetThread, 0));
  c.add_ops(Op(OpKind::kAlloc, 0));
  auto path = WriteTrace("thread_max.trace", {c});
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<Event> events;
  auto more = (*reader)->NextChunk(&events);
  ASSERT_TRUE(more.ok() && *more) << more.status();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].thread, 1u);
  EXPECT_EQ(events[2].thread, 0u);
  EXPECT_EQ((*reader)->thread_index_limit(), 2u);
  EXPECT_EQ((*reader)->threads_seen(), 2u);

  proto::Chunk wide;
  wide.add_ops(Op(OpKind::kSetThread, uint64_t{1} << 32));
  ExpectError("thread_wide.trace", wide,
              "event 0: SET_THREAD to 4294967296, over the limit of 4294967295 (32 bits)");
}

TEST(ChunkDecoderTest, AnyArenaIdMapsToADenseIndex) {
  proto::Chunk c;
  AddShape(&c, 16, 1, 8);
  const uint64_t big = (uint64_t{1} << 28) - 1;
  c.add_ops(Op(OpKind::kArenaCreate, big));
  c.add_ops(Op(OpKind::kSetArena, big));
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
  c.add_ops(Op(OpKind::kArenaDestroy, big));
  auto path = WriteTrace("arena_big.trace", {c});
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<Event> events;
  auto more = (*reader)->NextChunk(&events);
  ASSERT_TRUE(more.ok() && *more) << more.status();
  ASSERT_EQ(events.size(), 4u);
  for (const Event& e : events) EXPECT_EQ(e.arena, 1u);
  EXPECT_EQ((*reader)->arena_index_limit(), 2u);
  EXPECT_EQ((*reader)->arena_id(1), big);

  proto::Chunk zero;
  zero.add_ops(Op(OpKind::kArenaCreate, 0));
  ExpectError("arena_zero.trace", zero,
              "event 0: ARENA_CREATE of arena 0, which is the global heap");
  proto::Chunk unborn;
  AddShape(&unborn, 16, 1, 8);
  unborn.add_ops(Op(OpKind::kSetArena, 77));
  unborn.add_ops(Op(OpKind::kAlloc, 0));
  ExpectError("arena_unborn.trace", unborn, "event 0: ALLOC in arena 77, which is not live");
}

TEST(ChunkDecoderTest, SizeProductOverflow) {
  proto::Chunk c;
  AddShape(&c, uint64_t{1} << 33, uint64_t{1} << 31, 8);
  c.add_ops(Op(OpKind::kAlloc, 0));
  ExpectError("shape_overflow.trace", c,
              "(chunk 0), event 0: shape 0, defined with this chunk, is 8589934592 x 2147483648 "
              "bytes, over the limit of 140737488355328 bytes");
}

TEST(ChunkDecoderTest, AlignmentLimit) {
  proto::Chunk c;
  AddShape(&c, 16, 1, uint64_t{4} << 20);
  ExpectError("align.trace", c,
              "shape 0, defined with this chunk, has alignment 4194304, over "
              "the limit of 2097152");
  proto::Chunk ok;
  AddShape(&ok, 16, 1, uint64_t{2} << 20);
  ok.add_ops(Op(OpKind::kAlloc, 0));
  EXPECT_TRUE(ReadAll(WriteTrace("align_ok.trace", {ok})).ok());
}

TEST(ChunkDecoderTest, UndefinedShape) {
  proto::Chunk c;
  c.add_ops(Op(OpKind::kAlloc, 3 << 1));  // shape 3 of none
  ExpectError("bad_shape.trace", c, "ALLOC of shape 3 but only 0 shapes");
}

TEST(ChunkDecoderTest, MissingChunk) {
  proto::Chunk c;
  c.set_first_event(10);
  ExpectError("gap.trace", c, "a chunk is missing or repeated");
}

TEST(ChunkDecoderTest, UnusedColumnValues) {
  proto::Chunk c;
  AddShape(&c, 8, 1, 8);
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_args(0);
  ExpectError("unused_args.trace", c, "unused values in its ids or args column");
}

// The same chunk as writers encode it (packed), unpacked, and with its ops
// column split in two records: all decode to the same events.
TEST(ChunkDecoderTest, AnyValidEncodingDecodesAlike) {
  std::vector<uint64_t> ops = {Op(OpKind::kAlloc, 0), Op(OpKind::kAlloc, 0),
                               Op(OpKind::kFree, ZigZagEncode(1)), Op(OpKind::kSetThread, 300),
                               Op(OpKind::kFree, ZigZagEncode(-1))};
  std::string packed;
  AppendPackedVarints(proto::Chunk::kOpsFieldNumber, ops, &packed);
  AppendPackedVarints(proto::Chunk::kShapeElemSizeFieldNumber, {24}, &packed);
  AppendPackedVarints(proto::Chunk::kShapeCountFieldNumber, {1}, &packed);
  AppendPackedVarints(proto::Chunk::kShapeAlignFieldNumber, {8}, &packed);

  std::string unpacked;
  for (uint64_t op : ops) {
    AppendVarint(WireTag(proto::Chunk::kOpsFieldNumber, WireType::kVarint), &unpacked);
    AppendVarint(op, &unpacked);
  }
  for (auto [field, v] : {std::pair<int, uint64_t>{proto::Chunk::kShapeElemSizeFieldNumber, 24},
                          {proto::Chunk::kShapeCountFieldNumber, 1},
                          {proto::Chunk::kShapeAlignFieldNumber, 8}}) {
    AppendVarint(WireTag(field, WireType::kVarint), &unpacked);
    AppendVarint(v, &unpacked);
  }

  std::string split;
  AppendPackedVarints(proto::Chunk::kShapeElemSizeFieldNumber, {24}, &split);
  AppendPackedVarints(proto::Chunk::kOpsFieldNumber, {ops[0], ops[1]}, &split);
  AppendPackedVarints(proto::Chunk::kShapeCountFieldNumber, {1}, &split);
  AppendPackedVarints(proto::Chunk::kOpsFieldNumber, {ops[2], ops[3], ops[4]}, &split);
  AppendPackedVarints(proto::Chunk::kShapeAlignFieldNumber, {8}, &split);

  std::vector<std::vector<Event>> decoded;
  for (const std::string* bytes : {&packed, &unpacked, &split}) {
    ChunkColumns columns;
    ASSERT_TRUE(ParseChunkColumns(*bytes, &columns).ok());
    ChunkDecoder decoder;
    std::vector<Event> events;
    const absl::Status s = decoder.Decode(columns, ChunkLocation{"mem", 0, 1, 0}, &events);
    ASSERT_TRUE(s.ok()) << s;
    decoded.push_back(events);
  }
  ASSERT_EQ(decoded[0].size(), 4u);
  EXPECT_EQ(decoded[0][3].object, 0u);
  for (const auto& events : decoded) {
    ASSERT_EQ(events.size(), decoded[0].size());
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].kind, decoded[0][i].kind);
      EXPECT_EQ(events[i].object, decoded[0][i].object);
      EXPECT_EQ(events[i].thread, decoded[0][i].thread);
    }
  }
}

// A known field in a wire type no writer gives it is refused, named, not
// skipped or misread as another kind (a changed tag byte in a chunk written
// before checksums); an unknown field of any wire type is skipped.
TEST(ChunkDecoderTest, KnownFieldOfTheWrongWireType) {
  auto parse = [](const std::string& bytes) {
    ChunkColumns columns;
    return ParseChunkColumns(bytes, &columns);
  };
  auto with = [](int field, WireType wire) {
    std::string bytes;
    AppendVarint(WireTag(field, wire), &bytes);
    if (wire == WireType::kFixed32) bytes.append(4, '\x01');
    if (wire == WireType::kFixed64) bytes.append(8, '\x01');
    if (wire == WireType::kVarint) bytes.push_back('\x01');
    if (wire == WireType::kLengthDelimited) bytes.append("\x01\x01", 2);
    return bytes;
  };
  for (const int field :
       {proto::Chunk::kOpsFieldNumber, proto::Chunk::kShapeCountFieldNumber,
        proto::Chunk::kFirstEventFieldNumber, proto::Chunk::kClassDefFieldNumber}) {
    for (const WireType wire : {WireType::kFixed32, WireType::kFixed64}) {
      const absl::Status s = parse(with(field, wire));
      EXPECT_FALSE(s.ok()) << field;
      EXPECT_NE(s.message().find(absl::StrCat("chunk field ", field, " has wire type ",
                                              static_cast<int>(wire), ", not ")),
                std::string::npos)
          << s;
    }
  }
  EXPECT_NE(parse(with(proto::Chunk::kClassDefFieldNumber, WireType::kVarint))
                .message()
                .find("not length-delimited"),
            std::string::npos);
  EXPECT_NE(parse(with(proto::Chunk::kFirstEventFieldNumber, WireType::kLengthDelimited))
                .message()
                .find("not varint"),
            std::string::npos);
  for (const WireType wire :
       {WireType::kVarint, WireType::kFixed32, WireType::kFixed64, WireType::kLengthDelimited}) {
    EXPECT_TRUE(parse(with(99, wire)).ok()) << static_cast<int>(wire);
  }
}

// Dense ids past the first 65,536 (a trace's millions of arenas) and
// sparse ones (any id a trace names) map alike, each to its index in
// order of first sight, whichever table holds it.
TEST(DenseIdMapTest, DenseAndSparseIdsMapInOrderOfFirstSight) {
  DenseIdMap m;
  for (uint32_t id = 0; id < 300'000; ++id) ASSERT_EQ(m.FindOrAdd(id), id);
  EXPECT_EQ(m.FindOrAdd(4'000'000'000u), 300'000u);  // far past 4x the ids: the hash map
  EXPECT_EQ(m.FindOrAdd(300'000), 300'001u);         // dense again, after a sparse one
  EXPECT_EQ(m.Find(299'999), 299'999u);
  EXPECT_EQ(m.Find(4'000'000'000u), 300'000u);
  EXPECT_EQ(m.Find(300'000), 300'001u);
  EXPECT_EQ(m.Find(300'001), DenseIdMap::kNone);
  EXPECT_EQ(m.Find(3'999'999'999u), DenseIdMap::kNone);
  // An id added to the hash map while beyond the table is found once the
  // table has grown past it.
  DenseIdMap late;
  EXPECT_EQ(late.FindOrAdd(100'000), 0u);  // beyond kDirect and 4x one id
  for (uint32_t id = 0; id < 100'000; ++id) ASSERT_EQ(late.FindOrAdd(id), id + 1);
  EXPECT_EQ(late.Find(100'000), 0u);
  EXPECT_EQ(late.FindOrAdd(100'000), 0u);
  EXPECT_EQ(late.size(), 100'001u);
}

}  // namespace
}  // namespace alloctrace
