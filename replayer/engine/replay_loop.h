// ReplayWith<A>: feeds a ReplayProgram to allocator type A and measures the
// run. Meant to run in a child process of its own (measure/isolated_run.h),
// so the RSS and page-fault figures belong to this run alone. Its setup,
// passes and teardown are replay_setup.h's, shared with the per-thread
// loop; this file is what every loop does per op (ApplyOp), the op loop of
// a serialized replay, whole or windowed (ReplayOps), and the timed pass.
//
// Timed: only the op loop (allocator calls, plus writing into each new block
// as a constructor would, per RunOptions::touch), by the wall clock and by
// the thread's CPU clock. Not timed: constructing the allocator, the RSS
// samples taken between segments of the loop, freeing what a pass left live
// before the next pass, and the teardown (freeing leftovers, destroying the
// allocator), which is measured separately.
//
// Passes: the trace is replayed several times through the same allocator
// (RunOptions::max_passes, min_warm_seconds). The first (cold) pass is what a short program pays:
// first touches of fresh pages, empty caches. The later (warm) passes reuse the allocator's memory,
// as a long-running program does. RSS figures are the cold pass's.
//
// Thread-safety: a run uses its own allocator and pointer table, on the calling
// thread; run it in a process of its own.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_REPLAY_LOOP_H_
#define ALLOCTRACE_REPLAYER_ENGINE_REPLAY_LOOP_H_

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "alloctrace/replayer/engine/live_walk.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/replay_setup.h"
#include "alloctrace/replayer/engine/run_result.h"

namespace alloctrace {

namespace replay_internal {

template <typename A, typename = void>
struct HasAllocateZeroed : std::false_type {};
template <typename A>
struct HasAllocateZeroed<
    A, std::void_t<decltype(std::declval<A&>().AllocateZeroed(size_t{}, size_t{}, uint32_t{}))>>
    : std::true_type {};

// calloc for allocators that have it, else allocate and zero.
template <typename A>
void* AllocateZeroed(A& a, size_t bytes, size_t align, uint32_t arena) {
  if constexpr (HasAllocateZeroed<A>::value) {
    return a.AllocateZeroed(bytes, align, arena);
  } else {
    void* p = a.Allocate(bytes, align, arena);
    if (p != nullptr) std::memset(p, 0, bytes);
    return p;
  }
}

inline void TouchBlock(void* p, size_t bytes, Touch touch, uint32_t stamp) {
  switch (touch) {
    case Touch::kNone:
      break;
    case Touch::kFirst:
      if (bytes >= sizeof(uint64_t)) {
        const uint64_t v = stamp;
        std::memcpy(p, &v, sizeof v);
      } else if (bytes > 0) {
        std::memset(p, static_cast<int>(stamp), bytes);
      }
      break;
    case Touch::kWhole:
      std::memset(p, static_cast<int>(stamp | 1), bytes);
      break;
    case Touch::kProgram:
    case Touch::kWalk:
      if (bytes <= kProgramTouchBytes) {
        std::memset(p, static_cast<int>(stamp | 1), bytes);
      } else {
        std::memset(p, static_cast<int>(stamp | 1), 64);
        std::memset(static_cast<char*>(p) + bytes - 64, static_cast<int>(stamp | 1), 64);
      }
      break;
  }
}

// Touch::kProgram's read before a free: the block's first and last bytes.
inline uint64_t ReadBeforeFree(const void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return 0;
  const unsigned char* b = static_cast<const unsigned char*>(p);
  return static_cast<uint64_t>(*static_cast<const volatile unsigned char*>(b)) +
         *static_cast<const volatile unsigned char*>(b + bytes - 1);
}

inline double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The objects a program leaves live at its end, with the size, alignment
// and arena of their last allocation, so they can be freed.
class Leftovers {
 public:
  explicit Leftovers(const ReplayView& program) {
    if (program.live_at_end == 0) return;
    std::vector<const ReplayOp*> last(program.object_limit + 1, nullptr);
    std::vector<uint64_t> realloc_bytes(program.object_limit + 1, 0);
    size_t ri = 0;
    for (const ReplayOp& op : absl::MakeConstSpan(program.ops, program.num_ops)) {
      if (op.kind == ReplayKind::kRealloc)
        realloc_bytes[op.object] = program.reallocs[ri++].new_bytes;
      if (op.kind == ReplayKind::kAlloc || op.kind == ReplayKind::kAllocZeroed ||
          op.kind == ReplayKind::kRealloc) {
        last[op.object] = &op;
      } else if (op.kind == ReplayKind::kFree) {
        last[op.object] = nullptr;
      }
    }
    for (uint32_t id = 0; id < last.size(); ++id) {
      if (last[id] == nullptr) continue;
      const ReplayOp& op = *last[id];
      const size_t bytes = op.kind == ReplayKind::kRealloc
                               ? realloc_bytes[id]
                               : (op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux]);
      blocks_.push_back(Block{id, bytes, size_t{1} << op.align_log2, op.arena});
    }
  }

  // Frees every leftover still in `ptrs` and clears its slot.
  template <typename A>
  void FreeAll(A& allocator, void** ptrs) const {
    for (const Block& b : blocks_) {
      if (ptrs[b.object] == nullptr) continue;
      allocator.Deallocate(ptrs[b.object], b.bytes, b.align, b.arena);
      ptrs[b.object] = nullptr;
    }
  }

 private:
  struct Block {
    uint32_t object;
    size_t bytes;
    size_t align;
    uint32_t arena;
  };
  std::vector<Block> blocks_;
};

// Why one op failed; the loops put it in words (OpFailureWords).
enum class OpFailure : uint8_t { kNone, kAlloc, kAllocZeroed, kRealloc };

// "allocation of N bytes failed" and the like, for a failed op of N bytes.
inline std::string OpFailureWords(OpFailure failure, size_t bytes) {
  const char* what = failure == OpFailure::kAlloc         ? "allocation"
                     : failure == OpFailure::kAllocZeroed ? "zeroed allocation"
                                                          : "reallocation to";
  return std::string(what) + (failure == OpFailure::kRealloc ? " " : " of ") +
         std::to_string(bytes) + " bytes failed";
}

// A serialized loop's error for the op at index `i` that failed.
inline RunError OpFailedAt(OpFailure failure, size_t bytes, uint64_t i) {
  return {RunErrorKind::kOpFailed, OpFailureWords(failure, bytes) + " at op " + std::to_string(i)};
}

// One memory op as every replay loop runs it: the serialized pass below
// and each thread's stream (thread_replay.h). The loops differ only in how
// they find a realloc's record and the slot of the object it moves:
// `realloc_of(op)` returns them as a std::pair<const ReallocInfo*, size_t>.
// On failure `*failed_bytes` is the size asked for.
template <typename A, typename ReallocOf>
inline __attribute__((always_inline)) OpFailure ApplyOp(
    A& allocator, const ReplayView& program, const ReplayOp& op, ReplayKind kind, void** ptrs,
    Touch touch, uint64_t& read_sink, const ReallocOf& realloc_of, size_t* failed_bytes) {
  const size_t align = size_t{1} << op.align_log2;
  switch (kind) {
    case ReplayKind::kAlloc: {
      const size_t bytes = op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux];
      void* p = allocator.Allocate(bytes, align, op.arena);
      if (__builtin_expect(p == nullptr && bytes > 0, 0)) {
        *failed_bytes = bytes;
        return OpFailure::kAlloc;
      }
      TouchBlock(p, bytes, touch, op.object);
      ptrs[op.object] = p;
      break;
    }
    case ReplayKind::kAllocZeroed: {
      const size_t bytes = op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux];
      void* p = AllocateZeroed(allocator, bytes, align, op.arena);
      if (__builtin_expect(p == nullptr && bytes > 0, 0)) {
        *failed_bytes = bytes;
        return OpFailure::kAllocZeroed;
      }
      ptrs[op.object] = p;
      break;
    }
    case ReplayKind::kFree: {
      const size_t bytes = op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux];
      if (touch == Touch::kProgram) read_sink += ReadBeforeFree(ptrs[op.object], bytes);
      allocator.Deallocate(ptrs[op.object], bytes, align, op.arena);
      ptrs[op.object] = nullptr;
      break;
    }
    case ReplayKind::kRealloc: {
      const auto [info, old_slot] = realloc_of(op);
      void* p =
          allocator.Reallocate(ptrs[old_slot], info->old_bytes, info->new_bytes, align, op.arena);
      if (p == nullptr && info->new_bytes > 0) {
        *failed_bytes = info->new_bytes;
        return OpFailure::kRealloc;
      }
      ptrs[old_slot] = nullptr;
      if (info->new_bytes > info->old_bytes) {
        TouchBlock(static_cast<char*>(p) + info->old_bytes, info->new_bytes - info->old_bytes,
                   touch, op.object);
      }
      ptrs[op.object] = p;
      break;
    }
    case ReplayKind::kArenaCreate:
      allocator.ArenaCreated(op.arena);
      break;
    case ReplayKind::kArenaDestroy:
      allocator.ArenaDestroyed(op.arena);
      break;
  }
  return OpFailure::kNone;
}

// Ops [from, to) through `allocator`, the realloc table read from
// *realloc_index on: the op loop every serialized replay runs, timed or
// not (a whole run's pass, a window, its lead-in). Not inlined, so that
// for each allocator type a window and a whole run time the same machine
// code: copies of this loop compiled into their callers read the same
// window's ratios to glibc malloc up to a tenth apart. Returns no error,
// or the op that failed (kOpFailed).
template <typename A>
__attribute__((noinline)) RunError ReplayOps(A& allocator, const ReplayView& program, uint64_t from,
                                             uint64_t to, void** ptrs, Touch touch,
                                             size_t* realloc_index) {
  const ReplayOp* ops = program.ops;
  size_t next_realloc = *realloc_index;
  uint64_t read_sink = 0;  // Touch::kProgram's reads, kept observable
  RunError error;
  for (uint64_t i = from; i < to; ++i) {
    const ReplayOp& op = ops[i];
    size_t failed_bytes = 0;
    const OpFailure failure = ApplyOp(
        allocator, program, op, op.kind, ptrs, touch, read_sink,
        [&](const ReplayOp&) {
          const ReallocInfo* info = &program.reallocs[next_realloc++];
          return std::pair<const ReallocInfo*, size_t>(info, info->old_object);
        },
        &failed_bytes);
    if (__builtin_expect(failure != OpFailure::kNone, 0)) {
      error = OpFailedAt(failure, failed_bytes, i);
      break;
    }
  }
  *realloc_index = next_realloc;
  asm volatile("" : : "r"(read_sink));
  return error;
}

// ReplayOps with Touch::kWalk's walks: a loop of its own, so that the
// other modes' loop stays the machine code it is. The blocks are touched
// as kProgram touches them, calloc's too (the stamp).
template <typename A>
__attribute__((noinline)) RunError ReplayOpsWalk(A& allocator, const ReplayView& program,
                                                 uint64_t from, uint64_t to, void** ptrs,
                                                 size_t* realloc_index, LiveWalk& walk) {
  const ReplayOp* ops = program.ops;
  size_t next_realloc = *realloc_index;
  uint64_t read_sink = 0;
  RunError error;
  for (uint64_t i = from; i < to; ++i) {
    const ReplayOp& op = ops[i];
    const ReallocInfo* info =
        op.kind == ReplayKind::kRealloc ? &program.reallocs[next_realloc] : nullptr;
    if (op.kind == ReplayKind::kFree) walk.Freed(op.object);
    size_t failed_bytes = 0;
    const OpFailure failure = ApplyOp(
        allocator, program, op, op.kind, ptrs, Touch::kProgram, read_sink,
        [&](const ReplayOp&) {
          ++next_realloc;
          return std::pair<const ReallocInfo*, size_t>(info, info->old_object);
        },
        &failed_bytes);
    if (__builtin_expect(failure != OpFailure::kNone, 0)) {
      error = OpFailedAt(failure, failed_bytes, i);
      break;
    }
    switch (op.kind) {
      case ReplayKind::kAlloc:
      case ReplayKind::kAllocZeroed:
        read_sink +=
            walk.Allocated(op.object, ptrs[op.object],
                           op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux], ptrs);
        break;
      case ReplayKind::kRealloc:
        read_sink +=
            walk.Reallocated(info->old_object, op.object, ptrs[op.object], info->new_bytes, ptrs);
        break;
      default:
        break;
    }
  }
  *realloc_index = next_realloc;
  asm volatile("" : : "r"(read_sink));
  return error;
}

// One timed pass over the ops, in `samples` segments; between segments
// (untimed) the RSS above `baseline` is appended to `course` if given.
// Returns what failed, if anything.
template <typename A>
RunError TimedPass(A& allocator, const ReplayView& program, void** ptrs, Touch touch, int samples,
                   std::vector<int64_t>* course, const RssReader* rss, int64_t baseline,
                   PassFigures* figures, LiveWalk* walk = nullptr) {
  using Clock = std::chrono::steady_clock;
  const size_t n = program.num_ops;
  samples = samples > 0 ? samples : 1;
  const size_t segment = n / samples + 1;
  size_t realloc_index = 0;
  Clock::duration timed{};
  double cpu = 0;
  if (course != nullptr) course->reserve(course->size() + samples + 1);
  if (walk != nullptr) walk->Reset();
  for (size_t begin = 0; begin < n; begin += segment) {
    const size_t end = std::min(n, begin + segment);
    const double c0 = ThreadCpuSeconds();
    const Clock::time_point t0 = Clock::now();
    RunError error =
        walk != nullptr ? ReplayOpsWalk(allocator, program, begin, end, ptrs, &realloc_index, *walk)
                        : ReplayOps(allocator, program, begin, end, ptrs, touch, &realloc_index);
    if (error.failed()) return error;
    timed += Clock::now() - t0;
    cpu += ThreadCpuSeconds() - c0;
    if (course != nullptr) course->push_back(rss->ResidentBytes() - baseline);
  }
  figures->wall_seconds = std::chrono::duration<double>(timed).count();
  figures->cpu_seconds = cpu;
  return {};
}

}  // namespace replay_internal

template <typename A>
RunResult ReplayWith(const ReplayView& program, const RunOptions& options) {
  RunResult r;
  r.ops = program.memory_ops;
  // Where each object left live at the end was last allocated, to free
  // leftovers between passes and at teardown (built before the baseline).
  const replay_internal::Leftovers leftovers(program);
  // Touch::kWalk's list of live blocks, also before the baseline.
  std::unique_ptr<replay_internal::LiveWalk> walk;
  if (options.touch == Touch::kWalk) {
    walk = std::make_unique<replay_internal::LiveWalk>(program.object_limit + size_t{1});
  }
  auto pass = [&](A& allocator, void** ptrs, bool cold, const RssReader& rss, int64_t baseline,
                  PassFigures* f, std::vector<int64_t>* course, int64_t* migrations) {
    const int64_t migrations0 = ReadMigrations();
    const UsageCounts u0 = ReadUsageCounts();
    RunError error = replay_internal::TimedPass(allocator, program, ptrs, options.touch,
                                                cold ? options.rss_samples : 1, course,
                                                cold ? &rss : nullptr, baseline, f, walk.get());
    const UsageCounts u1 = ReadUsageCounts();
    f->minor_faults = u1.minor_faults - u0.minor_faults;
    f->major_faults = u1.major_faults - u0.major_faults;
    f->involuntary_switches = u1.involuntary_switches - u0.involuntary_switches;
    f->voluntary_switches = u1.voluntary_switches - u0.voluntary_switches;
    *migrations += ReadMigrations() - migrations0;
    return error;
  };
  auto free_leftovers = [&](A& allocator, void** ptrs) { leftovers.FreeAll(allocator, ptrs); };
  return replay_internal::RunPasses<A>(std::move(r), program.object_limit + 1, program.arena_limit,
                                       options, pass, free_leftovers);
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_REPLAY_LOOP_H_
