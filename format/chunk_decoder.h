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
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "format/trace_format.h"

namespace alloctrace {

// One decoded event. Bookkeeping ops (SET_ARENA, SET_THREAD, TIMESTAMP) are
// folded into the fields of the events they apply to.
struct Event {
  OpKind kind;          // kAlloc, kFree, kRealloc, kArenaCreate, kArenaDestroy
  uint32_t thread;
  uint32_t arena;       // kArenaCreate/kArenaDestroy: the arena itself
  uint32_t object;      // kAlloc/kFree: the object; kRealloc: the new object
  uint32_t old_object;  // kRealloc: the object it replaces
  uint32_t shape;       // kAlloc/kRealloc: index into the shape table
  uint64_t time_ns;     // last TIMESTAMP before the event, 0 if none
};

// A chunk's columns as they are on the wire: the ops still encoded (they are
// decoded once, straight into events), the short columns decoded.
struct ChunkColumns {
  uint64_t first_event = 0;
  absl::string_view ops;  // packed varints
  std::vector<uint64_t> shape_elem_size, shape_count, shape_align, shape_flags, ids, args;
  // Backs `ops` when the column was not one packed record in the input.
  std::string owned_ops;
};

// Parses the bytes of a Chunk message. Accepts any valid encoding of it
// (packed or unpacked columns, a column split over several records, fields
// in any order, unknown fields skipped); `ops` may point into `bytes`.
// Errors say what is wrong, without a location (the caller adds it).
absl::Status ParseChunkColumns(absl::string_view bytes, ChunkColumns* out);

// Where the chunk being decoded sits in its file, for error messages.
struct ChunkLocation {
  absl::string_view path;
  uint64_t byte = 0;    // offset of the chunk's packet
  uint64_t packet = 0;  // packets before it
  uint64_t chunk = 0;   // chunks before it
};

class ChunkDecoder {
 public:
  // Validates `chunk` and appends its events to *events. Errors name the
  // file, the byte offset of the chunk and, for a bad op, the event index:
  //   PATH: byte B (chunk C), event E: FREE of object 12, which is not live
  absl::Status Decode(const ChunkColumns& chunk, const ChunkLocation& where,
                      std::vector<Event>* events);

  // The shape table so far (grows as chunks are decoded).
  const std::vector<Shape>& shapes() const { return shapes_; }
  uint64_t events_read() const { return events_read_; }
  // Highest object id used so far, plus one: the size a table by object id needs.
  uint32_t object_id_limit() const { return static_cast<uint32_t>(live_.size()); }

 private:
  // Per-chunk decoding position in the side columns.
  struct Cursor {
    const ChunkColumns& chunk;
    const ChunkLocation& where;
    size_t next_id = 0;
    size_t next_arg = 0;
    int64_t prev_free = 0;
    uint64_t event = 0;
  };

  absl::Status AddShapes(const ChunkColumns& chunk, const ChunkLocation& where);
  absl::Status Alloc(Cursor& c, uint64_t payload, Event* e);
  absl::Status FreeOrRealloc(Cursor& c, OpKind kind, uint64_t payload, Event* e);
  absl::Status Arena(Cursor& c, OpKind kind, uint64_t payload, Event* e);
  absl::Status SetArena(Cursor& c, uint64_t payload);
  absl::Status SetThread(Cursor& c, uint64_t payload);

  static absl::Status ChunkError(const ChunkLocation& where, absl::string_view what);
  static absl::Status EventError(const Cursor& c, absl::string_view what);

  std::vector<Shape> shapes_;
  std::vector<uint8_t> live_;  // by object id
  std::vector<uint32_t> free_ids_;
  std::vector<uint8_t> live_arenas_;  // by arena id
  uint32_t cur_thread_ = 0;
  uint32_t cur_arena_ = 0;
  uint64_t time_ns_ = 0;
  uint64_t events_read_ = 0;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_CHUNK_DECODER_H_
