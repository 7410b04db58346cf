// ReplayWindowsWith<A>: a windowed run (windows.h) through allocator type
// A, in a child process of its own. For each window, in trace order: a
// fresh allocator; the trace's state at the lead-in's start rebuilt
// untimed (its live arenas created, its live objects allocated in their
// allocation order and touched as a constructor would); the lead-in
// replayed untimed; the window's ops timed, by the wall clock and the
// thread's CPU clock, with the page faults and context switches of that
// stretch; then everything freed and the allocator destroyed, untimed, and
// the process's free heap returned to the system (as before a whole run's
// baseline), so no window starts on a heap the previous one warmed; in a
// child, not after the last window, whose heap the process's end frees. The
// result's first pass is the stratified estimate of a whole cold pass
// (WindowedEstimate).
//
// Thread-safety: runs on the calling thread; run it in a process of its own.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_WINDOW_LOOP_H_
#define ALLOCTRACE_REPLAYER_ENGINE_WINDOW_LOOP_H_

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "alloctrace/base/shared_arrays.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/replay_setup.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/windows.h"

namespace alloctrace {
namespace window_internal {

// Ops [from, to) through replay_internal::ReplayOps (a whole run's loop),
// timed by the wall clock and the thread's CPU clock, with the page faults
// and context switches of that stretch, into f->figures and their memory
// ops into f->ops. Returns what failed, if anything.
template <typename A>
RunError TimedOps(A& allocator, const ReplayView& program, uint64_t from, uint64_t to, void** ptrs,
                  Touch touch, size_t* realloc_index, WindowFigures* f) {
  const UsageCounts u0 = ReadUsageCounts();
  const double c0 = replay_internal::ThreadCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  RunError error =
      replay_internal::ReplayOps(allocator, program, from, to, ptrs, touch, realloc_index);
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = replay_internal::ThreadCpuSeconds();
  const UsageCounts u1 = ReadUsageCounts();
  if (error.failed()) return error;
  f->figures.wall_seconds = std::chrono::duration<double>(t1 - t0).count();
  f->figures.cpu_seconds = c1 - c0;
  f->figures.minor_faults = u1.minor_faults - u0.minor_faults;
  f->figures.major_faults = u1.major_faults - u0.major_faults;
  f->figures.involuntary_switches = u1.involuntary_switches - u0.involuntary_switches;
  f->figures.voluntary_switches = u1.voluntary_switches - u0.voluntary_switches;
  f->ops = MemoryOpsIn(program, from, to);
  return {};
}

// The trace's state `s` rebuilt in `allocator`: arenas created, objects
// allocated and touched. Returns what failed, if anything: kOther, not an
// op of the trace (another window may rebuild without it).
template <typename A>
RunError Rebuild(A& allocator, const StateRef& s, void** ptrs, Touch touch) {
  for (size_t i = 0; i < s.num_arenas; ++i) allocator.ArenaCreated(s.arenas[i]);
  for (size_t i = 0; i < s.num_objects; ++i) {
    const LiveObject& o = s.objects[i];
    void* p = allocator.Allocate(o.bytes, size_t{1} << o.align_log2, o.arena);
    if (p == nullptr && o.bytes > 0) {
      return {RunErrorKind::kOther,
              replay_internal::OpFailureWords(replay_internal::OpFailure::kAlloc, o.bytes) +
                  " rebuilding a window's heap"};
    }
    replay_internal::TouchBlock(p, o.bytes, touch, o.object);
    ptrs[o.object] = p;
  }
  return {};
}

// Frees what window [from, to) left live, from its start state `start`,
// and clears each slot it used, which leaves the table clear for the next
// window (every slot a window sets is one of these). Object ids are reused
// once freed, so the ops are walked backwards: each id's latest allocation
// is freed first, with its own size and arena, and the earlier ones then
// find its slot empty (the start state's objects last). Objects of an
// arena no longer live went with it; the arenas still live go with the
// allocator.
template <typename A>
void FreeLeft(A& allocator, const ReplayView& program, const StateRef& start, uint64_t from,
              uint64_t to, void** ptrs) {
  std::vector<uint32_t> after = ArenasAfter(program, start, from, to);
  uint32_t max_arena = 0;
  for (uint32_t a : after) max_arena = std::max(max_arena, a);
  std::vector<uint8_t> arena_live(after.empty() ? 0 : size_t{max_arena} + 1, 0);
  for (uint32_t a : after) arena_live[a] = 1;
  auto free_if_live = [&](uint32_t id, uint32_t arena, uint64_t bytes, uint8_t align_log2) {
    const bool arena_gone = arena != 0 && (arena >= arena_live.size() || !arena_live[arena]);
    if (ptrs[id] != nullptr && !arena_gone) {
      allocator.Deallocate(ptrs[id], bytes, size_t{1} << align_log2, arena);
    }
    ptrs[id] = nullptr;
  };
  to = std::min<uint64_t>(to, program.num_ops);
  size_t realloc_index = start.realloc_index;
  for (uint64_t i = from; i < to; ++i) realloc_index += program.ops[i].kind == ReplayKind::kRealloc;
  for (uint64_t i = to; i-- > from;) {
    const ReplayOp& op = program.ops[i];
    if (op.kind == ReplayKind::kAlloc || op.kind == ReplayKind::kAllocZeroed) {
      free_if_live(op.object, op.arena, op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux],
                   op.align_log2);
    } else if (op.kind == ReplayKind::kRealloc) {
      free_if_live(op.object, op.arena, program.reallocs[--realloc_index].new_bytes, op.align_log2);
    }
  }
  for (size_t i = 0; i < start.num_objects; ++i) {
    const LiveObject& o = start.objects[i];
    free_if_live(o.object, o.arena, o.bytes, o.align_log2);
  }
}

// One window from its start state: its figures in *f; what failed, if
// anything.
// `leave_heap`: what the window left live, and the allocator, are left for
// the process's end (the run's last window in a child about to exit: on
// the 11 M-op trace, freeing 100,000 objects one by one, walking the
// window's ops back, and destroying the allocator took about a fifth of a
// windowed child's time: 25 ms of 0.13 s).
template <typename A>
RunError RunWindow(const ReplayView& program, const ReplayWindow& w, const StateRef& start,
                   void** ptrs, Touch touch, WindowFigures* f, bool leave_heap = false) {
  auto allocator = replay_internal::MakeAllocator<A>(program.arena_limit);
  size_t realloc_index = start.realloc_index;
  RunError error = Rebuild(*allocator, start, ptrs, touch);
  if (!error.failed()) {
    error = replay_internal::ReplayOps(*allocator, program, w.lead_begin, w.begin, ptrs, touch,
                                       &realloc_index);
  }
  if (error.failed()) return error;
  error = TimedOps(*allocator, program, w.begin, w.end, ptrs, touch, &realloc_index, f);
  if (error.failed()) return error;
  if (leave_heap) {
    allocator.release();  // the process ends next, without freeing
    return {};
  }
  FreeLeft(*allocator, program, start, w.lead_begin, w.end, ptrs);
  allocator.reset();
  return {};
}

// What a windowed run does around its windows: the baseline, taken once
// the caller has populated what its windows read; each window run by
// run_one(i, &figures), a failure (its RunError) ending the run, with the
// process's free heap returned to the system after it (not after the last
// where `process_ends_after`: its heap is left for the process's end); the
// peak and final RSS; the stratified estimate.
template <typename RunOne>
void RunWindowsFromBaseline(const std::vector<ReplayWindow>& windows, RunResult* r,
                            const RunOne& run_one, bool process_ends_after = false) {
  RssReader rss;
  ReleaseFreeMallocMemory();
  ResetPeakRss();
  r->baseline_rss = rss.ResidentBytes();
  for (size_t i = 0; i < windows.size(); ++i) {
    WindowFigures f;
    f.weight = windows[i].weight;
    r->error = run_one(i, &f);
    r->windows.push_back(f);
    if (r->error.failed()) return;
    if (!process_ends_after || i + 1 < windows.size()) ReleaseFreeMallocMemory();
  }
  r->peak_rss = PeakRssBytes() - r->baseline_rss;
  r->final_rss = rss.ResidentBytes() - r->baseline_rss;
  WindowedEstimate(windows, r);
}

}  // namespace window_internal

// `states`: the windows' start states as the parent shared them
// (windows.h); null: the run works them out itself (a walk of the trace up
// to the last window, before its baseline).
template <typename A>
RunResult ReplayWindowsWith(const ReplayView& program, const std::vector<ReplayWindow>& windows,
                            const WindowStatesView* states, const RunOptions& options) {
  RunResult r;
  WindowStates own;
  WindowStatesView view;
  if (states != nullptr && states->windows == windows.size()) {
    view = *states;
  } else {
    own = StartStates(program, windows);
    view = ViewOf(own);
  }
  // The table is built before the baseline, as a whole run's is.
  std::vector<void*> ptrs(program.object_limit + 1, nullptr);
  std::memset(ptrs.data(), 0, ptrs.size() * sizeof(void*));
  PrefaultSharedMappings(/*memfds=*/false);
  // The ops the windows read, lead-ins included (a child maps the program
  // without populating it: MapSharedReplayView).
  for (const ReplayWindow& w : windows) {
    const uint64_t to = std::min<uint64_t>(w.end, program.num_ops);
    if (w.lead_begin < to) {
      PopulateRange(program.ops + w.lead_begin, size_t{to - w.lead_begin} * sizeof(ReplayOp));
    }
  }
  const int64_t migrations0 = ReadMigrations();
  window_internal::RunWindowsFromBaseline(
      windows, &r,
      [&](size_t i, WindowFigures* f) {
        const bool last = i + 1 == windows.size();
        return window_internal::RunWindow<A>(program, windows[i], StateOf(view, i), ptrs.data(),
                                             options.touch, f, options.process_ends_after && last);
      },
      options.process_ends_after);
  if (!r.error.failed()) r.migrations = ReadMigrations() - migrations0;
  return r;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_WINDOW_LOOP_H_
