#include "alloctrace/format/trace_reader.h"

#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/base/crc32c.h"
#include "alloctrace/format/wire.h"
#include "google/protobuf/stubs/logging.h"

namespace alloctrace {
namespace {

// Whether the first bytes of `path` hold the trace magic: a file whose
// first packet is cut or does not parse is then a damaged trace, not
// another kind of file.
bool StartsWithMagic(const std::string& path) {
  char head[64] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  return absl::StrContains(absl::string_view(head, static_cast<size_t>(in.gcount())), kTraceMagic);
}

// Whether `message` holds a top-level field of wire type fixed32. Called
// where the message has no checksum, its one known fixed32 field: such a
// field is one this reader does not know, a checksum whose tag byte changed
// into another field's. The message is read back from its own bytes (kept
// unknown fields included), so the lite runtime needs no reflection.
bool HasFixed32Field(const google::protobuf::MessageLite& message) {
  const std::string bytes = message.SerializeAsString();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  while (p < end) {
    uint64_t tag = 0;
    uint64_t length = 0;
    if (!ReadVarint(&p, end, &tag)) return false;
    switch (static_cast<WireType>(tag & 7)) {
      case WireType::kVarint:
        if (!ReadVarint(&p, end, &length)) return false;
        break;
      case WireType::kFixed64:
        if (end - p < 8) return false;
        p += 8;
        break;
      case WireType::kLengthDelimited:
        if (!ReadVarint(&p, end, &length) || length > static_cast<uint64_t>(end - p)) return false;
        p += length;
        break;
      case WireType::kFixed32:
        return true;
      default:  // groups: none in a trace
        return false;
    }
  }
  return false;
}

// What a header, chunk or footer (`what`) whose checksum fails says.
std::string ChecksumMismatch(absl::string_view what, uint32_t stored, uint32_t computed) {
  return absl::StrFormat(
      "checksum mismatch: the %s's bytes changed after they were written (stored 0x%08x, "
      "computed 0x%08x)",
      what, stored, computed);
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  // A damaged string field would make protobuf log an error of its own
  // before the reader says what is wrong and where.
  google::protobuf::LogSilencer quiet;
  absl::StatusOr<std::unique_ptr<PacketReader>> packets = PacketReader::Open(path);
  if (!packets.ok()) return packets.status();
  std::unique_ptr<TraceReader> reader(new TraceReader(*std::move(packets)));
  PacketReader& in = *reader->packets_;
  if (in.file_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty, not a trace"));
  }
  absl::StatusOr<bool> got = in.Next();
  if (!got.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an alloctrace trace (", got.status().message().substr(path.size() + 2), ")"));
  }
  proto::Packet& packet = reader->packet_;
  if (!*got && !in.cut_short().empty() && StartsWithMagic(path)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": truncated inside its header: ", in.cut_short()));
  }
  if (!*got || !packet.ParseFromArray(in.packet().data(), static_cast<int>(in.packet().size())) ||
      !packet.has_header() || packet.header().magic() != kTraceMagic) {
    if (*got && StartsWithMagic(path)) {
      // A header that ends with its checksum says what happened.
      const std::optional<absl::string_view> body =
          AsWrittenBody(in.packet(), proto::Packet::kHeaderFieldNumber);
      const TrailingCrc32c crc =
          body ? CheckTrailingCrc32c(*body, kHeaderCrc32cTag) : TrailingCrc32c();
      if (crc.state == TrailingCrc32c::State::kMismatch) {
        return absl::DataLossError(absl::StrCat(
            path, ": byte 0 (header): ", ChecksumMismatch("header", crc.stored, crc.computed)));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": damaged header: the packet at byte 0 (", in.packet().size(),
          " bytes) names the trace magic but does not parse as a header (a changed byte?)"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an alloctrace trace (byte 0 does not start a header packet with magic \"",
        kTraceMagic, "\")"));
  }
  reader->header_ = packet.header();
  // Every writer frames the header as its packet's one record; other bytes
  // parsed beside it (a changed length) could hide any of its fields.
  if (!AsWrittenBody(in.packet(), proto::Packet::kHeaderFieldNumber)) {
    return absl::DataLossError(
        absl::StrCat(path, ": damaged header: the packet at byte 0 (", in.packet().size(),
                     " bytes) holds more than its one header record (a changed length?)"));
  }
  if (absl::Status s = reader->CheckEndChecksum(
          in.packet(), reader->header_, reader->header_.has_crc32c(),
          proto::Packet::kHeaderFieldNumber, kHeaderCrc32cTag, "header", /*promised=*/false,
          /*tag_decides=*/true);
      !s.ok()) {
    return s;
  }
  reader->FindTailFooter();
  const uint32_t version = reader->header_.format_version();
  if (version == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header has no format version"));
  }
  if (version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": written in trace format ", version,
                                                      ", newer than this reader (", kFormatVersion,
                                                      "); use a newer alloctrace"));
  }
  return reader;
}

void TraceReader::FindTailFooter() {
  // A footer packet is a frame (tag, length) around a Packet holding a
  // Footer of at most 12 varint fields and its checksum: under 160 bytes.
  constexpr size_t kMaxFooterFrame = 160;
  const std::string tail = packets_->Tail(kMaxFooterFrame);
  const uint8_t* const begin = reinterpret_cast<const uint8_t*>(tail.data());
  const uint8_t* const end = begin + tail.size();
  // The bytes of a record at `start` with the one-byte tag `tag` whose
  // length runs exactly to the end of the file.
  auto record_to_end = [end](const uint8_t* start,
                             uint8_t tag) -> std::optional<absl::string_view> {
    const uint8_t* p = start + 1;
    uint64_t length;
    if (*start != tag || !ReadVarint(&p, end, &length) ||
        length != static_cast<uint64_t>(end - p)) {
      return std::nullopt;
    }
    return absl::string_view(reinterpret_cast<const char*>(p), length);
  };
  // A footer with a checksum that holds: the writer's, whatever the frame
  // around its Packet.footer record says (a changed frame length is then
  // told from a cut).
  constexpr uint8_t kFooterRecordTag =
      WireTag(proto::Packet::kFooterFieldNumber, WireType::kLengthDelimited);
  proto::Footer footer;
  for (const uint8_t* start = begin; start < end; ++start) {
    const std::optional<absl::string_view> body = record_to_end(start, kFooterRecordTag);
    if (body &&
        CheckTrailingCrc32c(*body, kFooterCrc32cTag).state == TrailingCrc32c::State::kMatches &&
        footer.ParseFromArray(body->data(), static_cast<int>(body->size()))) {
      tail_footer_ = footer;
      tail_footer_checked_ = true;
      footer_events_hint_ = footer.events();
      return;
    }
  }
  // Else a footer written before checksums: any framed packet that ends the
  // file and parses as one; the real one is the first such from the front
  // of the tail that is not inside another, but any match is only a hint.
  proto::Packet packet;
  for (const uint8_t* start = begin; start < end; ++start) {
    const std::optional<absl::string_view> bytes = record_to_end(start, kPacketTag);
    if (bytes && packet.ParseFromArray(bytes->data(), static_cast<int>(bytes->size())) &&
        packet.has_footer() && !packet.footer().has_crc32c() &&
        packet.footer().events() <= file_size()) {
      tail_footer_ = packet.footer();
      footer_events_hint_ = tail_footer_->events();
      return;
    }
  }
}

TraceReader::TraceReader(std::unique_ptr<PacketReader> packets) : packets_(std::move(packets)) {}

absl::Status TraceReader::ChunkError(absl::string_view what) const {
  return absl::DataLossError(absl::StrCat(packets_->path(), ": byte ", packets_->packet_offset(),
                                          " (chunk ", chunks_read_, "): ", what));
}

absl::Status TraceReader::CheckCrc32c(absl::string_view bytes, size_t covered,
                                      uint32_t stored) const {
  const uint32_t computed = Crc32c(bytes.data(), covered);
  if (ABSL_PREDICT_TRUE(computed == stored)) return absl::OkStatus();
  return ChunkError(ChecksumMismatch("chunk", stored, computed));
}

absl::Status TraceReader::CheckEndChecksum(absl::string_view packet,
                                           const google::protobuf::MessageLite& message,
                                           bool has_crc32c, int body_field, uint8_t tag,
                                           absl::string_view what, bool promised,
                                           bool tag_decides) const {
  auto error = [&](absl::string_view words) {
    return absl::DataLossError(absl::StrCat(packets_->path(), ": byte ", packets_->packet_offset(),
                                            " (", what, "): ", words));
  };
  const std::optional<absl::string_view> body = AsWrittenBody(packet, body_field);
  const TrailingCrc32c crc = body ? CheckTrailingCrc32c(*body, tag) : TrailingCrc32c();
  // Where the last five bytes are the checksum's field, they decide however
  // the message parsed: a changed byte can make the parse swallow the field
  // (a varint that no longer ends, a longer length).
  if (crc.state == TrailingCrc32c::State::kMismatch && (has_crc32c || tag_decides)) {
    return error(ChecksumMismatch(what, crc.stored, crc.computed));
  }
  if (!has_crc32c) {
    if (HasFixed32Field(message)) {
      return error(absl::StrCat("an unknown fixed32 field where the ", what,
                                "'s checksum would be (its tag changed?)"));
    }
    if (promised) {
      return error(absl::StrCat("the ", what,
                                " has no checksum, though the header has one (a changed byte?)"));
    }
    return absl::OkStatus();
  }
  if (!body) {
    return error(absl::StrCat("the ", what,
                              " has a checksum but is not framed as its packet's one ", what,
                              " record, so the bytes it covers are not those of the file"));
  }
  if (crc.state == TrailingCrc32c::State::kMatches) return absl::OkStatus();
  return error(absl::StrCat("the ", what, "'s checksum field is not its last field"));
}

absl::Status TraceReader::ParseColumns(absl::string_view bytes, bool as_written) {
  columns_ = ChunkColumns();
  // The checksum first, where the writer puts it, when the header says
  // every chunk has one: a changed byte is then named as what it is before
  // it can show as a broken field or event. (Without that promise it waits
  // for the parse: the end of a chunk without one may look like it.)
  const TrailingCrc32c at_end = header_.chunks_have_crc32c() && as_written
                                    ? CheckTrailingCrc32c(bytes, kChunkCrc32cTag)
                                    : TrailingCrc32c();
  if (at_end.state == TrailingCrc32c::State::kMismatch) {
    return ChunkError(ChecksumMismatch("chunk", at_end.stored, at_end.computed));
  }
  const bool checked_at_end = at_end.state == TrailingCrc32c::State::kMatches;
  if (absl::Status s = ParseChunkColumns(bytes, &columns_); !s.ok()) {
    return packets_->Error(s.message());
  }
  if (columns_.has_crc32c) {
    if (!as_written) {
      return ChunkError(
          "the chunk has a checksum but is not framed as its packet's one Packet.chunk record, "
          "so the bytes it covers are not those of the file");
    }
    if (!checked_at_end || columns_.crc32c_offset != bytes.size() - kChunkCrc32cFieldBytes) {
      if (absl::Status s = CheckCrc32c(bytes, columns_.crc32c_offset, columns_.crc32c); !s.ok()) {
        return s;
      }
    }
  } else if (header_.chunks_have_crc32c()) {
    return ChunkError(
        "the chunk has no checksum, though the header says every chunk has one (a changed "
        "byte?)");
  }
  // Call sites are an annotation: a damaged table ends them, not the read.
  if (call_sites_error_.empty()) {
    if (absl::Status s = call_sites_.AddChunk(columns_); !s.ok()) {
      call_sites_error_ = std::string(
          packets_->Error(absl::StrCat("chunk ", chunks_read_, ": ", s.message())).message());
    }
  }
  if (!call_sites_error_.empty()) columns_.site.clear();
  return absl::OkStatus();
}

absl::StatusOr<bool> TraceReader::NextChunk(std::vector<Event>* events) {
  events->clear();
  absl::StatusOr<bool> more = NextChunkColumns();
  if (!more.ok() || !*more) return more;
  // At most one event per byte of ops.
  events->reserve(columns_.ops.size());
  if (absl::Status s = DecodeColumns(
          [events](const Event& e) {
            events->push_back(e);
            return absl::OkStatus();
          },
          [](uint32_t) {});
      !s.ok()) {
    return s;
  }
  return true;
}

absl::StatusOr<bool> TraceReader::EndOfPackets() {
  done_ = true;
  cut_short_ = packets_->cut_short();
  // A packet that runs past the end of a file that ends with a footer for
  // more chunks than were read: the recording was not cut short, the
  // packet's frame says a wrong length (a changed byte, which no chunk
  // checksum covers).
  if (!cut_short_.empty() && tail_footer_.has_value() && tail_footer_->chunks() > chunks_read_) {
    return packets_->Error(absl::StrCat(
        cut_short_, ", yet the file ends with a footer (", tail_footer_->chunks(),
        " chunks): the packet's length changed after it was written, not a recording cut "
        "short"));
  }
  if (cut_short_.empty()) {
    cut_short_ =
        absl::StrCat("no footer: the recording was cut short after ", chunks_read_, " chunks");
  }
  // A writer that checksums its header writes only header, chunks and
  // footer, and a cut ends a file between packets or inside one: a whole
  // packet of no known kind at the end, or a footer at the end that the
  // packets' frames do not reach, is a changed byte.
  if (header_.has_crc32c() && last_packet_unknown_) {
    return packets_->Error(
        "the file's last packet is of no known kind, where a footer would be (a changed tag "
        "byte?), not a recording cut short");
  }
  if (tail_footer_checked_) {
    return packets_->Error(
        absl::StrCat(cut_short_,
                     ", yet the file ends with a footer whose checksum holds: a packet's length "
                     "changed after it was written, not a recording cut short"));
  }
  return false;
}

absl::StatusOr<bool> TraceReader::NextChunkColumns() {
  google::protobuf::LogSilencer quiet;  // as in Open
  while (!done_) {
    absl::StatusOr<bool> got = packets_->Next();
    if (!got.ok()) return got.status();
    if (!*got) return EndOfPackets();
    // A chunk, the common packet, is decoded straight from its wire bytes
    // when the packet is exactly one Packet.chunk record, as writers frame
    // it: parsing it into a proto::Chunk first would copy every op into a
    // RepeatedField (8 bytes an op) only to walk it once. Every other packet
    // (header, footer, or a chunk framed some other valid way) goes through
    // protobuf, which knows the full encoding of Packet.
    const absl::string_view bytes = packets_->packet();
    last_packet_unknown_ = false;
    if (std::optional<absl::string_view> chunk =
            AsWrittenBody(bytes, proto::Packet::kChunkFieldNumber)) {
      if (absl::Status s = ParseColumns(*chunk, /*as_written=*/true); !s.ok()) return s;
      return true;
    }
    if (!packet_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return packets_->Error(
          absl::StrCat("packet of ", bytes.size(), " bytes does not parse (corrupt data)"));
    }
    switch (packet_.body_case()) {
      case proto::Packet::kHeader:
        return packets_->Error("a second header (concatenated traces are not supported)");
      case proto::Packet::kFooter: {
        footer_ = packet_.footer();
        has_footer_ = true;
        done_ = true;
        if (absl::Status s = CheckEndChecksum(bytes, footer_, footer_.has_crc32c(),
                                              proto::Packet::kFooterFieldNumber, kFooterCrc32cTag,
                                              "footer", /*promised=*/header_.has_crc32c(),
                                              /*tag_decides=*/header_.has_crc32c());
            !s.ok()) {
          return s;
        }
        if (footer_.events() != events_read()) {
          return packets_->Error(absl::StrCat("footer counts ", footer_.events(),
                                              " events but the file holds ", events_read()));
        }
        if (packets_->offset() != file_size()) {
          return absl::DataLossError(absl::StrCat(packets_->path(), ": byte ", packets_->offset(),
                                                  " (packet ", packets_->packets_read(),
                                                  "): ", file_size() - packets_->offset(),
                                                  " unexpected bytes after the footer"));
        }
        return false;
      }
      case proto::Packet::kChunk: {
        reencoded_chunk_ = packet_.chunk().SerializeAsString();
        if (absl::Status s = ParseColumns(reencoded_chunk_, /*as_written=*/false); !s.ok()) {
          return s;
        }
        return true;
      }
      case proto::Packet::BODY_NOT_SET:
        last_packet_unknown_ = true;
        continue;  // a packet type from a newer minor revision: skip it
    }
  }
  return false;
}

}  // namespace alloctrace
