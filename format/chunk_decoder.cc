#include "alloctrace/format/chunk_decoder.h"

#include <algorithm>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/format/wire.h"

namespace alloctrace {
namespace {

bool ReadPacked(const uint8_t* p, const uint8_t* end, std::vector<uint64_t>* out) {
  while (p < end) {
    uint64_t v;
    if (!ReadVarint(&p, end, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// The column a Chunk field number fills; nullptr for first_event, ops and
// unknown fields.
std::vector<uint64_t>* Column(ChunkColumns* c, uint32_t field) {
  switch (field) {
    case proto::Chunk::kShapeElemSizeFieldNumber:
      return &c->shape_elem_size;
    case proto::Chunk::kShapeCountFieldNumber:
      return &c->shape_count;
    case proto::Chunk::kShapeAlignFieldNumber:
      return &c->shape_align;
    case proto::Chunk::kShapeFlagsFieldNumber:
      return &c->shape_flags;
    case proto::Chunk::kIdsFieldNumber:
      return &c->ids;
    case proto::Chunk::kArgsFieldNumber:
      return &c->args;
    case proto::Chunk::kArenaClassFieldNumber:
      return &c->arena_class;
    case proto::Chunk::kSiteFieldNumber:
      return &c->site;
    default:
      return nullptr;
  }
}

bool IsDefinition(uint32_t field) {
  return field == proto::Chunk::kClassDefFieldNumber ||
         field == proto::Chunk::kStackDefFieldNumber ||
         field == proto::Chunk::kModuleDefFieldNumber;
}

// A field of a wire type no writer gives it: a known field read as another
// kind would be skipped or misread (a changed tag byte in a chunk without a
// checksum), so it is an error, named.
absl::Status WrongWireType(uint32_t field, uint32_t wire, absl::string_view should_be) {
  return absl::DataLossError(absl::StrCat("chunk field ", field, " has wire type ", wire, ", not ",
                                          should_be, " (a changed tag?)"));
}

// One class, stack or module definition (a message field of the chunk).
absl::Status ParseDefinition(uint32_t field, const uint8_t* p, uint64_t len, ChunkColumns* out) {
  auto unparsed = [](absl::string_view what, size_t index) {
    return absl::DataLossError(
        absl::StrCat(what, " definition ", index, " of the chunk does not parse"));
  };
  const int size = static_cast<int>(len);
  if (field == proto::Chunk::kClassDefFieldNumber) {
    proto::ClassDef def;
    if (!def.ParseFromArray(p, size)) return unparsed("class", out->class_defs.size());
    out->class_defs.push_back(ClassDef{def.id(), def.name(), def.elem_size(), def.tagged()});
  } else if (field == proto::Chunk::kStackDefFieldNumber) {
    proto::StackDef def;
    if (!def.ParseFromArray(p, size)) return unparsed("stack", out->stack_defs.size());
    out->stack_defs.push_back(StackDef{
        def.id(), {def.pc().begin(), def.pc().end()}, {def.module().begin(), def.module().end()}});
  } else {
    proto::ModuleDef def;
    if (!def.ParseFromArray(p, size)) return unparsed("module", out->module_defs.size());
    out->module_defs.push_back(
        ModuleDef{def.id(), def.path(), def.start(), def.end(), def.file_offset(), def.build_id()});
  }
  return absl::OkStatus();
}

// The checksum field (Chunk.crc32c), its tag read: a fixed32 that must end
// the chunk, since it covers the bytes before it.
absl::Status ReadChecksum(uint32_t wire, const uint8_t* p, const uint8_t* end, size_t offset,
                          ChunkColumns* out) {
  constexpr uint32_t kField = proto::Chunk::kCrc32CFieldNumber;
  if (wire != static_cast<uint32_t>(WireType::kFixed32)) {
    return absl::DataLossError(absl::StrCat("the checksum field (crc32c, field ", kField,
                                            ") has wire type ", wire, ", not fixed32"));
  }
  const size_t left = static_cast<size_t>(end - p);
  if (left < kFixed32Bytes) {
    return absl::DataLossError(absl::StrCat("the checksum field (crc32c, field ", kField,
                                            ") is cut short: ", left, " of its ", kFixed32Bytes,
                                            " bytes"));
  }
  if (left > kFixed32Bytes) {
    return absl::DataLossError(absl::StrCat(
        "the checksum field (crc32c, field ", kField, ") is not the chunk's last field: ",
        left - kFixed32Bytes, " bytes follow it, which it would not cover"));
  }
  out->has_crc32c = true;
  out->crc32c = LoadFixed32(p);
  out->crc32c_offset = offset;
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseChunkColumns(absl::string_view bytes, ChunkColumns* out) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  // The ops column as one view while it comes in one packed record (what
  // writers produce); copied into owned_ops once it comes in pieces.
  bool ops_owned = false;
  auto own_ops = [&]() {
    if (!ops_owned) out->owned_ops.assign(out->ops.data(), out->ops.size());
    ops_owned = true;
  };
  const uint8_t* const begin = p;
  while (p < end) {
    const uint8_t* const field_start = p;
    uint64_t tag;
    if (!ReadVarint(&p, end, &tag))
      return absl::DataLossError("corrupt varint in a chunk field tag");
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const uint32_t wire = tag & 7;
    if (field == proto::Chunk::kCrc32CFieldNumber) {
      const size_t offset = static_cast<size_t>(field_start - begin);
      if (absl::Status s = ReadChecksum(wire, p, end, offset, out); !s.ok()) return s;
      p = end;
      continue;
    }
    if (wire == static_cast<uint32_t>(WireType::kVarint)) {
      if (IsDefinition(field)) return WrongWireType(field, wire, "length-delimited");
      uint64_t v;
      if (!ReadVarint(&p, end, &v)) return absl::DataLossError("corrupt varint in a chunk field");
      if (field == proto::Chunk::kFirstEventFieldNumber) {
        out->first_event = v;
      } else if (field == proto::Chunk::kOpsFieldNumber) {  // one unpacked op
        own_ops();
        AppendVarint(v, &out->owned_ops);
      } else if (std::vector<uint64_t>* column = Column(out, field)) {
        column->push_back(v);
      }
      continue;
    }
    if (wire == static_cast<uint32_t>(WireType::kFixed64) ||
        wire == static_cast<uint32_t>(WireType::kFixed32)) {  // unknown field: skip
      if (field == proto::Chunk::kFirstEventFieldNumber || IsDefinition(field) ||
          field == proto::Chunk::kOpsFieldNumber || Column(out, field) != nullptr) {
        return WrongWireType(field, wire, "a varint or length-delimited");
      }
      const size_t n = wire == static_cast<uint32_t>(WireType::kFixed64) ? 8 : 4;
      if (static_cast<size_t>(end - p) < n) return absl::DataLossError("truncated chunk field");
      p += n;
      continue;
    }
    if (wire != static_cast<uint32_t>(WireType::kLengthDelimited)) {
      return absl::DataLossError(absl::StrCat("chunk field ", field, " has wire type ", wire));
    }
    uint64_t len;
    if (!ReadVarint(&p, end, &len) || len > static_cast<uint64_t>(end - p)) {
      return absl::DataLossError(absl::StrCat("chunk field ", field, " overruns its packet"));
    }
    const uint8_t* const field_end = p + len;
    if (field == proto::Chunk::kFirstEventFieldNumber) return WrongWireType(field, wire, "varint");
    if (field == proto::Chunk::kOpsFieldNumber) {
      const absl::string_view piece(reinterpret_cast<const char*>(p), len);
      if (out->ops.data() == nullptr && !ops_owned) {
        out->ops = piece;
      } else {
        own_ops();
        out->owned_ops.append(piece.data(), piece.size());
      }
    } else if (IsDefinition(field)) {
      if (absl::Status s = ParseDefinition(field, p, len, out); !s.ok()) return s;
    } else if (std::vector<uint64_t>* column = Column(out, field)) {
      if (!ReadPacked(p, field_end, column)) {
        return absl::DataLossError(absl::StrCat("corrupt varint in chunk column ", field));
      }
    }  // else a field from a newer minor revision: skip it
    p = field_end;
  }
  if (ops_owned) out->ops = out->owned_ops;
  return absl::OkStatus();
}

uint32_t DenseIdMap::FindOrAdd(uint32_t id) {
  const uint32_t found = Find(id);
  if (found != kNone) return found;
  const uint32_t index = size();
  ids_.push_back(id);
  if (id < kDirect || id < 4 * uint64_t{ids_.size()}) {
    if (id >= direct_.size()) {
      direct_.resize(std::max<size_t>(size_t{id} + 1, 2 * direct_.size()), kNone);
    }
    direct_[id] = index;
  } else {
    large_.emplace(id, index);
  }
  return index;
}

ChunkDecoder::ChunkDecoder() {
  threads_.FindOrAdd(0);      // events before any SET_THREAD come from thread 0
  live_arenas_.push_back(0);  // index 0: no arena
}

absl::Status ChunkDecoder::ChunkError(const ChunkLocation& where, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat(where.path, ": byte ", where.byte, " (packet ", where.packet, "): ", what));
}

absl::Status ChunkDecoder::EventError(const Cursor& c, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(c.where.path, ": byte ", c.where.byte, " (chunk ",
                                          c.where.chunk, "), event ", c.event, ": ", what));
}

absl::Status ChunkDecoder::ShapeError(const ChunkLocation& where, const ChunkColumns& chunk,
                                      absl::string_view what) {
  return absl::DataLossError(absl::StrCat(where.path, ": byte ", where.byte, " (chunk ",
                                          where.chunk, "), event ", chunk.first_event, ": ", what));
}

absl::Status ChunkDecoder::AddShapes(const ChunkColumns& chunk, const ChunkLocation& where) {
  const size_t new_shapes = chunk.shape_elem_size.size();
  if (chunk.shape_count.size() != new_shapes || chunk.shape_align.size() != new_shapes ||
      (!chunk.shape_flags.empty() && chunk.shape_flags.size() != new_shapes)) {
    return ChunkError(where, "shape columns have different lengths");
  }
  for (size_t i = 0; i < new_shapes; ++i) {
    const uint64_t shape = shapes_.size();
    const uint64_t elem_size = chunk.shape_elem_size[i];
    const uint64_t count = chunk.shape_count[i];
    const uint64_t align = chunk.shape_align[i];
    // Shapes are defined before the chunk's events: name the first of them.
    const std::string at = absl::StrCat("shape ", shape, ", defined with this chunk,");
    if (align == 0 || (align & (align - 1)) != 0) {
      return ShapeError(where, chunk,
                        absl::StrCat(at, " has alignment ", align, ", not a power of two"));
    }
    if (align > kMaxAlignment) {
      return ShapeError(where, chunk,
                        absl::StrCat(at, " has alignment ", align, ", over the limit of ",
                                     kMaxAlignment, " (2 MiB)"));
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(elem_size, count, &bytes) || bytes > kMaxAllocationBytes) {
      return ShapeError(
          where, chunk,
          absl::StrCat(at, " is ", elem_size, " x ", count, " bytes, over the limit of ",
                       kMaxAllocationBytes, " bytes (2^47, the address space)"));
    }
    const bool zeroed = !chunk.shape_flags.empty() && (chunk.shape_flags[i] & kShapeZeroed);
    shapes_.push_back(Shape{elem_size, count, align, zeroed});
  }
  return absl::OkStatus();
}

absl::Status ChunkDecoder::AddClasses(const ChunkColumns& chunk, const ChunkLocation& where) {
  for (const ClassDef& def : chunk.class_defs) {
    if (def.id == 0) {
      return ShapeError(where, chunk,
                        absl::StrCat("class \"", def.name,
                                     "\", defined with this chunk, has id 0, the unnamed class's"));
    }
    auto [it, inserted] = classes_.try_emplace(def.id, def);
    if (!inserted && it->second != def) {
      const ClassDef& old = it->second;
      return ShapeError(
          where, chunk,
          absl::StrCat("class ", def.id, " is defined again with different content: \"", old.name,
                       "\" (", old.elem_size, " bytes", old.tagged ? ", tagged" : "",
                       ") before, \"", def.name, "\" (", def.elem_size, " bytes",
                       def.tagged ? ", tagged" : "", ") in this chunk"));
    }
  }
  return absl::OkStatus();
}

absl::Status ChunkDecoder::ArenaClass(Cursor& c, uint32_t index, Event* e) {
  uint64_t cls = 0;
  if (!c.chunk.arena_class.empty()) {
    if (c.next_arena_class >= c.chunk.arena_class.size()) {
      return EventError(c, "ARENA_CREATE without its class: the arena_class column is exhausted");
    }
    cls = c.chunk.arena_class[c.next_arena_class++];
    if (cls != 0 && (cls > UINT32_MAX || !classes_.contains(static_cast<uint32_t>(cls)))) {
      return EventError(c, absl::StrCat("ARENA_CREATE of arena ", arena_id(index), " names class ",
                                        cls, ", which is not defined"));
    }
  }
  if (cls != 0 && index >= arena_classes_.size()) arena_classes_.resize(size_t{index} + 1, 0);
  if (index < arena_classes_.size()) arena_classes_[index] = static_cast<uint32_t>(cls);
  e->shape = static_cast<uint32_t>(cls);
  return absl::OkStatus();
}

absl::Status ChunkDecoder::Alloc(Cursor& c, uint64_t payload, Event* e) {
  const uint64_t shape = payload >> 1;
  if (shape >= shapes_.size()) {
    return EventError(c, absl::StrCat("ALLOC of shape ", shape, " but only ", shapes_.size(),
                                      " shapes are defined"));
  }
  uint64_t id;
  if (payload & 1) {
    if (c.next_id >= c.chunk.ids.size()) {
      return EventError(c, "ALLOC with an explicit id, but the ids column is exhausted");
    }
    id = c.chunk.ids[c.next_id++];
    // Dense ids: a freed id or the next never-used one.
    if (id > live_.size() || id >= kMaxObjectIds) {
      return EventError(c, absl::StrCat("ALLOC of object ", id, ", beyond the limit of ",
                                        std::min<uint64_t>(live_.size(), kMaxObjectIds - 1),
                                        " (ids are dense: a freed id or the next unused one)"));
    }
    if (id == live_.size()) live_.push_back(0);
    if (live_[id]) {
      return EventError(c, absl::StrCat("ALLOC of object ", id, ", which is already live"));
    }
  } else {
    // Ids made live again by an explicit ALLOC are skipped.
    while (!free_ids_.empty() && live_[free_ids_.back()]) free_ids_.pop_back();
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      id = live_.size();
      if (id >= kMaxObjectIds) {
        return EventError(c, absl::StrCat("ALLOC of object ", id, ", over the limit of ",
                                          kMaxObjectIds - 1, " object ids"));
      }
      live_.push_back(0);
    }
  }
  if (cur_arena_id_ != 0 && (cur_arena_ == 0 || !live_arenas_[cur_arena_])) {
    return EventError(c, absl::StrCat("ALLOC in arena ", cur_arena_id_,
                                      ", which is not live (never created, or destroyed)"));
  }
  live_[id] = 1;
  e->object = static_cast<uint32_t>(id);
  e->shape = static_cast<uint32_t>(shape);
  return absl::OkStatus();
}

absl::Status ChunkDecoder::FreeOrRealloc(Cursor& c, OpKind kind, uint64_t payload, Event* e) {
  const int64_t id = c.prev_free + ZigZagDecode(payload);
  if (id < 0 || static_cast<uint64_t>(id) >= live_.size() || !live_[id]) {
    return EventError(c, absl::StrCat(OpKindName(kind), " of object ", id, ", which is not live"));
  }
  c.prev_free = id;
  live_[id] = 0;
  free_ids_.push_back(static_cast<uint32_t>(id));
  if (kind == OpKind::kFree) {
    e->object = static_cast<uint32_t>(id);
    return absl::OkStatus();
  }
  if (c.next_arg >= c.chunk.args.size()) {
    return EventError(c, "REALLOC without its shape in the args column");
  }
  const uint64_t shape = c.chunk.args[c.next_arg++];
  if (shape >= shapes_.size()) {
    return EventError(c, absl::StrCat("REALLOC to shape ", shape, " but only ", shapes_.size(),
                                      " shapes are defined"));
  }
  const uint32_t new_id = free_ids_.back();  // the old id, reused at once
  free_ids_.pop_back();
  live_[new_id] = 1;
  e->old_object = static_cast<uint32_t>(id);
  e->object = new_id;
  e->shape = static_cast<uint32_t>(shape);
  return absl::OkStatus();
}

absl::Status ChunkDecoder::Arena(Cursor& c, OpKind kind, uint64_t payload, Event* e) {
  if (payload == 0 || payload > UINT32_MAX) {
    return EventError(c, absl::StrCat(OpKindName(kind), " of arena ", payload,
                                      payload == 0 ? ", which is the global heap, not an arena"
                                                   : ", over the limit of 4294967295 (32 bits)"));
  }
  const uint32_t id = static_cast<uint32_t>(payload);
  const bool creating = kind == OpKind::kArenaCreate;
  uint32_t index = arenas_.Find(id);
  if (index == DenseIdMap::kNone) {
    if (!creating) {
      return EventError(c, absl::StrCat("ARENA_DESTROY of arena ", id, ", which is not live"));
    }
    index = arenas_.FindOrAdd(id);
    live_arenas_.push_back(0);
  }
  ++index;  // arena indexes start at 1
  if (live_arenas_[index] == creating) {
    return EventError(c,
                      absl::StrCat(OpKindName(kind), " of arena ", id,
                                   creating ? ", which is already live" : ", which is not live"));
  }
  live_arenas_[index] = creating;
  if (id == cur_arena_id_) {
    cur_arena_ = index;
    cur_arena_usable_ = creating;
  }
  e->arena = index;
  e->object = 0;
  return creating ? ArenaClass(c, index, e) : absl::OkStatus();
}

absl::Status ChunkDecoder::SetArena(Cursor& c, uint64_t payload) {
  if (payload > UINT32_MAX) {
    return EventError(
        c, absl::StrCat("SET_ARENA to ", payload, ", over the limit of 4294967295 (32 bits)"));
  }
  cur_arena_id_ = static_cast<uint32_t>(payload);
  const uint32_t index = cur_arena_id_ == 0 ? DenseIdMap::kNone : arenas_.Find(cur_arena_id_);
  cur_arena_ = index == DenseIdMap::kNone ? 0 : index + 1;
  cur_arena_usable_ = cur_arena_id_ == 0 || (cur_arena_ != 0 && live_arenas_[cur_arena_]);
  return absl::OkStatus();
}

absl::Status ChunkDecoder::SetThread(Cursor& c, uint64_t payload) {
  if (payload > UINT32_MAX) {
    return EventError(
        c, absl::StrCat("SET_THREAD to ", payload, ", over the limit of 4294967295 (32 bits)"));
  }
  cur_thread_ = threads_.FindOrAdd(static_cast<uint32_t>(payload));
  return absl::OkStatus();
}

absl::Status ChunkDecoder::BeginChunk(const ChunkColumns& chunk, const ChunkLocation& where) {
  if (chunk.first_event != events_read_) {
    return ChunkError(
        where, absl::StrCat("chunk starts at event ", chunk.first_event, " but ", events_read_,
                            " events precede it (a chunk is missing or repeated)"));
  }
  if (absl::Status s = AddShapes(chunk, where); !s.ok()) return s;
  return AddClasses(chunk, where);
}

absl::Status ChunkDecoder::EndChunk(const Cursor& c) {
  if (c.next_id != c.chunk.ids.size() || c.next_arg != c.chunk.args.size()) {
    return ChunkError(c.where, "chunk has unused values in its ids or args column");
  }
  if (c.next_arena_class != c.chunk.arena_class.size()) {
    return ChunkError(c.where, absl::StrCat("chunk has ", c.chunk.arena_class.size(),
                                            " values in its arena_class column but creates ",
                                            c.next_arena_class, " arenas"));
  }
  events_read_ = c.event;
  return absl::OkStatus();
}

absl::Status ChunkDecoder::Decode(const ChunkColumns& chunk, const ChunkLocation& where,
                                  std::vector<Event>* events) {
  // At most one event per byte of ops.
  events->reserve(events->size() + chunk.ops.size());
  return DecodeEach(
      chunk, where,
      [events](const Event& e) {
        events->push_back(e);
        return absl::OkStatus();
      },
      [](uint32_t) {});
}

}  // namespace alloctrace
