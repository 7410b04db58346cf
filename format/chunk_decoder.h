// ChunkDecoder: turns one Chunk packet's bytes into events, validating every
// op against the state the previous chunks left (format in
// proto/trace.proto). The decoding layer of TraceReader, apart from the
// framing (packet_reader.h).
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_CHUNK_DECODER_H_
#define ALLOCTRACE_FORMAT_CHUNK_DECODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/wire.h"

namespace alloctrace {

// One decoded event. Bookkeeping ops (SET_ARENA, SET_THREAD, TIMESTAMP) are
// folded into the fields of the events they apply to.
//
// Thread and arena ids may be any 32-bit value in a trace; events carry them
// as dense indexes instead (threads from 0, arenas from 1, 0 = no arena, in
// order of first appearance), so a table by index is as long as the trace
// has threads or arenas, whatever their ids. For traces a TraceWriter wrote,
// whose arena ids are already dense from 1, index and id coincide.
// ChunkDecoder::arena_id() maps an index back to the trace's id.
struct Event {
  OpKind kind;          // kAlloc, kFree, kRealloc, kArenaCreate, kArenaDestroy
  uint32_t thread;      // dense thread index
  uint32_t arena;       // dense arena index; kArenaCreate/kArenaDestroy: the
                        // arena itself; kFree: the current arena (0 if it
                        // was never created)
  uint32_t object;      // kAlloc/kFree: the object; kRealloc: the new object
  uint32_t old_object;  // kRealloc: the object it replaces
  uint32_t shape;       // kAlloc/kRealloc: index into the shape table;
                        // kArenaCreate: the arena's class id (0: unnamed)
  uint64_t time_ns;     // last TIMESTAMP before the event, 0 if none
};

// A chunk's columns as they are on the wire: the ops still encoded (they are
// decoded once, straight into events), the short columns decoded.
struct ChunkColumns {
  uint64_t first_event = 0;
  absl::string_view ops;  // packed varints
  std::vector<uint64_t> shape_elem_size, shape_count, shape_align, shape_flags, ids, args;
  std::vector<uint64_t> arena_class;  // empty: every arena created here is unnamed
  std::vector<ClassDef> class_defs;
  std::vector<uint64_t> site;  // empty: the chunk's allocations have no call sites
  std::vector<StackDef> stack_defs;
  std::vector<ModuleDef> module_defs;
  // Chunk.crc32c, if the chunk has it, and where its tag starts: the
  // checksum is that of the chunk's first crc32c_offset bytes. Checked by
  // the caller (TraceReader), which knows whether those bytes are as written.
  bool has_crc32c = false;
  uint32_t crc32c = 0;
  size_t crc32c_offset = 0;
  // Backs `ops` when the column was not one packed record in the input.
  std::string owned_ops;
};

// Parses the bytes of a Chunk message. Accepts any valid encoding of it
// (packed or unpacked columns, a column split over several records, fields
// in any order, unknown fields skipped); `ops` may point into `bytes`. The
// one exception is the checksum: a crc32c field that is not a fixed32, or
// that is not the chunk's last field, is an error (it covers the bytes
// before it, so bytes after it would go unchecked); it is read, not checked.
// Errors say what is wrong, without a location (the caller adds it).
absl::Status ParseChunkColumns(absl::string_view bytes, ChunkColumns* out);

// Where the chunk being decoded sits in its file, for error messages.
struct ChunkLocation {
  absl::string_view path;
  uint64_t byte = 0;    // offset of the chunk's packet
  uint64_t packet = 0;  // packets before it
  uint64_t chunk = 0;   // chunks before it
};

// Maps 32-bit ids to dense indexes in order of first sight. Small ids (the
// common case) are looked up in a table, others in a hash map.
class DenseIdMap {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};
  // The index of `id`, or kNone if it was never added.
  uint32_t Find(uint32_t id) const {
    if (id < direct_.size()) {
      const uint32_t index = direct_[id];
      if (index != kNone || large_.empty()) return index;
    } else if (large_.empty()) {
      return kNone;
    }
    auto it = large_.find(id);
    return it == large_.end() ? kNone : it->second;
  }
  // The index of `id`, given the next free index if it is new.
  uint32_t FindOrAdd(uint32_t id);
  // Ids in order of their index.
  const std::vector<uint32_t>& ids() const { return ids_; }
  uint32_t size() const { return static_cast<uint32_t>(ids_.size()); }

 private:
  // An id goes in the table by id if it is below kDirect or below four
  // times the ids seen (so the table stays within a few times the trace's
  // own count of ids, whatever id a corrupt trace names): a trace's dense
  // ids (arenas from 1, in order of creation) never reach the hash map,
  // which cost a fifth of loading a trace of 2.8 M arenas. An id added to
  // the hash map stays there.
  static constexpr uint32_t kDirect = 1 << 16;
  std::vector<uint32_t> direct_;  // by id, grown as needed
  absl::flat_hash_map<uint32_t, uint32_t> large_;
  std::vector<uint32_t> ids_;
};

// Validation limits: what a trace may ask for, whatever its file says. Each
// is a property of the machine or of the format, not a guess at sizes.
//
// An allocation's bytes (elem_size * count, computed without overflow) may
// not exceed the x86-64 user address space.
inline constexpr uint64_t kMaxAllocationBytes = uint64_t{1} << 47;
// Alignments are powers of two up to 2 MiB, the huge-page size: the largest
// alignment allocation code asks for in practice (aligned_alloc, posix_memalign).
inline constexpr uint64_t kMaxAlignment = uint64_t{2} << 20;
// Object ids are dense (proto/trace.proto): an explicit id is a freed one or
// the next never-used one, so the id space grows by at most one per ALLOC
// and every table by object id stays as long as the trace's own count of
// distinct ids. Ids are 32-bit; one value is kept out of range.
inline constexpr uint64_t kMaxObjectIds = ~uint32_t{0};

class ChunkDecoder {
 public:
  ChunkDecoder();

  // Validates `chunk` and appends its events to *events. Errors name the
  // file, the byte offset of the chunk and, for a bad op, the event index:
  //   PATH: byte B (chunk C), event E: FREE of object 12, which is not live
  absl::Status Decode(const ChunkColumns& chunk, const ChunkLocation& where,
                      std::vector<Event>* events);

  // Validates `chunk` as Decode does, but hands each event to
  // on_event(const Event&) -> absl::Status as soon as it is validated, with
  // no per-chunk array. The first error, the decoder's or on_event's, ends
  // the chunk and is returned; the events before it were already delivered.
  // on_ahead(uint32_t object) is called, kLookahead ops before the FREE or
  // REALLOC that will touch `object`, so the caller can prefetch its own
  // record of it: with a million live objects, tables by object id are far
  // larger than the caches. It is also called for other ops, with an
  // object of an earlier call. `object` is unvalidated (a corrupt trace may
  // name any id): bound-check it before use.
  template <typename OnEvent, typename OnAhead>
  absl::Status DecodeEach(const ChunkColumns& chunk, const ChunkLocation& where, OnEvent&& on_event,
                          OnAhead&& on_ahead);
  // How far ahead, in ops, on_ahead and the decoder's own prefetch run:
  // far enough to cover a miss to memory at a few ns per op (the scout's
  // ring holds this many decoded ops).
  static constexpr int kLookahead = 24;

  // The shape table so far (grows as chunks are decoded).
  const std::vector<Shape>& shapes() const { return shapes_; }
  uint64_t events_read() const { return events_read_; }
  // Highest object id used so far, plus one: the size a table by object id needs.
  uint32_t object_id_limit() const { return static_cast<uint32_t>(live_.size()); }
  // Arena indexes used so far, plus one (index 0, no arena, always counts):
  // the size a table by Event::arena needs.
  uint32_t arena_index_limit() const { return arenas_.size() + 1; }
  // The trace's id of arena index `index` (0 for 0).
  uint32_t arena_id(uint32_t index) const { return index == 0 ? 0 : arenas_.ids()[index - 1]; }
  // The class table so far, by id (class 0, unnamed, is not in it).
  const absl::flat_hash_map<uint32_t, ClassDef>& classes() const { return classes_; }
  // The class of arena index `index` at its latest creation (0: unnamed,
  // also for index 0 and arenas never created).
  uint32_t arena_class(uint32_t index) const {
    return index < arena_classes_.size() ? arena_classes_[index] : 0;
  }
  // Thread indexes used so far: the size a table by Event::thread needs.
  uint32_t thread_index_limit() const { return threads_.size(); }
  // The trace's id of thread index `index`.
  uint32_t thread_id(uint32_t index) const { return threads_.ids()[index]; }

 private:
  // Per-chunk decoding position in the side columns.
  struct Cursor {
    const ChunkColumns& chunk;
    const ChunkLocation& where;
    size_t next_id = 0;
    size_t next_arg = 0;
    size_t next_arena_class = 0;
    int64_t prev_free = 0;
    uint64_t event = 0;
  };

  // Decodes the ops column ahead of the decoder, into a ring the decoder
  // takes its ops from (so each op's varint is decoded once), and follows
  // the delta chain of FREE and REALLOC ids, so what they will touch can be
  // fetched early. Stops at the end or at a corrupt varint, which the
  // decoder reports when it gets there.
  struct Scout {
    static constexpr size_t kRing = 32;  // a power of two over kLookahead
    static_assert(kRing > static_cast<size_t>(kLookahead),
                  "the ring holds the ops the scout is ahead by");
    const uint8_t* pos;
    const uint8_t* end;
    // Unsigned, so a hostile chain wraps instead of overflowing; the decoder
    // stops at the first id out of range, before the two chains could part.
    uint64_t prev_free = 0;
    uint64_t ops[kRing];
    uint64_t decoded = 0;  // ops put in the ring so far
    bool corrupt = false;  // stopped at a corrupt varint
    static constexpr uint64_t kNoObject = ~uint64_t{0};
    // Decodes one more op into the ring. Returns the object it frees or
    // reallocs, or, for any other op, the last such object again (fetching
    // it twice costs less than a branch on the op's kind, which random
    // orders of ALLOC and FREE mispredict); kNoObject at the end.
    ABSL_ATTRIBUTE_ALWAYS_INLINE uint64_t Next() {
      if (pos >= end) return kNoObject;
      uint64_t op;
      if (!ReadVarint(&pos, end, &op)) {
        pos = end;
        corrupt = true;
        return kNoObject;
      }
      ops[decoded++ % kRing] = op;
      const auto kind = static_cast<OpKind>(op & kOpKindMask);
      const uint64_t id = prev_free + static_cast<uint64_t>(ZigZagDecode(op >> kOpKindBits));
      prev_free = kind == OpKind::kFree || kind == OpKind::kRealloc ? id : prev_free;
      return prev_free;
    }
  };

  // Takes the scout one op further; prefetches what a FREE or REALLOC there
  // will touch.
  template <typename OnAhead>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void LookAhead(Scout& scout, OnAhead& on_ahead) {
    const uint64_t id = scout.Next();
    if (id < live_.size()) {  // kNoObject never is
      __builtin_prefetch(&live_[static_cast<size_t>(id)], 1);
      on_ahead(static_cast<uint32_t>(id));
    }
  }

  // Checks the chunk's position and adds its shapes: the work before its ops.
  absl::Status BeginChunk(const ChunkColumns& chunk, const ChunkLocation& where);
  // Checks the side columns were used up; counts the chunk's events.
  absl::Status EndChunk(const Cursor& c);
  absl::Status AddShapes(const ChunkColumns& chunk, const ChunkLocation& where);
  absl::Status AddClasses(const ChunkColumns& chunk, const ChunkLocation& where);
  // The class of the ARENA_CREATE at hand, from the arena_class column.
  absl::Status ArenaClass(Cursor& c, uint32_t index, Event* e);
  absl::Status Alloc(Cursor& c, uint64_t payload, Event* e);
  absl::Status FreeOrRealloc(Cursor& c, OpKind kind, uint64_t payload, Event* e);
  absl::Status Arena(Cursor& c, OpKind kind, uint64_t payload, Event* e);
  absl::Status SetArena(Cursor& c, uint64_t payload);
  absl::Status SetThread(Cursor& c, uint64_t payload);

  static absl::Status ChunkError(const ChunkLocation& where, absl::string_view what);
  static absl::Status EventError(const Cursor& c, absl::string_view what);
  // A bad shape, named at the first event of the chunk that defines it.
  static absl::Status ShapeError(const ChunkLocation& where, const ChunkColumns& chunk,
                                 absl::string_view what);

  std::vector<Shape> shapes_;
  std::vector<uint8_t> live_;  // by object id
  // Freed ids, most recent last. May hold ids since made live again by an
  // explicit ALLOC; an implicit ALLOC skips those.
  std::vector<uint32_t> free_ids_;
  DenseIdMap arenas_;                 // trace id -> index - 1
  std::vector<uint8_t> live_arenas_;  // by arena index
  absl::flat_hash_map<uint32_t, ClassDef> classes_;
  std::vector<uint32_t> arena_classes_;  // by arena index, grown as classes are named
  DenseIdMap threads_;                   // trace id -> index
  uint32_t cur_thread_ = 0;              // index
  uint32_t cur_arena_id_ = 0;            // the trace's id
  uint32_t cur_arena_ = 0;               // its index, 0 if it was never created
  // cur_arena_id_ is 0 (the global heap) or a live arena: an ALLOC there is
  // valid. Kept up to date by SET_ARENA and ARENA_CREATE/DESTROY, so the
  // inline ALLOC needs one test (traces whose every event is in an arena
  // are common).
  bool cur_arena_usable_ = true;
  uint64_t time_ns_ = 0;
  uint64_t events_read_ = 0;
};

template <typename OnEvent, typename OnAhead>
absl::Status ChunkDecoder::DecodeEach(const ChunkColumns& chunk, const ChunkLocation& where,
                                      OnEvent&& on_event, OnAhead&& on_ahead) {
  if (absl::Status s = BeginChunk(chunk, where); !s.ok()) return s;
  Cursor c{chunk, where};
  c.event = events_read_;
  const uint8_t* const begin = reinterpret_cast<const uint8_t*>(chunk.ops.data());
  // The scout runs kLookahead ops ahead; live_ (a byte per id, a megabyte
  // for a million objects) is fetched from memory while the ops between are
  // decoded, instead of stalling the FREE that reads it.
  Scout scout{begin, begin + chunk.ops.size()};
  for (int i = 0; i < kLookahead; ++i) LookAhead(scout, on_ahead);
  for (uint64_t next = 0;; ++next) {
    if (ABSL_PREDICT_FALSE(next == scout.decoded)) {  // the scout stopped
      if (scout.corrupt) return EventError(c, "corrupt varint in the ops column");
      break;
    }
    LookAhead(scout, on_ahead);
    const uint64_t op = scout.ops[next % Scout::kRing];
    const auto kind = static_cast<OpKind>(op & kOpKindMask);
    const uint64_t payload = op >> kOpKindBits;
    Event e{kind, cur_thread_, cur_arena_, 0, 0, 0, time_ns_};
    absl::Status s;
    switch (kind) {
      // The common ALLOC and FREE are handled here, inline; every other
      // case, and every error, in Alloc and FreeOrRealloc, which repeat
      // these checks before reporting.
      case OpKind::kAlloc:
        if (ABSL_PREDICT_TRUE((payload & 1) == 0 && (payload >> 1) < shapes_.size() &&
                              cur_arena_usable_ && !free_ids_.empty() &&
                              !live_[free_ids_.back()])) {
          // An implicit id: the most recently freed one.
          const uint32_t id = free_ids_.back();
          free_ids_.pop_back();
          live_[id] = 1;
          e.object = id;
          e.shape = static_cast<uint32_t>(payload >> 1);
          break;
        }
        s = Alloc(c, payload, &e);
        break;
      case OpKind::kFree: {
        const uint64_t id =
            static_cast<uint64_t>(c.prev_free) + static_cast<uint64_t>(ZigZagDecode(payload));
        if (ABSL_PREDICT_TRUE(id < live_.size() && live_[id])) {
          c.prev_free = static_cast<int64_t>(id);
          live_[id] = 0;
          free_ids_.push_back(static_cast<uint32_t>(id));
          e.object = static_cast<uint32_t>(id);
          break;
        }
        s = FreeOrRealloc(c, kind, payload, &e);
        break;
      }
      case OpKind::kRealloc:
        s = FreeOrRealloc(c, kind, payload, &e);
        break;
      case OpKind::kArenaCreate:
      case OpKind::kArenaDestroy:
        s = Arena(c, kind, payload, &e);
        break;
      case OpKind::kSetArena:
        if (s = SetArena(c, payload); !s.ok()) return s;
        continue;
      case OpKind::kSetThread:
        if (s = SetThread(c, payload); !s.ok()) return s;
        continue;
      case OpKind::kTimestamp:
        time_ns_ += payload;
        continue;
    }
    if (ABSL_PREDICT_FALSE(!s.ok())) return s;
    if (s = on_event(e); ABSL_PREDICT_FALSE(!s.ok())) return s;
    ++c.event;
  }
  return EndChunk(c);
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_CHUNK_DECODER_H_
