// The trace file's framing and vocabulary, shared by writer and reader.
// The schema and its encoding rules are documented in proto/trace.proto.
#ifndef ALLOCTRACE_FORMAT_TRACE_FORMAT_H_
#define ALLOCTRACE_FORMAT_TRACE_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "alloctrace/format/wire.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace {

// The newest format this code writes and reads. Bump it, and keep reading
// the older ones, whenever the meaning of existing bytes changes.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr char kTraceMagic[] = "alloctrace";

// Every packet of a file is one Trace.packet record (length-delimited).
inline constexpr uint8_t kPacketTag =
    WireTag(proto::Trace::kPacketFieldNumber, WireType::kLengthDelimited);
// Packets larger than this are refused as corrupt (writers stay far below).
inline constexpr uint64_t kMaxPacketBytes = uint64_t{256} << 20;

inline constexpr int kOpKindBits = 3;
inline constexpr uint64_t kOpKindMask = (1u << kOpKindBits) - 1;

enum class OpKind : uint8_t {
  kAlloc = proto::OP_ALLOC,
  kFree = proto::OP_FREE,
  kArenaCreate = proto::OP_ARENA_CREATE,
  kArenaDestroy = proto::OP_ARENA_DESTROY,
  kSetArena = proto::OP_SET_ARENA,
  kSetThread = proto::OP_SET_THREAD,
  kRealloc = proto::OP_REALLOC,
  kTimestamp = proto::OP_TIMESTAMP,
};

const char* OpKindName(OpKind kind);

// An allocation's shape: what was asked for, not what an allocator rounded to.
struct Shape {
  uint64_t elem_size = 0;
  uint64_t count = 0;
  uint64_t align = 1;
  bool zeroed = false;  // calloc: the caller asked for zeroed memory
  uint64_t bytes() const { return elem_size * count; }
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.elem_size == b.elem_size && a.count == b.count && a.align == b.align &&
           a.zeroed == b.zeroed;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Shape& s) {
    return H::combine(std::move(h), s.elem_size, s.count, s.align, s.zeroed);
  }
};

// One entry of a trace's class table (proto ClassDef): a class of
// containers, named by a tag type or by the containers' value type. Class 0
// is the unnamed class: every arena of a trace without a class table, and
// every arena created without a class.
struct ClassDef {
  uint32_t id = 0;
  std::string name;        // as the compiler spells it
  uint64_t elem_size = 0;  // sizeof the declared value type
  bool tagged = false;     // `name` is a tag type's
  friend bool operator==(const ClassDef& a, const ClassDef& b) {
    return a.id == b.id && a.name == b.name && a.elem_size == b.elem_size && a.tagged == b.tagged;
  }
  friend bool operator!=(const ClassDef& a, const ClassDef& b) { return !(a == b); }
};

// One entry of a trace's stack table (proto StackDef): the return
// addresses of an allocation's call stack, the allocating call first, and
// the module each lies in (0: none known).
struct StackDef {
  uint32_t id = 0;
  std::vector<uint64_t> pcs;
  std::vector<uint32_t> modules;  // one per pc
};

// One entry of a trace's module table (proto ModuleDef): an executable
// mapping of a file in the recorded process.
struct ModuleDef {
  uint32_t id = 0;
  std::string path;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
  std::string build_id;  // raw bytes; empty if the file has none
};

// Chunk.crc32c as the writer appends it, the chunk's last field: its tag
// (one byte) and the fixed32, 5 bytes.
inline constexpr uint8_t kChunkCrc32cTag =
    WireTag(proto::Chunk::kCrc32CFieldNumber, WireType::kFixed32);
inline constexpr size_t kChunkCrc32cFieldBytes = 1 + kFixed32Bytes;
static_assert(kChunkCrc32cTag < 0x80, "the checksum's tag is one byte");
// Header.crc32c and Footer.crc32c, each the message's last field as well.
inline constexpr uint8_t kHeaderCrc32cTag =
    WireTag(proto::Header::kCrc32CFieldNumber, WireType::kFixed32);
inline constexpr uint8_t kFooterCrc32cTag =
    WireTag(proto::Footer::kCrc32CFieldNumber, WireType::kFixed32);
static_assert(kHeaderCrc32cTag < 0x80 && kFooterCrc32cTag < 0x80, "one-byte tags");

// Appends to `message` (serialized bytes) a last field `tag` (a fixed32
// field's one-byte tag) holding the CRC32C of the bytes before it.
void AppendCrc32cField(uint8_t tag, std::string* message);

// What a header's or footer's trailing checksum says, for `message`, its
// bytes as written: kAbsent (no field `tag` at the end), kMatches, or
// kMismatch with the two values.
struct TrailingCrc32c {
  enum class State { kAbsent, kMatches, kMismatch } state = State::kAbsent;
  uint32_t stored = 0, computed = 0;
};
TrailingCrc32c CheckTrailingCrc32c(absl::string_view message, uint8_t tag);

// The body of `packet` (a Packet's bytes) if it is exactly one record of
// field `body_field`, as writers frame it: the bytes a checksum covers.
std::optional<absl::string_view> AsWrittenBody(absl::string_view packet, int body_field);

// Bits of Chunk.shape_flags.
inline constexpr uint64_t kShapeZeroed = 1;

// Appends `packet` framed as one Trace.packet record.
void AppendFramedPacket(const proto::Packet& packet, std::string* out);
// The same framing for a packet given as the encoded bytes of its one body
// field (`body_field`, e.g. proto::Packet::kChunkFieldNumber): what the
// writer uses for chunks it encodes itself.
void AppendFramedPacketBody(int body_field, std::string_view body, std::string* out);

// A trace whose classes are a capture's call sites (inspect --classes_out)
// says so in its header: label kClassesFromLabel = kClassesFromCallSites.
inline constexpr char kClassesFromLabel[] = "classes_from";
inline constexpr char kClassesFromCallSites[] = "call sites";
inline bool ClassesAreCallSites(const proto::Header& header) {
  const auto it = header.labels().find(kClassesFromLabel);
  return it != header.labels().end() && it->second == kClassesFromCallSites;
}

// Fills in what every header carries: magic, version, pointer size, and
// the pid and platform unless the header has them (a trace rewritten from
// another, such as inspect --classes_out's, keeps the recording's).
void FillStandardHeader(proto::Header* header);

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_TRACE_FORMAT_H_
