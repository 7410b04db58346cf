#include "tracer/trace_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace alloctrace {
namespace {

// Object and arena ids above this are treated as corruption rather than
// letting a flipped bit allocate gigabytes of validation state.
constexpr uint64_t kMaxId = uint64_t{1} << 28;

}  // namespace

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
        absl::Status s = DecodeChunk(packet_.chunk(), events);
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

absl::Status TraceReader::DecodeChunk(const proto::Chunk& chunk, std::vector<Event>* events) {
  if (chunk.first_event() != events_read_) {
    return Error(absl::StrCat("chunk starts at event ", chunk.first_event(), " but ",
                              events_read_, " events precede it (a chunk is missing or repeated)"));
  }
  const int new_shapes = chunk.shape_elem_size_size();
  if (chunk.shape_count_size() != new_shapes || chunk.shape_align_size() != new_shapes) {
    return Error("shape columns have different lengths");
  }
  for (int i = 0; i < new_shapes; ++i) {
    const uint64_t align = chunk.shape_align(i);
    if (align == 0 || (align & (align - 1)) != 0) {
      return Error(absl::StrCat("shape ", shapes_.size(), " has alignment ", align,
                                ", not a power of two"));
    }
    shapes_.push_back(Shape{chunk.shape_elem_size(i), chunk.shape_count(i), align});
  }

  const auto& ops = chunk.ops();
  events->reserve(ops.size());
  int next_id_arg = 0;
  int next_arg = 0;
  int64_t prev_free = 0;
  uint64_t event = events_read_;
  const uint64_t num_shapes = shapes_.size();

  for (const uint64_t op : ops) {
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
          if (next_id_arg >= chunk.ids_size()) {
            return EventError(event, "ALLOC with an explicit id, but the ids column is exhausted");
          }
          id = chunk.ids(next_id_arg++);
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
          if (next_arg >= chunk.args_size()) {
            return EventError(event, "REALLOC without its shape in the args column");
          }
          const uint64_t shape = chunk.args(next_arg++);
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
  if (next_id_arg != chunk.ids_size() || next_arg != chunk.args_size()) {
    return Error("chunk has unused values in its ids or args column");
  }
  events_read_ = event;
  return absl::OkStatus();
}

}  // namespace alloctrace
