#include "alloctrace/format/trace_format.h"

#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/crc32c.h"

namespace alloctrace {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kAlloc:
      return "ALLOC";
    case OpKind::kFree:
      return "FREE";
    case OpKind::kArenaCreate:
      return "ARENA_CREATE";
    case OpKind::kArenaDestroy:
      return "ARENA_DESTROY";
    case OpKind::kSetArena:
      return "SET_ARENA";
    case OpKind::kSetThread:
      return "SET_THREAD";
    case OpKind::kRealloc:
      return "REALLOC";
    case OpKind::kTimestamp:
      return "TIMESTAMP";
  }
  return "?";
}

void AppendFramedPacket(const proto::Packet& packet, std::string* out) {
  const size_t size = packet.ByteSizeLong();
  AppendLengthDelimitedHeader(proto::Trace::kPacketFieldNumber, size, out);
  const size_t at = out->size();
  out->resize(at + size);
  packet.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&(*out)[at]));
}

void AppendFramedPacketBody(int body_field, std::string_view body, std::string* out) {
  std::string body_header;
  AppendLengthDelimitedHeader(body_field, body.size(), &body_header);
  AppendLengthDelimitedHeader(proto::Trace::kPacketFieldNumber, body_header.size() + body.size(),
                              out);
  out->append(body_header);
  out->append(body.data(), body.size());
}

void AppendCrc32cField(uint8_t tag, std::string* message) {
  const uint32_t crc = Crc32c(message->data(), message->size());
  message->push_back(static_cast<char>(tag));
  AppendFixed32(crc, message);
}

TrailingCrc32c CheckTrailingCrc32c(absl::string_view message, uint8_t tag) {
  TrailingCrc32c out;
  constexpr size_t kField = 1 + kFixed32Bytes;
  const size_t n = message.size();
  if (n < kField || static_cast<uint8_t>(message[n - kField]) != tag) return out;
  out.stored = LoadFixed32(reinterpret_cast<const uint8_t*>(message.data()) + n - kFixed32Bytes);
  out.computed = Crc32c(message.data(), n - kField);
  out.state = out.stored == out.computed ? TrailingCrc32c::State::kMatches
                                         : TrailingCrc32c::State::kMismatch;
  return out;
}

std::optional<absl::string_view> AsWrittenBody(absl::string_view packet, int body_field) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(packet.data());
  const uint8_t* const end = p + packet.size();
  uint64_t tag, len;
  if (ReadVarint(&p, end, &tag) && tag == WireTag(body_field, WireType::kLengthDelimited) &&
      ReadVarint(&p, end, &len) && len == static_cast<uint64_t>(end - p)) {
    return absl::string_view(reinterpret_cast<const char*>(p), len);
  }
  return std::nullopt;
}

void FillStandardHeader(proto::Header* header) {
  header->set_magic(kTraceMagic);
  header->set_format_version(kFormatVersion);
  header->set_pointer_size(sizeof(void*));
  if (header->pid() == 0) header->set_pid(static_cast<uint32_t>(getpid()));
  struct utsname u;
  if (header->platform().empty() && uname(&u) == 0) {
    header->set_platform(
        absl::StrCat(u.sysname, " ", u.release, " ", u.machine, " glibc ", gnu_get_libc_version()));
  }
}

}  // namespace alloctrace
