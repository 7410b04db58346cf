#include "alloctrace/format/trace_format.h"

#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

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

void FillStandardHeader(proto::Header* header) {
  header->set_magic(kTraceMagic);
  header->set_format_version(kFormatVersion);
  header->set_pointer_size(sizeof(void*));
  header->set_pid(static_cast<uint32_t>(getpid()));
  struct utsname u;
  if (uname(&u) == 0) {
    header->set_platform(
        absl::StrCat(u.sysname, " ", u.release, " ", u.machine, " glibc ", gnu_get_libc_version()));
  }
}

}  // namespace alloctrace
