// The chunk decoder: every valid encoding of a chunk decodes alike, and
// hand-made chunks no writer produces are refused with the file, byte
// offset, event index and what is wrong.
#include "format/chunk_decoder.h"

#include <string>
#include <vector>

#include "format/test_util.h"
#include "format/trace_format.h"
#include "format/wire.h"
#include "gtest/gtest.h"
#include "proto/trace.pb.h"

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
  c.add_ops(Op(OpKind::kAlloc, 1));  // explicit id 5
  c.add_ids(5);
  c.add_ops(Op(OpKind::kAlloc, 1));  // explicit id 5 again
  c.add_ids(5);
  ExpectError("double_alloc.trace", c, "ALLOC of object 5, which is already live");
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
                               Op(OpKind::kFree, ZigZagEncode(1)),
                               Op(OpKind::kSetThread, 300), Op(OpKind::kFree, ZigZagEncode(-1))};
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

}  // namespace
}  // namespace alloctrace
