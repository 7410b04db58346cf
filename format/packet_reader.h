// PacketReader: the framing layer of a trace file. Reads one framed packet
// (a Trace.packet record: tag, varint length, bytes) at a time from a file,
// keeping only that packet in memory, and tells a file that ends inside a
// packet (a recording cut short) apart from one that is corrupt.
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_PACKET_READER_H_
#define ALLOCTRACE_FORMAT_PACKET_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace alloctrace {

class PacketReader {
 public:
  // Opens `path`, which must be a regular file. The error names the path.
  static absl::StatusOr<std::unique_ptr<PacketReader>> Open(const std::string& path);
  ~PacketReader();
  PacketReader(const PacketReader&) = delete;
  PacketReader& operator=(const PacketReader&) = delete;

  // Reads the next packet into packet(). Returns false at a clean end of
  // file, or when the file ends inside the next packet's frame (cut_short()
  // then says where). Errors (a byte that is not a packet tag, a corrupt or
  // implausible length, a read error) name the file and the byte offset.
  absl::StatusOr<bool> Next();

  absl::string_view packet() const { return packet_; }
  // Where the last packet's frame starts, and how many packets were read.
  uint64_t packet_offset() const { return packet_offset_; }
  uint64_t packets_read() const { return packets_read_; }
  // Bytes consumed so far: the end of the last packet.
  uint64_t offset() const { return offset_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& path() const { return path_; }
  // Non-empty if the file ends inside a frame: what the end looks like.
  const std::string& cut_short() const { return cut_short_; }

  // Up to the last `max_bytes` of the file, read without moving the reading
  // position; empty on a read error (callers use it only as a hint).
  std::string Tail(size_t max_bytes) const;

  // "PATH: byte B (packet P): what", B the current packet's offset.
  absl::Status Error(absl::string_view what) const;

 private:
  PacketReader(std::FILE* file, std::string path, uint64_t file_size);

  std::FILE* file_;
  std::string path_;
  uint64_t file_size_;
  uint64_t offset_ = 0;
  uint64_t packet_offset_ = 0;
  uint64_t packets_read_ = 0;
  std::string packet_;
  std::string cut_short_;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_PACKET_READER_H_
