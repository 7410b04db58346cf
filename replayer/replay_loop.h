// ReplayWith<A>: feeds a ReplayProgram to allocator type A and measures the
// run. Meant to run in a child process of its own (replayer/isolated_run.h),
// so the RSS and page-fault figures belong to this run alone.
//
// Timed: only the op loop (allocator calls, plus writing into each new block
// as a constructor would, per RunOptions::touch). Not timed: constructing
// the allocator, the RSS samples taken between segments of the loop, and the
// teardown (freeing what the trace left live, destroying the allocator),
// which is measured separately.
#ifndef ALLOCTRACE_REPLAYER_REPLAY_LOOP_H_
#define ALLOCTRACE_REPLAYER_REPLAY_LOOP_H_

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
#include "replayer/os_stats.h"
#include "replayer/replay_program.h"

namespace alloctrace {

// What the loop does with blocks besides calling the allocator. kProgram is
// what programs do around each call: a constructor writes the new object
// (whole blocks up to kProgramTouchBytes; of a larger one its first and last
// cache lines), calloc's block is left as calloc zeroed it, and a destructor
// or list walk reads a block just before it is freed (its first and last
// bytes), so that free finds the block in cache as it does in the program.
enum class Touch { kNone, kFirst, kWhole, kProgram };
inline constexpr size_t kProgramTouchBytes = 256;

struct RunOptions {
  Touch touch = Touch::kFirst;
  int rss_samples = 200;  // RSS readings over the run (the course)
};

struct RunResult {
  double seconds = 0;           // the timed loop
  double teardown_seconds = 0;  // freeing leftovers and destroying the allocator
  uint64_t ops = 0;             // memory ops (alloc, free, realloc)
  int64_t baseline_rss = 0;     // bytes resident before the loop
  int64_t peak_rss = 0;         // high-water mark during the loop, above baseline
  int64_t final_rss = 0;        // resident after the loop, above baseline
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
  std::vector<int64_t> rss_course;  // above baseline, evenly spaced over the ops
  std::string error;            // non-empty if the allocator failed
};

namespace replay_internal {

template <typename A, typename = void>
struct HasAllocateZeroed : std::false_type {};
template <typename A>
struct HasAllocateZeroed<A, std::void_t<decltype(std::declval<A&>().AllocateZeroed(
                                size_t{}, size_t{}, uint32_t{}))>> : std::true_type {};

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

}  // namespace replay_internal

template <typename A>
RunResult ReplayWith(const ReplayView& program, const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  RunResult r;
  r.ops = program.memory_ops;
  // The pointer table is touched before the baseline so its pages are not
  // charged to the allocator.
  std::vector<void*> ptrs(program.object_limit + 1, nullptr);
  std::memset(ptrs.data(), 0, ptrs.size() * sizeof(void*));
  RssReader rss;
  PrefaultSharedMappings();
  auto allocator = std::make_unique<A>();
  ResetPeakRss();
  r.baseline_rss = rss.ResidentBytes();
  const FaultCounts faults0 = ReadFaultCounts();

  const ReplayOp* ops = program.ops;
  const size_t n = program.num_ops;
  const int samples = options.rss_samples > 0 ? options.rss_samples : 1;
  const size_t segment = n / samples + 1;
  const Touch touch = options.touch;
  size_t realloc_index = 0;
  uint64_t read_sink = 0;  // Touch::kProgram's reads, kept observable
  Clock::duration timed{};
  r.rss_course.reserve(samples + 1);

  for (size_t begin = 0; begin < n; begin += segment) {
    const size_t end = std::min(n, begin + segment);
    const Clock::time_point t0 = Clock::now();
    for (size_t i = begin; i < end; ++i) {
      const ReplayOp& op = ops[i];
      const size_t bytes = op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux];
      const size_t align = size_t{1} << op.align_log2;
      switch (op.kind) {
        case ReplayKind::kAlloc: {
          void* p = allocator->Allocate(bytes, align, op.arena);
          if (__builtin_expect(p == nullptr && bytes > 0, 0)) {
            r.error = "allocation of " + std::to_string(bytes) + " bytes failed at op " +
                      std::to_string(i);
            return r;
          }
          replay_internal::TouchBlock(p, bytes, touch, op.object);
          ptrs[op.object] = p;
          break;
        }
        case ReplayKind::kAllocZeroed: {
          void* p = replay_internal::AllocateZeroed(*allocator, bytes, align, op.arena);
          if (__builtin_expect(p == nullptr && bytes > 0, 0)) {
            r.error = "zeroed allocation of " + std::to_string(bytes) + " bytes failed at op " +
                      std::to_string(i);
            return r;
          }
          ptrs[op.object] = p;
          break;
        }
        case ReplayKind::kFree:
          if (touch == Touch::kProgram) {
            read_sink += replay_internal::ReadBeforeFree(ptrs[op.object], bytes);
          }
          allocator->Deallocate(ptrs[op.object], bytes, align, op.arena);
          ptrs[op.object] = nullptr;
          break;
        case ReplayKind::kRealloc: {
          const ReallocInfo& info = program.reallocs[realloc_index++];
          void* p = allocator->Reallocate(ptrs[info.old_object], info.old_bytes, info.new_bytes,
                                          align, op.arena);
          if (p == nullptr && info.new_bytes > 0) {
            r.error = "reallocation to " + std::to_string(info.new_bytes) +
                      " bytes failed at op " + std::to_string(i);
            return r;
          }
          ptrs[info.old_object] = nullptr;
          if (info.new_bytes > info.old_bytes) {
            replay_internal::TouchBlock(static_cast<char*>(p) + info.old_bytes,
                                        info.new_bytes - info.old_bytes, touch, op.object);
          }
          ptrs[op.object] = p;
          break;
        }
        case ReplayKind::kArenaCreate:
          allocator->ArenaCreated(op.arena);
          break;
        case ReplayKind::kArenaDestroy:
          allocator->ArenaDestroyed(op.arena);
          break;
      }
    }
    timed += Clock::now() - t0;
    r.rss_course.push_back(rss.ResidentBytes() - r.baseline_rss);
  }
  asm volatile("" : : "r"(read_sink));
  r.seconds = std::chrono::duration<double>(timed).count();
  const FaultCounts faults1 = ReadFaultCounts();
  r.minor_faults = faults1.minor - faults0.minor;
  r.major_faults = faults1.major - faults0.major;
  r.final_rss = rss.ResidentBytes() - r.baseline_rss;
  // The kernel's mark can lag the counters it is kept from; never report a
  // peak below a reading actually taken.
  r.peak_rss = PeakRssBytes() - r.baseline_rss;
  for (int64_t v : r.rss_course) r.peak_rss = std::max(r.peak_rss, v);
  r.peak_rss = std::max(r.peak_rss, r.final_rss);

  // Teardown: what the trace left live, then the allocator itself.
  const Clock::time_point t0 = Clock::now();
  if (program.live_at_end > 0) {
    std::vector<const ReplayOp*> last_alloc(program.object_limit + 1, nullptr);
    for (const ReplayOp& op : absl::MakeConstSpan(program.ops, program.num_ops)) {
      if (op.kind == ReplayKind::kAlloc || op.kind == ReplayKind::kAllocZeroed ||
          op.kind == ReplayKind::kRealloc) {
        last_alloc[op.object] = &op;
      }
    }
    size_t ri = 0;
    std::vector<uint64_t> realloc_bytes(program.object_limit + 1, 0);
    for (const ReplayOp& op : absl::MakeConstSpan(program.ops, program.num_ops)) {
      if (op.kind == ReplayKind::kRealloc) realloc_bytes[op.object] = program.reallocs[ri++].new_bytes;
    }
    for (uint32_t id = 0; id < ptrs.size(); ++id) {
      if (ptrs[id] == nullptr || last_alloc[id] == nullptr) continue;
      const ReplayOp& op = *last_alloc[id];
      const size_t bytes = op.kind == ReplayKind::kRealloc
                               ? realloc_bytes[id]
                               : (op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux]);
      allocator->Deallocate(ptrs[id], bytes, size_t{1} << op.align_log2, op.arena);
    }
  }
  allocator.reset();
  r.teardown_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPLAY_LOOP_H_
