// RunPasses<A>: what both replay loops do around their timed passes (the
// serialized one, replay_loop.h, and the per-thread one, thread_replay.h),
// written once: the pointer table touched before the baseline, the child's
// heap trimmed and the peak reset so the baseline is the child's own, the
// allocator constructed after the baseline (what it maps up front is its
// working set) with its arena tables sized untimed, the passes (the cold
// one, then warm ones until they add up to RunOptions::min_warm_seconds,
// at most max_passes), the cold pass's RSS figures, what a pass left live
// freed between passes, and the teardown, timed apart.
//
// A loop gives the pass itself:
//   RunError pass(A& allocator, void** ptrs, bool cold, const RssReader& rss,
//                 int64_t baseline, PassFigures* figures,
//                 std::vector<int64_t>* course, int64_t* migrations);
// returning what failed, if anything (then the run ends there, without
// teardown: the allocator may be corrupt), filling *figures, appending RSS
// readings above `baseline` to *course on the cold pass if it takes any,
// and adding its CPU migrations to *migrations; and what frees the
// leftovers:
//   void free_leftovers(A& allocator, void** ptrs);
//
// Thread-safety: runs in the child, on its main thread; `pass` may start
// threads of its own and must join them before it returns.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_REPLAY_SETUP_H_
#define ALLOCTRACE_REPLAYER_ENGINE_REPLAY_SETUP_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/run_result.h"

namespace alloctrace::replay_internal {

template <typename A, typename = void>
struct HasReserveArenas : std::false_type {};
template <typename A>
struct HasReserveArenas<A, std::void_t<decltype(std::declval<A&>().ReserveArenas(uint32_t{}))>>
    : std::true_type {};

// A fresh allocator of type A, its arenas reserved (up to `arena_limit`)
// where it can.
template <typename A>
std::unique_ptr<A> MakeAllocator(uint32_t arena_limit) {
  auto allocator = std::make_unique<A>();
  if constexpr (HasReserveArenas<A>::value) allocator->ReserveArenas(arena_limit);
  return allocator;
}

// `r` (its ops and thread figures already set) completed by the run: a
// table of `slots` pointers, `arena_limit` arenas (dense indexes below it).
template <typename A, typename Pass, typename FreeLeftovers>
RunResult RunPasses(RunResult r, size_t slots, uint32_t arena_limit, const RunOptions& options,
                    const Pass& pass, const FreeLeftovers& free_leftovers) {
  std::vector<void*> ptrs(slots, nullptr);
  std::memset(ptrs.data(), 0, ptrs.size() * sizeof(void*));
  RssReader rss;
  PrefaultSharedMappings();
  // The child's own heap (the runtime's start-up, the tables above) is
  // trimmed before the baseline, so free resident memory a malloc could
  // reuse without it counting is returned first: with every block touched,
  // no allocator's peak can then read below the live bytes.
  ReleaseFreeMallocMemory();
  ResetPeakRss();
  r.baseline_rss = rss.ResidentBytes();
  auto allocator = MakeAllocator<A>(arena_limit);
  const int passes = std::max(1, options.max_passes);
  double warm_seconds = 0;
  for (int i = 0; i < passes; ++i) {
    if (i >= 2 && warm_seconds >= options.min_warm_seconds) break;
    const bool cold = i == 0;
    PassFigures f;
    r.error = pass(*allocator, ptrs.data(), cold, rss, r.baseline_rss, &f,
                   cold ? &r.rss_course : nullptr, &r.migrations);
    r.passes.push_back(f);
    if (r.error.failed()) return r;
    if (cold) {
      r.final_rss = rss.ResidentBytes() - r.baseline_rss;
      if (r.rss_course.empty()) r.rss_course.push_back(r.final_rss);
      // The kernel's mark can lag the counters it is kept from; never
      // report a peak below a reading actually taken.
      r.peak_rss = std::max(PeakRssBytes() - r.baseline_rss, r.final_rss);
      for (int64_t v : r.rss_course) r.peak_rss = std::max(r.peak_rss, v);
    } else {
      warm_seconds += f.wall_seconds;
    }
    // Untimed: what the trace left live is freed before the next pass.
    if (i + 1 < passes) free_leftovers(*allocator, ptrs.data());
  }
  r.seconds = r.passes[0].wall_seconds;
  r.minor_faults = r.passes[0].minor_faults;
  r.major_faults = r.passes[0].major_faults;
  // Teardown: what the trace left live, then the allocator itself.
  const auto t0 = std::chrono::steady_clock::now();
  free_leftovers(*allocator, ptrs.data());
  allocator.reset();
  r.teardown_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace alloctrace::replay_internal

#endif  // ALLOCTRACE_REPLAYER_ENGINE_REPLAY_SETUP_H_
