#include "format/trace_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace alloctrace {
namespace {

// Object and arena ids above this are treated as corruption rather than
// letting a flipped bit allocate gigabytes of validation state.
constexpr uint64_t kMaxId = uint64_t{1} << 28;

// Reads a base-128 varint; false if it runs past `end` or over 10 bytes.
bool ReadVarint(const uint8_t** pos, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  const uint8_t* p = *pos;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *pos = p;
      *value = v;
      return true;
    }
  }
  return false;
}

bool ReadPacked(const uint8_t* p, const uint8_t* end, std::vector<uint64_t>* out) {
  while (p < end) {
    uint64_t v;
    if (!ReadVarint(&p, end, &v)) return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> TraceReader::TryDecodeChunkWire(std::vector<Event>* events) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(packet_bytes_.data());
  const uint8_t* const end = p + packet_bytes_.size();
  // The whole packet must be one field 2 (chunk); anything else takes the
  // general protobuf path.
  uint64_t tag, len;
  if (p >= end || *p != 0x12) return false;
  ++p;
  if (!ReadVarint(&p, end, &len) || len != static_cast<uint64_t>(end - p)) return false;
  ChunkView view;
  while (p < end) {
    if (!ReadVarint(&p, end, &tag)) return Error("corrupt varint in a chunk field tag");
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const uint32_t wire = tag & 7;
    if (wire == 0) {
      uint64_t v;
      if (!ReadVarint(&p, end, &v)) return Error("corrupt varint in a chunk field");
      if (field == 1) view.first_event = v;
      else if (field >= 2 && field <= 7) return false;  // unpacked repeated: general path
      continue;
    }
    if (wire == 1 || wire == 5) {  // fixed64 / fixed32: unknown field, skip
      const size_t n = wire == 1 ? 8 : 4;
      if (static_cast<size_t>(end - p) < n) return Error("truncated chunk field");
      p += n;
      continue;
    }
    if (wire != 2) return Error(absl::StrCat("chunk field ", field, " has wire type ", wire));
    if (!ReadVarint(&p, end, &len) || len > static_cast<uint64_t>(end - p)) {
      return Error(absl::StrCat("chunk field ", field, " overruns its packet"));
    }
    const uint8_t* const field_end = p + len;
    bool ok = true;
    switch (field) {
      case 2:
        if (view.ops != nullptr) return false;  // split column: general path
        view.ops = p;
        view.ops_size = len;
        break;
      case 3: ok = ReadPacked(p, field_end, &view.shape_elem_size); break;
      case 4: ok = ReadPacked(p, field_end, &view.shape_count); break;
      case 5: ok = ReadPacked(p, field_end, &view.shape_align); break;
      case 6: ok = ReadPacked(p, field_end, &view.ids); break;
      case 7: ok = ReadPacked(p, field_end, &view.args); break;
      case 8: ok = ReadPacked(p, field_end, &view.shape_flags); break;
      default: break;  // a field from a newer minor revision: skip it
    }
    if (!ok) return Error(absl::StrCat("corrupt varint in chunk column ", field));
    p = field_end;
  }
  absl::Status s = DecodeChunk(view, events);
  if (!s.ok()) return s;
  return true;
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open trace: ", std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  std::unique_ptr<TraceReader> reader(
      new TraceReader(f, path, static_cast<uint64_t>(st.st_size)));
  if (reader->file_size_ == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty, not a trace"));
  }
  absl::StatusOr<bool> got = reader->ReadPacket();
  if (!got.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an alloctrace trace (", got.status().message().substr(path.size() + 2), ")"));
  }
  if (!*got || !reader->packet_.ParseFromString(reader->packet_bytes_) ||
      !reader->packet_.has_header() || reader->packet_.header().magic() != kTraceMagic) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an alloctrace trace (byte 0 does not start a header packet with magic \"",
        kTraceMagic, "\")"));
  }
  reader->header_ = reader->packet_.header();
  const uint32_t version = reader->header_.format_version();
  if (version == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header has no format version"));
  }
  if (version > kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": written in trace format ", version, ", newer than this reader (",
                     kFormatVersion, "); use a newer alloctrace"));
  }
  return reader;
}

TraceReader::TraceReader(std::FILE* file, std::string path, uint64_t file_size)
    : file_(file), path_(std::move(path)), file_size_(file_size) {
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

TraceReader::~TraceReader() { std::fclose(file_); }

absl::Status TraceReader::Error(const std::string& what) const {
  return absl::DataLossError(
      absl::StrCat(path_, ": byte ", packet_offset_, " (packet ", packet_index_, "): ", what));
}

absl::Status TraceReader::EventError(uint64_t event, const std::string& what) const {
  return absl::DataLossError(absl::StrCat(path_, ": byte ", packet_offset_, " (chunk ",
                                          chunks_read_, "), event ", event, ": ", what));
}

absl::StatusOr<bool> TraceReader::ReadPacket() {
  packet_offset_ = offset_;
  const int tag = std::fgetc(file_);
  if (tag == EOF) return false;
  ++offset_;
  if (tag != kPacketTag) {
    return Error(absl::StrFormat("expected packet tag 0x%02x, found 0x%02x", kPacketTag, tag));
  }
  uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    const int b = std::fgetc(file_);
    if (b == EOF) {
      cut_short_ = absl::StrCat("file ends inside the length of the packet at byte ",
                                packet_offset_);
      return false;
    }
    ++offset_;
    if (shift >= 63 && (b & 0x7f) > 1) return Error("corrupt varint in packet length");
    length |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
    if (shift >= 63) return Error("corrupt varint in packet length (over 10 bytes)");
  }
  if (length > kMaxPacketBytes) {
    return Error(absl::StrCat("packet length ", length, " exceeds the limit of ",
                              kMaxPacketBytes, " bytes (corrupt length)"));
  }
  if (offset_ + length > file_size_) {
    cut_short_ = absl::StrCat("file ends inside the packet at byte ", packet_offset_, " (",
                              file_size_ - offset_, " of ", length, " bytes present)");
    return false;
  }
  packet_bytes_.resize(length);
  if (length > 0 && std::fread(&packet_bytes_[0], 1, length, file_) != length) {
    return Error(absl::StrCat("read error: ", std::strerror(errno)));
  }
  offset_ += length;
  ++packet_index_;
  return true;
}

absl::StatusOr<bool> TraceReader::NextChunk(std::vector<Event>* events) {
  events->clear();
  while (!done_) {
    absl::StatusOr<bool> got = ReadPacket();
    if (!got.ok()) return got.status();
    if (!*got) {
      done_ = true;
      if (cut_short_.empty()) {
        cut_short_ = absl::StrCat("no footer: the recording was cut short after ", chunks_read_,
                                  " chunks");
      }
      return false;
    }
    // The common packet, a chunk, is parsed straight from its bytes.
    if (absl::StatusOr<bool> fast = TryDecodeChunkWire(events); !fast.ok() || *fast) {
      if (!fast.ok()) return fast.status();
      ++chunks_read_;
      return true;
    }
    if (!packet_.ParseFromString(packet_bytes_)) {
      return Error(absl::StrCat("packet of ", packet_bytes_.size(),
                                " bytes does not parse (corrupt data)"));
    }
    switch (packet_.body_case()) {
      case proto::Packet::kHeader:
        return Error("a second header (concatenated traces are not supported)");
      case proto::Packet::kFooter: {
        footer_ = packet_.footer();
        has_footer_ = true;
        done_ = true;
        if (footer_.events() != events_read_) {
          return Error(absl::StrCat("footer counts ", footer_.events(), " events but the file holds ",
                                    events_read_));
        }
        if (offset_ != file_size_) {
          packet_offset_ = offset_;
          return Error(absl::StrCat(file_size_ - offset_, " unexpected bytes after the footer"));
        }
        return false;
      }
      case proto::Packet::kChunk: {
        const proto::Chunk& c = packet_.chunk();
        ChunkView view;
        view.first_event = c.first_event();
        for (uint64_t op : c.ops()) AppendVarint(op, &fallback_ops_);
        view.ops = reinterpret_cast<const uint8_t*>(fallback_ops_.data());
        view.ops_size = fallback_ops_.size();
        view.shape_elem_size.assign(c.shape_elem_size().begin(), c.shape_elem_size().end());
        view.shape_count.assign(c.shape_count().begin(), c.shape_count().end());
        view.shape_align.assign(c.shape_align().begin(), c.shape_align().end());
        view.ids.assign(c.ids().begin(), c.ids().end());
        view.args.assign(c.args().begin(), c.args().end());
        view.shape_flags.assign(c.shape_flags().begin(), c.shape_flags().end());
        absl::Status s = DecodeChunk(view, events);
        fallback_ops_.clear();
        if (!s.ok()) return s;
        ++chunks_read_;
        return true;
      }
      case proto::Packet::BODY_NOT_SET:
        break;  // a packet type from a newer minor revision: skip it
    }
  }
  return false;
}

absl::Status TraceReader::DecodeChunk(const ChunkView& chunk, std::vector<Event>* events) {
  if (chunk.first_event != events_read_) {
    return Error(absl::StrCat("chunk starts at event ", chunk.first_event, " but ",
                              events_read_, " events precede it (a chunk is missing or repeated)"));
  }
  const size_t new_shapes = chunk.shape_elem_size.size();
  if (chunk.shape_count.size() != new_shapes || chunk.shape_align.size() != new_shapes ||
      (!chunk.shape_flags.empty() && chunk.shape_flags.size() != new_shapes)) {
    return Error("shape columns have different lengths");
  }
  for (size_t i = 0; i < new_shapes; ++i) {
    const uint64_t align = chunk.shape_align[i];
    if (align == 0 || (align & (align - 1)) != 0) {
      return Error(absl::StrCat("shape ", shapes_.size(), " has alignment ", align,
                                ", not a power of two"));
    }
    const bool zeroed = !chunk.shape_flags.empty() && (chunk.shape_flags[i] & kShapeZeroed);
    shapes_.push_back(Shape{chunk.shape_elem_size[i], chunk.shape_count[i], align, zeroed});
  }

  events->reserve(chunk.ops_size);
  size_t next_id_arg = 0;
  size_t next_arg = 0;
  int64_t prev_free = 0;
  uint64_t event = events_read_;
  const uint64_t num_shapes = shapes_.size();
  const uint8_t* pos = chunk.ops;
  const uint8_t* const end = chunk.ops + chunk.ops_size;

  while (pos < end) {
    uint64_t op;
    if (ABSL_PREDICT_TRUE(*pos < 0x80)) {
      op = *pos++;
    } else if (!ReadVarint(&pos, end, &op)) {
      return EventError(event, "corrupt varint in the ops column");
    }
    const auto kind = static_cast<OpKind>(op & kOpKindMask);
    const uint64_t payload = op >> kOpKindBits;
    Event e;
    e.kind = kind;
    e.thread = cur_thread_;
    e.arena = cur_arena_;
    e.old_object = 0;
    e.shape = 0;
    e.time_ns = time_ns_;
    switch (kind) {
      case OpKind::kAlloc: {
        const uint64_t shape = payload >> 1;
        if (shape >= num_shapes) {
          return EventError(event, absl::StrCat("ALLOC of shape ", shape, " but only ",
                                                num_shapes, " shapes are defined"));
        }
        uint64_t id;
        if (payload & 1) {
          if (next_id_arg >= chunk.ids.size()) {
            return EventError(event, "ALLOC with an explicit id, but the ids column is exhausted");
          }
          id = chunk.ids[next_id_arg++];
          if (id >= kMaxId) {
            return EventError(event, absl::StrCat("ALLOC of object ", id, ", an implausible id"));
          }
          if (id >= live_.size()) live_.resize(id + 1, 0);
          if (live_[id]) {
            return EventError(event,
                              absl::StrCat("ALLOC of object ", id, ", which is already live"));
          }
        } else if (!free_ids_.empty()) {
          id = free_ids_.back();
          free_ids_.pop_back();
        } else {
          id = live_.size();
          if (id >= kMaxId) return EventError(event, "more live objects than this reader allows");
          live_.push_back(0);
        }
        if (cur_arena_ != 0 && (cur_arena_ >= live_arenas_.size() || !live_arenas_[cur_arena_])) {
          return EventError(event, absl::StrCat("ALLOC in arena ", cur_arena_,
                                                ", which is not live (never created, or destroyed)"));
        }
        live_[id] = 1;
        e.object = static_cast<uint32_t>(id);
        e.shape = static_cast<uint32_t>(shape);
        events->push_back(e);
        ++event;
        break;
      }
      case OpKind::kFree:
      case OpKind::kRealloc: {
        const int64_t id = prev_free + ZigZagDecode(payload);
        if (id < 0 || static_cast<uint64_t>(id) >= live_.size() || !live_[id]) {
          return EventError(event, absl::StrCat(OpKindName(kind), " of object ", id,
                                                ", which is not live"));
        }
        prev_free = id;
        live_[id] = 0;
        free_ids_.push_back(static_cast<uint32_t>(id));
        if (kind == OpKind::kRealloc) {
          if (next_arg >= chunk.args.size()) {
            return EventError(event, "REALLOC without its shape in the args column");
          }
          const uint64_t shape = chunk.args[next_arg++];
          if (shape >= num_shapes) {
            return EventError(event, absl::StrCat("REALLOC to shape ", shape, " but only ",
                                                  num_shapes, " shapes are defined"));
          }
          const uint32_t new_id = free_ids_.back();  // the old id, reused at once
          free_ids_.pop_back();
          live_[new_id] = 1;
          e.old_object = static_cast<uint32_t>(id);
          e.object = new_id;
          e.shape = static_cast<uint32_t>(shape);
        } else {
          e.object = static_cast<uint32_t>(id);
        }
        events->push_back(e);
        ++event;
        break;
      }
      case OpKind::kArenaCreate:
      case OpKind::kArenaDestroy: {
        if (payload == 0 || payload >= kMaxId) {
          return EventError(event, absl::StrCat(OpKindName(kind), " of arena ", payload,
                                                ", not a valid arena id"));
        }
        if (payload >= live_arenas_.size()) live_arenas_.resize(payload + 1, 0);
        const bool creating = kind == OpKind::kArenaCreate;
        if (live_arenas_[payload] == creating) {
          return EventError(event, absl::StrCat(OpKindName(kind), " of arena ", payload,
                                                creating ? ", which is already live"
                                                         : ", which is not live"));
        }
        live_arenas_[payload] = creating;
        e.arena = static_cast<uint32_t>(payload);
        e.object = 0;
        events->push_back(e);
        ++event;
        break;
      }
      case OpKind::kSetArena:
        if (payload >= kMaxId) {
          return EventError(event, absl::StrCat("SET_ARENA to ", payload, ", not a valid arena"));
        }
        cur_arena_ = static_cast<uint32_t>(payload);
        break;
      case OpKind::kSetThread:
        if (payload > UINT32_MAX) {
          return EventError(event, absl::StrCat("SET_THREAD to ", payload, ", out of range"));
        }
        cur_thread_ = static_cast<uint32_t>(payload);
        break;
      case OpKind::kTimestamp:
        time_ns_ += payload;
        break;
    }
  }
  if (next_id_arg != chunk.ids.size() || next_arg != chunk.args.size()) {
    return Error("chunk has unused values in its ids or args column");
  }
  events_read_ = event;
  return absl::OkStatus();
}

}  // namespace alloctrace
