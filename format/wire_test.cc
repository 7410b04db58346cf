#include "format/wire.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "format/trace_format.h"
#include "gtest/gtest.h"
#include "proto/trace.pb.h"

namespace alloctrace {
namespace {

TEST(WireTest, VarintsRoundTrip) {
  const uint64_t values[] = {0, 1, 127, 128, 300, uint64_t{1} << 32,
                             std::numeric_limits<uint64_t>::max()};
  for (uint64_t v : values) {
    std::string s;
    AppendVarint(v, &s);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
    uint64_t got = 0;
    ASSERT_TRUE(ReadVarint(&p, p + s.size(), &got)) << v;
    EXPECT_EQ(got, v);
    EXPECT_EQ(p, reinterpret_cast<const uint8_t*>(s.data()) + s.size());
  }
}

TEST(WireTest, BadVarints) {
  uint64_t v;
  const uint8_t truncated[] = {0x80, 0x80};
  const uint8_t* p = truncated;
  EXPECT_FALSE(ReadVarint(&p, truncated + 2, &v));
  EXPECT_EQ(p, truncated);  // nothing consumed
  const std::vector<uint8_t> eleven(11, 0xff);
  p = eleven.data();
  EXPECT_FALSE(ReadVarint(&p, p + eleven.size(), &v));
  // Ten bytes whose last carries bits beyond 64.
  std::vector<uint8_t> over(9, 0xff);
  over.push_back(0x02);
  p = over.data();
  EXPECT_FALSE(ReadVarint(&p, p + over.size(), &v));
}

TEST(WireTest, ZigZag) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(ZigZagDecode(ZigZagEncode(v)), v);
  }
  EXPECT_EQ(ZigZagEncode(-1), 1u);
  EXPECT_EQ(ZigZagEncode(1), 2u);
}

// What the hand encoders produce is what protobuf produces.
TEST(WireTest, MatchesProtobufEncoding) {
  proto::Chunk chunk;
  chunk.set_first_event(5);
  for (uint64_t v : {1u, 300u, 70000u}) chunk.add_shape_elem_size(v);
  std::string mine;
  AppendVarint(WireTag(proto::Chunk::kFirstEventFieldNumber, WireType::kVarint), &mine);
  AppendVarint(5, &mine);
  AppendPackedVarints(proto::Chunk::kShapeElemSizeFieldNumber, {1, 300, 70000}, &mine);
  EXPECT_EQ(mine, chunk.SerializeAsString());

  proto::Packet packet;
  *packet.mutable_chunk() = chunk;
  std::string framed, framed_body;
  AppendFramedPacket(packet, &framed);
  AppendFramedPacketBody(proto::Packet::kChunkFieldNumber, mine, &framed_body);
  EXPECT_EQ(framed, framed_body);
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(framed));
  EXPECT_EQ(trace.packet(0).chunk().first_event(), 5u);
}

}  // namespace
}  // namespace alloctrace
