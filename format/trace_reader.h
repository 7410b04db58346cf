// TraceReader: streams a trace file chunk by chunk, validating as it goes.
//
// Only one packet is in memory at a time. Every error is an absl::Status
// whose message names the file, the byte offset of the packet at fault and,
// for a bad event, the event's index, e.g.
//   traces/x.trace: byte 1234 (chunk 3), event 70001: FREE of object 12, which is not live
// Checks: empty file, a file that is not a trace (no header, wrong magic), a
// format newer than this reader, bad framing or varints, packets that do not
// parse, chunks out of order, shape and id references out of range, frees
// of objects that are not live, allocations of ids already live, arena
// misuse, and a footer that disagrees with what was read.
//
// A recording that was cut short (no footer, or a last packet that ends
// early) is not an error: every complete chunk is delivered, then NextChunk
// returns false and cut_short() says why the trace ends early.
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_TRACE_READER_H_
#define ALLOCTRACE_FORMAT_TRACE_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/trace.pb.h"
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
  uint32_t shape;       // kAlloc/kRealloc: index into TraceReader::shapes()
  uint64_t time_ns;     // last TIMESTAMP before the event, 0 if none
};

class TraceReader {
 public:
  // Opens `path` and reads its header.
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  ~TraceReader();

  const proto::Header& header() const { return header_; }

  // Replaces *events with the next chunk's events. Returns false when there
  // are no more chunks (the footer was read, or the file was cut short).
  absl::StatusOr<bool> NextChunk(std::vector<Event>* events);

  // After NextChunk returned false:
  bool has_footer() const { return has_footer_; }
  const proto::Footer& footer() const { return footer_; }
  // Non-empty if the file ends without a footer: what the end looks like.
  const std::string& cut_short() const { return cut_short_; }

  // The shape table so far (grows as chunks are read).
  const std::vector<Shape>& shapes() const { return shapes_; }
  uint64_t events_read() const { return events_read_; }
  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t file_size() const { return file_size_; }
  // Highest object id used so far, plus one: the size a replay table needs.
  uint32_t object_id_limit() const { return static_cast<uint32_t>(live_.size()); }

 private:
  TraceReader(std::FILE* file, std::string path, uint64_t file_size);
  // Reads the next framed packet into packet_bytes_. Returns false at a clean
  // end of file or a cut-short final packet (sets cut_short_).
  absl::StatusOr<bool> ReadPacket();
  // A chunk's columns: the ops still encoded, the small ones decoded.
  struct ChunkView {
    uint64_t first_event = 0;
    const uint8_t* ops = nullptr;
    size_t ops_size = 0;
    std::vector<uint64_t> shape_elem_size, shape_count, shape_align, shape_flags, ids, args;
  };
  // Parses packet_bytes_ as a chunk without protobuf when it has the layout
  // writers produce; returns false (nothing consumed) otherwise.
  absl::StatusOr<bool> TryDecodeChunkWire(std::vector<Event>* events);
  absl::Status DecodeChunk(const ChunkView& chunk, std::vector<Event>* events);
  absl::Status Error(const std::string& what) const;
  absl::Status EventError(uint64_t event, const std::string& what) const;

  std::FILE* file_;
  std::string path_;
  uint64_t file_size_;
  uint64_t offset_ = 0;         // bytes consumed
  uint64_t packet_offset_ = 0;  // where the current packet's frame starts
  uint64_t packet_index_ = 0;
  std::string packet_bytes_;
  proto::Packet packet_;
  std::string fallback_ops_;

  proto::Header header_;
  proto::Footer footer_;
  bool has_footer_ = false;
  bool done_ = false;
  std::string cut_short_;

  // Decoder state carried from chunk to chunk (mirrors TraceWriter).
  std::vector<Shape> shapes_;
  std::vector<uint8_t> live_;      // by object id
  std::vector<uint32_t> free_ids_;
  std::vector<uint8_t> live_arenas_;  // by arena id
  uint32_t cur_thread_ = 0;
  uint32_t cur_arena_ = 0;
  uint64_t time_ns_ = 0;
  uint64_t events_read_ = 0;
  uint64_t chunks_read_ = 0;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_TRACE_READER_H_
