#include "alloctrace/format/wire.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "alloctrace/format/trace_format.h"
#include "alloctrace/proto/trace.pb.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(WireTest, VarintsRoundTrip) {
  const uint64_t values[] = {
      0, 1, 127, 128, 300, uint64_t{1} << 32, std::numeric_limits<uint64_t>::max()};
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

// ReadVarint decodes varints of up to three bytes on a shortcut when three
// bytes remain: it must agree with the general path (taken near the end of
// the input) on every such encoding, canonical or not.
TEST(WireTest, ShortVarintsDecodeAlikeWithAndWithoutSlack) {
  for (uint32_t length = 1; length <= 3; ++length) {
    for (uint32_t bits = 0; bits < (1u << (7 * length)); bits += length == 3 ? 97 : 1) {
      std::vector<uint8_t> bytes;
      for (uint32_t i = 0; i < length; ++i) {
        const uint32_t more = i + 1 < length ? 0x80 : 0;
        bytes.push_back(static_cast<uint8_t>(((bits >> (7 * i)) & 0x7f) | more));
      }
      const std::vector<uint8_t> tight = bytes;
      bytes.insert(bytes.end(), {0xff, 0xff, 0xff});  // slack
      uint64_t a = 0, b = 0;
      const uint8_t* pa = tight.data();
      const uint8_t* pb = bytes.data();
      ASSERT_TRUE(ReadVarint(&pa, tight.data() + tight.size(), &a));
      ASSERT_TRUE(ReadVarint(&pb, bytes.data() + bytes.size(), &b));
      EXPECT_EQ(a, bits);
      EXPECT_EQ(b, bits);
      EXPECT_EQ(pa - tight.data(), length);
      EXPECT_EQ(pb - bytes.data(), length);
    }
  }
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
