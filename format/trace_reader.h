// TraceReader: streams a trace file chunk by chunk, validating as it goes.
// The streaming API over the two layers: PacketReader (framing, a file cut
// short) and ChunkDecoder (one chunk's ops into events, validated).
//
// Only one packet is in memory at a time. Every error is an absl::Status
// whose message names the file, the byte offset of the packet at fault and,
// for a bad event, the event's index, e.g.
//   traces/x.trace: byte 1234 (chunk 3), event 70001: FREE of object 12, which is not live
// Checks: empty file, a file that is not a trace (no header, wrong magic), a
// format newer than this reader, bad framing or varints, packets that do not
// parse, a chunk whose checksum (Chunk.crc32c) is not that of its bytes or
// that lacks one when the header says every chunk has one, chunks out of
// order, shape and id references out of range, frees of objects that are
// not live, allocations of ids already live, arena misuse, arenas of
// classes never defined, classes defined twice with different content, and
// a footer that disagrees with what was read.
//
// A recording that was cut short (no footer, or a last packet that ends
// early) is not an error: every complete chunk is delivered, then NextChunk
// returns false and cut_short() says why the trace ends early. (A packet
// that runs past the end of a file that ends with a footer is an error: a
// damaged length, not a cut.)
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_TRACE_READER_H_
#define ALLOCTRACE_FORMAT_TRACE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "alloctrace/format/call_sites.h"
#include "alloctrace/format/chunk_decoder.h"
#include "alloctrace/format/packet_reader.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace {

class TraceReader {
 public:
  // Opens `path` and reads its header.
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);

  const proto::Header& header() const { return header_; }

  // Replaces *events with the next chunk's events. Returns false when there
  // are no more chunks (the footer was read, or the file was cut short).
  absl::StatusOr<bool> NextChunk(std::vector<Event>* events);

  // Reads every remaining chunk: calls on_chunk(const std::vector<Event>&)
  // once a chunk is decoded (the tables below have grown to cover it; the
  // events are there to look ahead in), then on_event(const Event&) for
  // each of its events. on_event returns absl::Status; the first error,
  // the reader's or on_event's, ends the walk and is returned.
  template <typename OnChunk, typename OnEvent>
  absl::Status ForEachEvent(OnChunk&& on_chunk, OnEvent&& on_event);

  // Reads every remaining chunk without collecting its events: calls
  // on_chunk() before each chunk, on_event(const Event&) -> absl::Status for
  // each event as soon as it is validated, and on_ahead(uint32_t object)
  // ahead of the FREE or REALLOC of `object` (see ChunkDecoder::DecodeEach:
  // a prefetch hint, unvalidated). The first error, the reader's or
  // on_event's, ends the walk and is returned. Unlike ForEachEvent the
  // tables below only cover the chunks before the current one: an event's
  // ids are below object_id_limit() and arena_index_limit() as of that event,
  // so tables by id grow when an ALLOC, REALLOC or ARENA_CREATE goes past
  // them. For the replay program builder: no array of events per chunk
  // (32 bytes an event, written and read back through the caches).
  template <typename OnChunk, typename OnEvent, typename OnAhead>
  absl::Status StreamEvents(OnChunk&& on_chunk, OnEvent&& on_event, OnAhead&& on_ahead);

  // The event count the file's last packet claims if it looks like a
  // footer, read from the end of the file at Open; 0 if it does not. Not
  // validated before the footer is reached (a footer that disagrees with
  // the events read is an error then), so only a hint, e.g. to size an
  // array once instead of growing it; never more than the file's size (an
  // event takes at least a byte).
  uint64_t footer_events_hint() const { return footer_events_hint_; }

  // After NextChunk returned false:
  bool has_footer() const { return has_footer_; }
  const proto::Footer& footer() const { return footer_; }
  // Non-empty if the file ends without a footer: what the end looks like.
  const std::string& cut_short() const { return cut_short_; }

  // The shape table so far (grows as chunks are read).
  const std::vector<Shape>& shapes() const { return decoder_.shapes(); }
  uint64_t events_read() const { return decoder_.events_read(); }
  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t file_size() const { return packets_->file_size(); }
  // Bytes read so far.
  uint64_t offset() const { return packets_->offset(); }
  // Highest object id used so far, plus one: the size a replay table needs.
  uint32_t object_id_limit() const { return decoder_.object_id_limit(); }
  // Dense indexes of arenas and threads (see Event): table sizes, and the
  // trace's ids behind them.
  uint32_t arena_index_limit() const { return decoder_.arena_index_limit(); }
  uint32_t arena_id(uint32_t index) const { return decoder_.arena_id(index); }
  uint32_t thread_index_limit() const { return decoder_.thread_index_limit(); }
  uint32_t thread_id(uint32_t index) const { return decoder_.thread_id(index); }
  // The class table so far, by id (format/trace_format.h). Empty for a
  // trace without classes: every arena is then of class 0, unnamed.
  const absl::flat_hash_map<uint32_t, ClassDef>& classes() const { return decoder_.classes(); }
  // The class id of arena index `index` (0: unnamed, and for index 0).
  uint32_t arena_class(uint32_t index) const { return decoder_.arena_class(index); }
  // The trace's call sites so far: its stack and module tables (empty for a
  // trace recorded without call sites), and the current chunk's site
  // column, one entry per ALLOC and REALLOC event in order (empty when the
  // chunk has none). Valid after NextChunk, or in ForEachEvent's on_chunk.
  // A damaged table or site column does not stop the read (the events do
  // not depend on it): the first such error is kept in call_sites_error()
  // (file, byte offset, chunk and, for a site, event index), and from
  // that chunk on every chunk's site column reads as empty.
  const CallSiteTable& call_sites() const { return call_sites_; }
  const std::vector<uint64_t>& chunk_sites() const { return columns_.site; }
  const std::string& call_sites_error() const { return call_sites_error_; }
  // Distinct threads that had events so far.
  uint64_t threads_seen() const { return threads_seen_; }

 private:
  explicit TraceReader(std::unique_ptr<PacketReader> packets);
  // Reads packets up to the next chunk and parses its columns into
  // columns_. Returns false when there are no more chunks.
  absl::StatusOr<bool> NextChunkColumns();
  // The packets ran out: records why the trace ends there (cut_short_) and
  // returns false, or an error where a footer says more chunks follow.
  absl::StatusOr<bool> EndOfPackets();
  // Parses `bytes` (a Chunk message) into columns_, checking its checksum.
  // `as_written`: the bytes are the chunk's in the file (else protobuf's
  // re-encoding of a chunk framed some other way, which a checksum cannot
  // cover).
  absl::Status ParseColumns(absl::string_view bytes, bool as_written);
  // "PATH: byte B (chunk K): what", B the chunk's packet's offset.
  absl::Status ChunkError(absl::string_view what) const;
  // OK if `stored` is the CRC32C of bytes[0, covered).
  absl::Status CheckCrc32c(absl::string_view bytes, size_t covered, uint32_t stored) const;
  // The checksum of the header or footer (`what`) in `packet`, the bytes of
  // the packet just read, which parsed as `message`: OK where it matches,
  // or where there is none and none is `promised` (a file written before
  // them); else "PATH: byte B (what): ...", B the packet's offset.
  // `tag_decides`: the message's last five bytes, if they start with the
  // checksum's tag, are its checksum even where the parse found none (only
  // where no file written before checksums can end so).
  absl::Status CheckEndChecksum(absl::string_view packet,
                                const google::protobuf::MessageLite& message, bool has_crc32c,
                                int body_field, uint8_t tag, absl::string_view what, bool promised,
                                bool tag_decides) const;
  // Decodes columns_ into on_event, as ChunkDecoder::DecodeEach.
  template <typename OnEvent, typename OnAhead>
  absl::Status DecodeColumns(OnEvent&& on_event, OnAhead&& on_ahead);
  // Looks for a footer packet at the end of the file: sets tail_footer_
  // and footer_events_hint_ if there is one.
  void FindTailFooter();
  void CountThread(uint32_t thread) {
    if (ABSL_PREDICT_TRUE(thread == last_thread_)) return;
    last_thread_ = thread;
    if (thread >= threads_.size()) threads_.resize(size_t{thread} + 1);
    if (!threads_[thread]) {
      threads_[thread] = true;
      ++threads_seen_;
    }
  }

  std::unique_ptr<PacketReader> packets_;
  ChunkDecoder decoder_;
  CallSiteTable call_sites_;
  std::string call_sites_error_;
  ChunkColumns columns_;
  proto::Packet packet_;
  std::string reencoded_chunk_;

  proto::Header header_;
  proto::Footer footer_;
  uint64_t footer_events_hint_ = 0;
  // What looks like a footer at the end of the file, read at Open (not
  // validated): a packet that runs past the end of the file is then a
  // damaged length, not a recording cut short.
  std::optional<proto::Footer> tail_footer_;
  // Whether tail_footer_ carries a checksum that holds: then it is the
  // footer the writer wrote, not a chance match.
  bool tail_footer_checked_ = false;
  // Whether the last packet read was of no known kind (and skipped).
  bool last_packet_unknown_ = false;
  bool has_footer_ = false;
  bool done_ = false;
  std::string cut_short_;
  uint64_t chunks_read_ = 0;
  std::vector<bool> threads_;
  uint32_t last_thread_ = ~uint32_t{0};  // counted already
  uint64_t threads_seen_ = 0;
};

template <typename OnEvent, typename OnAhead>
absl::Status TraceReader::DecodeColumns(OnEvent&& on_event, OnAhead&& on_ahead) {
  const ChunkLocation where{packets_->path(), packets_->packet_offset(), packets_->packets_read(),
                            chunks_read_};
  absl::Status s = decoder_.DecodeEach(
      columns_, where,
      [&](const Event& e) {
        CountThread(e.thread);
        return on_event(e);
      },
      on_ahead);
  if (s.ok()) ++chunks_read_;
  return s;
}

template <typename OnChunk, typename OnEvent, typename OnAhead>
absl::Status TraceReader::StreamEvents(OnChunk&& on_chunk, OnEvent&& on_event, OnAhead&& on_ahead) {
  while (true) {
    absl::StatusOr<bool> more = NextChunkColumns();
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    on_chunk();
    if (absl::Status s = DecodeColumns(on_event, on_ahead); !s.ok()) return s;
  }
}

template <typename OnChunk, typename OnEvent>
absl::Status TraceReader::ForEachEvent(OnChunk&& on_chunk, OnEvent&& on_event) {
  std::vector<Event> events;
  while (true) {
    absl::StatusOr<bool> more = NextChunk(&events);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    on_chunk(events);
    for (const Event& e : events) {
      if (absl::Status s = on_event(e); ABSL_PREDICT_FALSE(!s.ok())) return s;
    }
  }
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_TRACE_READER_H_
