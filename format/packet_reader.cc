#include "alloctrace/format/packet_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/base/io.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/wire.h"

namespace alloctrace {

absl::StatusOr<std::unique_ptr<PacketReader>> PacketReader::Open(const std::string& path) {
  // A FIFO or a device is refused without opening it (opening a FIFO waits
  // for a writer; opening some devices acts), and the file is opened
  // without blocking and checked again, in case it was swapped between.
  const auto not_regular = [&path](const struct stat& st) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file (", FileKind(st.st_mode), ")"));
  };
  struct stat st = {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular(st);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open trace: ", std::strerror(errno)));
  }
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::NotFoundError(absl::StrCat(path, ": cannot open trace: ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return not_regular(st);
  }
  // procfs and sysfs report a size of 0 for files that hold bytes: such a
  // file is no trace, and a reader that trusts the size would call it empty.
  char probe;
  if (st.st_size == 0 && pread(fd, &probe, 1, 0) == 1) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": not a trace (its size reads 0 but it holds bytes: a file the kernel "
                     "makes, as in /proc or /sys)"));
  }
  std::FILE* f = ::fdopen(fd, "rb");
  if (f == nullptr || ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    const int err = errno;
    if (f != nullptr) {
      std::fclose(f);
    } else {
      ::close(fd);
    }
    return absl::NotFoundError(absl::StrCat(path, ": cannot open trace: ", std::strerror(err)));
  }
  return std::unique_ptr<PacketReader>(
      new PacketReader(f, path, static_cast<uint64_t>(st.st_size)));
}

PacketReader::PacketReader(std::FILE* file, std::string path, uint64_t file_size)
    : file_(file), path_(std::move(path)), file_size_(file_size) {
  // A large buffer for large traces; a small file needs no more than itself.
  const uint64_t buffer =
      std::min<uint64_t>(uint64_t{1} << 20, std::max<uint64_t>(file_size, 4096));
  std::setvbuf(file_, nullptr, _IOFBF, static_cast<size_t>(buffer));
}

PacketReader::~PacketReader() { std::fclose(file_); }

std::string PacketReader::Tail(size_t max_bytes) const {
  const uint64_t n = std::min<uint64_t>(max_bytes, file_size_);
  std::string tail(n, '\0');
  // pread: the stream's position and buffer are left alone.
  if (n == 0 || pread(fileno(file_), &tail[0], n, static_cast<off_t>(file_size_ - n)) !=
                    static_cast<ssize_t>(n)) {
    return std::string();
  }
  return tail;
}

absl::Status PacketReader::Error(absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat(path_, ": byte ", packet_offset_, " (packet ", packets_read_, "): ", what));
}

absl::StatusOr<bool> PacketReader::Next() {
  packet_offset_ = offset_;
  const int tag = std::fgetc(file_);
  if (tag == EOF) return false;
  ++offset_;
  if (tag != kPacketTag) {
    return Error(absl::StrFormat("expected packet tag 0x%02x, found 0x%02x", kPacketTag, tag));
  }
  uint64_t length = 0;
  const VarintResult r = ParseVarint(
      [this]() -> int {
        const int b = std::fgetc(file_);
        if (b != EOF) ++offset_;
        return b == EOF ? -1 : b;
      },
      &length);
  if (r == VarintResult::kTruncated) {
    cut_short_ = absl::StrCat("file ends inside the length of the packet at byte ", packet_offset_);
    return false;
  }
  if (r == VarintResult::kCorrupt) return Error("corrupt varint in packet length");
  if (length > kMaxPacketBytes) {
    return Error(absl::StrCat("packet length ", length, " exceeds the limit of ", kMaxPacketBytes,
                              " bytes (corrupt length)"));
  }
  if (offset_ + length > file_size_) {
    cut_short_ = absl::StrCat("file ends inside the packet at byte ", packet_offset_, " (",
                              file_size_ - offset_, " of ", length, " bytes present)");
    return false;
  }
  packet_.resize(length);
  if (length > 0 && std::fread(&packet_[0], 1, length, file_) != length) {
    return Error(absl::StrCat("read error: ", std::strerror(errno)));
  }
  offset_ += length;
  ++packets_read_;
  return true;
}

}  // namespace alloctrace
