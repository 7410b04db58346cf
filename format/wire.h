// The protobuf wire encoding, as far as trace files use it: base-128
// varints, zigzag, tags, fixed32 and length-delimited records. The one implementation
// of it in the project: the writer encodes with it, the packet reader and the
// chunk decoder parse with it.
//
// Field numbers come from the constants protoc generates for
// proto/trace.proto (proto::Packet::kChunkFieldNumber and the like), never
// from literals.
//
// Thread-safety: free functions over caller-owned data.
// Failure: parsers return false (or kTruncated/kCorrupt) and consume nothing
// they report on; encoders cannot fail.
#ifndef ALLOCTRACE_FORMAT_WIRE_H_
#define ALLOCTRACE_FORMAT_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alloctrace {

enum class WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
};

inline constexpr size_t kMaxVarintBytes = 10;

constexpr uint32_t WireTag(int field, WireType type) {
  return (static_cast<uint32_t>(field) << 3) | static_cast<uint32_t>(type);
}

inline uint64_t ZigZagEncode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t ZigZagDecode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Writes the varint of v at `out`, which has room for kMaxVarintBytes;
// returns the end of what was written.
inline char* EncodeVarint(uint64_t v, char* out) {
  // Up to three bytes unrolled: a trace's ops and ids are nearly all that
  // short, and the loop's test per byte was a tenth of the writer's work.
  if (v < (uint64_t{1} << 7)) {
    out[0] = static_cast<char>(v);
    return out + 1;
  }
  if (v < (uint64_t{1} << 14)) {
    out[0] = static_cast<char>(v | 0x80);
    out[1] = static_cast<char>(v >> 7);
    return out + 2;
  }
  if (v < (uint64_t{1} << 21)) {
    out[0] = static_cast<char>(v | 0x80);
    out[1] = static_cast<char>((v >> 7) | 0x80);
    out[2] = static_cast<char>(v >> 14);
    return out + 3;
  }
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

// How many bytes EncodeVarint writes for `v`.
inline size_t VarintBytes(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

inline void AppendVarint(uint64_t v, std::string* out) {
  char buf[kMaxVarintBytes];
  out->append(buf, EncodeVarint(v, buf) - buf);
}

// Appends the start of a length-delimited record: its tag and length. The
// caller appends the `length` bytes.
inline void AppendLengthDelimitedHeader(int field, uint64_t length, std::string* out) {
  AppendVarint(WireTag(field, WireType::kLengthDelimited), out);
  AppendVarint(length, out);
}

inline void AppendLengthDelimited(int field, std::string_view bytes, std::string* out) {
  AppendLengthDelimitedHeader(field, bytes.size(), out);
  out->append(bytes.data(), bytes.size());
}

// A packed repeated varint field; nothing for an empty one (as protobuf).
// The values are encoded in place, not appended one by one: a chunk's
// column holds one value per arena or realloc of the chunk.
inline void AppendPackedVarints(int field, const std::vector<uint64_t>& values, std::string* out) {
  if (values.empty()) return;
  size_t length = 0;
  for (uint64_t v : values) length += VarintBytes(v);
  AppendLengthDelimitedHeader(field, length, out);
  const size_t at = out->size();
  out->resize(at + length);
  char* p = out->data() + at;
  for (uint64_t v : values) p = EncodeVarint(v, p);
}

// A fixed32 field's value: four bytes, little-endian.
inline constexpr size_t kFixed32Bytes = 4;
inline void AppendFixed32(uint32_t v, std::string* out) {
  const char bytes[kFixed32Bytes] = {static_cast<char>(v), static_cast<char>(v >> 8),
                                     static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  out->append(bytes, kFixed32Bytes);
}
// Reads the fixed32 at p (kFixed32Bytes readable).
inline uint32_t LoadFixed32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

enum class VarintResult { kOk, kTruncated, kCorrupt };

// Parses one varint from `next_byte`, a callable returning the next byte
// (0..255) or a negative value at the end of the input. kCorrupt: over ten
// bytes, or a value over 64 bits.
template <typename NextByte>
VarintResult ParseVarint(NextByte&& next_byte, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const int b = next_byte();
    if (b < 0) return VarintResult::kTruncated;
    if (shift == 63 && (b & 0x7e) != 0) return VarintResult::kCorrupt;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return VarintResult::kOk;
    }
  }
  return VarintResult::kCorrupt;
}

// Reads a varint from [*pos, end) and advances *pos past it; false (and
// *pos unchanged) if it is truncated or corrupt.
inline bool ReadVarint(const uint8_t** pos, const uint8_t* end, uint64_t* value) {
  const uint8_t* p = *pos;
  // Nearly every varint in a trace (ops, ids, lengths) takes one to three
  // bytes: with three bytes left, those are decoded here with one bounds
  // check and no loop. Anything longer, or near the end, takes the general
  // path below, which also does all the validation (a varint of three
  // bytes or fewer cannot be corrupt).
  if (__builtin_expect(end - p >= 3, 1)) {
    const uint64_t b0 = p[0];
    if (b0 < 0x80) {
      *value = b0;
      *pos = p + 1;
      return true;
    }
    const uint64_t b1 = p[1];
    if (b1 < 0x80) {
      *value = (b0 - 0x80) + (b1 << 7);
      *pos = p + 2;
      return true;
    }
    const uint64_t b2 = p[2];
    if (b2 < 0x80) {
      *value = (b0 - 0x80) + ((b1 - 0x80) << 7) + (b2 << 14);
      *pos = p + 3;
      return true;
    }
  }
  const VarintResult r = ParseVarint([&]() -> int { return p < end ? *p++ : -1; }, value);
  if (r != VarintResult::kOk) return false;
  *pos = p;
  return true;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_WIRE_H_
