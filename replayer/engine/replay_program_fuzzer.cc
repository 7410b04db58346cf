#include "alloctrace/replayer/engine/replay_program_fuzzer.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "google/protobuf/stubs/logging.h"

namespace alloctrace {
namespace {

// Aborts (a finding) when a program the builder accepted breaks the
// contract the replay loop relies on without checking.
void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "replay program contract broken: %s\n", what);
    std::abort();
  }
}

void CheckProgram(const ReplayProgram& p) {
  uint64_t reallocs = 0, memory_ops = 0;
  for (const ReplayOp& op : p.ops) {
    Require(op.arena < p.arena_limit, "op.arena < arena_limit");
    Require(op.align_log2 <= 21, "alignment within the reader's limit");
    switch (op.kind) {
      case ReplayKind::kAlloc:
      case ReplayKind::kAllocZeroed:
      case ReplayKind::kFree:
        Require(op.object < p.object_limit, "op.object < object_limit");
        Require(op.bytes != kBigSize || op.aux < p.big_sizes.size(), "big size index");
        ++memory_ops;
        break;
      case ReplayKind::kRealloc:
        Require(op.object < p.object_limit, "realloc object < object_limit");
        Require(reallocs < p.reallocs.size(), "realloc side table");
        Require(p.reallocs[reallocs].old_object < p.object_limit, "old object < object_limit");
        ++reallocs;
        ++memory_ops;
        break;
      case ReplayKind::kArenaCreate:
      case ReplayKind::kArenaDestroy:
        break;
    }
  }
  Require(reallocs == p.reallocs.size(), "every realloc entry used");
  Require(memory_ops == p.memory_ops(), "memory op count");
  Require(p.live_at_end <= p.object_limit, "live objects within the id space");
}

}  // namespace
}  // namespace alloctrace

// Protobuf logs a line for every string field that is not UTF-8, which
// mutated headers are all the time: silence it (the reader's error says
// what is wrong).
static const bool kQuietProtobuf = [] {
  google::protobuf::SetLogHandler(nullptr);
  return true;
}();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One in-memory file, rewritten for every input: the reader opens it by
  // path like any trace, and nothing touches the disk.
  static const int fd = static_cast<int>(syscall(SYS_memfd_create, "fuzz-trace", 0));
  static const std::string path = absl::StrCat("/proc/self/fd/", fd);
  if (fd < 0 || ftruncate(fd, 0) != 0) std::abort();
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  absl::StatusOr<alloctrace::ReplayProgram> program = alloctrace::LoadReplayProgram(path);
  if (program.ok()) {
    alloctrace::CheckProgram(*program);
  } else if (program.status().message().find(path) == std::string::npos) {
    std::fprintf(stderr, "error without the file name: %s\n",
                 std::string(program.status().message()).c_str());
    std::abort();
  }
  return 0;
}
