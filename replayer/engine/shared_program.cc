// ShareReplayView / MapSharedReplayView (replay_program.h): a decoded
// program written once into a memfd that re-executed children map.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/replay_program.h"

namespace alloctrace {

namespace {

struct SharedHeader {
  uint64_t magic;
  uint64_t num_ops, num_big, num_reallocs;
  uint64_t object_limit, arena_limit, memory_ops, live_at_end;
};
constexpr uint64_t kSharedMagic = 0x616c6c6f63763032;  // "allocv02"

}  // namespace

absl::StatusOr<int> ShareReplayView(const ReplayView& v) {
  auto failed = [](const char* call, int error) {
    return absl::InternalError(
        absl::StrCat("cannot share the replay program: ", call, ": ", std::strerror(error)));
  };
  // Not close-on-exec: the re-executed child maps it.
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "alloctrace-replay", 0));
  if (fd < 0) return failed("memfd_create", errno);
  uint64_t num_big = 0, num_reallocs = 0;
  for (size_t i = 0; i < v.num_ops; ++i) {
    if (v.ops[i].bytes == kBigSize) num_big = std::max<uint64_t>(num_big, v.ops[i].aux + 1);
    num_reallocs += v.ops[i].kind == ReplayKind::kRealloc;
  }
  const SharedHeader h{kSharedMagic,   v.num_ops,     num_big,      num_reallocs,
                       v.object_limit, v.arena_limit, v.memory_ops, v.live_at_end};
  if (WriteAll(fd, &h, sizeof h) != 0 || WriteAll(fd, v.ops, v.num_ops * sizeof(ReplayOp)) != 0 ||
      WriteAll(fd, v.big_sizes, num_big * sizeof(uint64_t)) != 0 ||
      WriteAll(fd, v.reallocs, num_reallocs * sizeof(ReallocInfo)) != 0) {
    const int error = errno;
    close(fd);
    return failed("write", error);
  }
  return fd;
}

absl::StatusOr<ReplayView> MapSharedReplayView(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(SharedHeader))) {
    return absl::InvalidArgumentError("no shared replay program on the given fd");
  }
  void* m = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap: ", std::strerror(errno)));
  const auto* h = static_cast<const SharedHeader*>(m);
  const size_t need = sizeof *h + h->num_ops * sizeof(ReplayOp) + h->num_big * sizeof(uint64_t) +
                      h->num_reallocs * sizeof(ReallocInfo);
  if (h->magic != kSharedMagic || need != static_cast<size_t>(st.st_size)) {
    return absl::InvalidArgumentError("shared replay program is malformed");
  }
  const char* p = static_cast<const char*>(m) + sizeof *h;
  ReplayView v;
  v.ops = reinterpret_cast<const ReplayOp*>(p);
  v.num_ops = h->num_ops;
  p += h->num_ops * sizeof(ReplayOp);
  v.big_sizes = reinterpret_cast<const uint64_t*>(p);
  p += h->num_big * sizeof(uint64_t);
  v.reallocs = reinterpret_cast<const ReallocInfo*>(p);
  v.object_limit = static_cast<uint32_t>(h->object_limit);
  v.arena_limit = static_cast<uint32_t>(h->arena_limit);
  v.memory_ops = h->memory_ops;
  v.live_at_end = h->live_at_end;
  return v;
}

}  // namespace alloctrace
