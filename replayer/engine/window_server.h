// ServeWindowsWith<A>: served windows (windows.h, WindowShape::served)
// through allocator type A. One child process per contender replays the
// trace once, from its first op, through one allocator, and lives from
// round to round: each round's window comes as a request on `command_fd`;
// the child reads its private memory back into the caches (the other
// contenders' turns evicted it), replays untimed from where it stopped up
// to the window, times the window's ops as a windowed run times them
// (window_loop.h), answers on `result_fd` and waits for the next. A window
// so served starts from the heap the trace itself made up to it, aged by
// every op before it, and costs only the ops since the last one, where a
// rebuilt window starts from a young heap (window_loop.h) and costs its
// rebuild and lead-in every time.
//
// The protocol: a request is one line, WindowsWord of one window; an
// answer is FramedRunResult (run_result_wire.h) of a RunResult whose
// passes[0] is the window's estimate of a whole cold pass
// (WindowedEstimate), peak_rss the high-water mark so far above the
// child's baseline. A window that starts before the child's position, or
// a malformed request, is answered with an error and ends the child (the
// parent starts a new one for an earlier window). At the end of
// `command_fd` the child exits at once, its heap left to the process's
// end.
//
// Thread-safety: runs on the calling thread; run it in a process of its own.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_WINDOW_SERVER_H_
#define ALLOCTRACE_REPLAYER_ENGINE_WINDOW_SERVER_H_

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/run_result_wire.h"
#include "alloctrace/replayer/engine/window_loop.h"
#include "alloctrace/replayer/engine/windows.h"

namespace alloctrace {
namespace window_internal {

// Reads `fd` a line at a time (without its newline); false at its end.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool Next(std::string* line) {
    while (true) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        line->assign(buffer_, 0, nl);
        buffer_.erase(0, nl + 1);
        return true;
      }
      char chunk[512];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

// What a served window reads back before its lead-in at most: twice the
// last-level cache of the machines this was measured on (32 MiB); a heap
// larger than that would not stay in a whole run's caches either.
inline constexpr uint64_t kWarmBytes = uint64_t{64} << 20;

// A serving child's memory figures, from its baseline: taken once its
// tables are made and before its allocator is, as a whole run's.
class ServedMemory {
 public:
  ServedMemory() {
    ReleaseFreeMallocMemory();
    ResetPeakRss();
    baseline_ = rss_.ResidentBytes();
  }
  void Fill(RunResult* r) const {
    r->baseline_rss = baseline_;
    r->peak_rss = PeakRssBytes() - baseline_;
    r->final_rss = rss_.ResidentBytes() - baseline_;
  }

 private:
  RssReader rss_;
  int64_t baseline_ = 0;
};

// "" if a window at op `begin` follows the replay's `position`, else why
// not.
inline std::string BehindWords(uint64_t begin, uint64_t position) {
  if (begin >= position) return "";
  return absl::StrCat("a served window starts at op ", begin, ", before the replay's position, op ",
                      position);
}

// Sends `r`; whether the child serves on (it was sent and is no error).
// *status becomes 1 where it could not be sent.
inline bool Answer(int result_fd, const RunResult& r, int* status) {
  if (WriteAll(result_fd, FramedRunResult(r)) != 0) {
    *status = 1;
    return false;
  }
  return !r.error.failed();
}

}  // namespace window_internal

// Serves windows until `command_fd` ends or a window fails; returns the
// process's exit status (0, or 1 where an answer could not be written).
template <typename A>
int ServeWindowsWith(const ReplayView& program, const RunOptions& options, int command_fd,
                     int result_fd) {
  using namespace window_internal;  // NOLINT: this header's own helpers
  std::vector<void*> ptrs(program.object_limit + 1, nullptr);
  std::memset(ptrs.data(), 0, ptrs.size() * sizeof(void*));
  PrefaultSharedMappings();
  const ServedMemory memory;
  auto allocator = replay_internal::MakeAllocator<A>(program.arena_limit);
  uint64_t position = 0;
  size_t realloc_index = 0;
  LineReader requests(command_fd);
  std::string line;
  int status = 0;
  while (requests.Next(&line)) {
    RunResult r;
    absl::StatusOr<std::vector<ReplayWindow>> windows = ParseWindowsWord(line, program.num_ops);
    std::string malformed;
    if (!windows.ok() || windows->size() != 1) {
      malformed = absl::StrCat("a served window's request '", line, "' is not one window");
    } else {
      malformed = BehindWords((*windows)[0].begin, position);
    }
    if (!malformed.empty()) {
      r.error = {RunErrorKind::kOther, std::move(malformed)};
    } else {
      const ReplayWindow& w = (*windows)[0];
      // The caches as a whole run's would hold them (windows.h: ServedShape).
      WarmPrivateMemory(kWarmBytes);
      r.error = replay_internal::ReplayOps(*allocator, program, position, w.begin, ptrs.data(),
                                           options.touch, &realloc_index);
      WindowFigures f;
      f.weight = w.weight;
      const int64_t migrations0 = ReadMigrations();
      if (!r.error.failed()) {
        r.error = TimedOps(*allocator, program, w.begin, w.end, ptrs.data(), options.touch,
                           &realloc_index, &f);
      }
      if (!r.error.failed()) {
        position = w.end;
        r.migrations = ReadMigrations() - migrations0;
        memory.Fill(&r);
        r.windows.push_back(f);
        WindowedEstimate(*windows, &r);
      }
    }
    if (!Answer(result_fd, r, &status)) break;
  }
  if (options.process_ends_after) {
    allocator.release();  // the process ends next, without freeing
    return status;
  }
  // Freed as a windowed run frees what its window left (a test's process
  // runs on).
  ReplayWindow at;
  at.lead_begin = at.begin = at.end = position;
  const WindowStates left = StartStates(program, {at});
  FreeLeft(*allocator, program, StateOf(ViewOf(left), 0), position, position, ptrs.data());
  allocator.reset();
  return status;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_WINDOW_SERVER_H_
