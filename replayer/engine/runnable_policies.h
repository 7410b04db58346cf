// RunnablePolicies(): every replay allocator of the registry as a
// RunnablePolicy, by name: its info and what runs it in a child (its typed
// replay loops, serialized, per thread and over windows; its served-window
// loops, whole trace and per thread; its slot in a mix).
//
// The loops of the 67 allocator types are most of the replayer's compile
// time, so they are instantiated in four translation units
// (runnable_policies_{0,1,2,3}.cc), every fourth type in each, which build
// in parallel; RunnablePolicies() joins the four.
//
// Thread-safety: RunnablePolicies() builds a new map on each call; the loops it
// points to run as replay_loop.h and thread_replay.h say.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_RUNNABLE_POLICIES_H_
#define ALLOCTRACE_REPLAYER_ENGINE_RUNNABLE_POLICIES_H_

#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/mix_allocator.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/engine/windows.h"

namespace alloctrace {

// One run of a policy over a shared program, in the child.
using RunFn = RunResult (*)(const ReplayView&, const RunOptions&);

// One per-thread run (thread_replay.h).
using PerThreadRunFn = RunResult (*)(const ReplayView&, const ThreadScheduleView&,
                                     const RunOptions&);

// One windowed run (window_loop.h).
using WindowsRunFn = RunResult (*)(const ReplayView&, const std::vector<ReplayWindow>&,
                                   const WindowStatesView*, const RunOptions&);

// Served windows: the child's whole life (window_server.h); returns its
// exit status.
using ServeWindowsFn = int (*)(const ReplayView&, const RunOptions&, int command_fd, int result_fd);

// Served windows of a multi-threaded trace: the child's whole life
// (thread_window_server.h); returns its exit status.
using ServeThreadWindowsFn = int (*)(const ReplayView&, const ThreadScheduleView&,
                                     const RunOptions&, int command_fd, int result_fd);

// A policy as the registry lists it, with what runs it in the child.
struct RunnablePolicy {
  allocators::AllocatorInfo info;
  RunFn run;
  PerThreadRunFn run_per_thread = nullptr;
  WindowsRunFn run_windows = nullptr;
  // The policy as one slot of a mix (mix_allocator.h).
  MakeErasedFn make_erased = nullptr;
  ServeWindowsFn serve_windows = nullptr;
  ServeThreadWindowsFn serve_thread_windows = nullptr;
};

std::map<std::string, RunnablePolicy> RunnablePolicies();

// The loops of MixAllocator, for a run whose request names a mix; the
// plan is set by MixAllocator::UsePlan before it runs.
RunnablePolicy MixRunnablePolicy();

namespace runnable_policies_internal {

inline constexpr size_t kSlices = 4;

// The policies of slice K: the registry's types at positions i with
// i % kSlices == K. Defined in runnable_policies_K.cc.
void AddSlice0(std::map<std::string, RunnablePolicy>* out);
void AddSlice1(std::map<std::string, RunnablePolicy>* out);
void AddSlice2(std::map<std::string, RunnablePolicy>* out);
void AddSlice3(std::map<std::string, RunnablePolicy>* out);

// For runnable_policies_slice.h, which includes the loops' headers:
// instantiates the loops of the types in slice K only.
template <size_t K, size_t I, typename A, typename Add>
void AddIfInSlice(const Add& add) {
  if constexpr (I % kSlices == K) add.template operator()<A>();
}

template <size_t K, typename Add, typename... A, size_t... I>
void AddSliceOf(TypeList<A...>, std::index_sequence<I...>, const Add& add) {
  (AddIfInSlice<K, I, A>(add), ...);
}

}  // namespace runnable_policies_internal
}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_RUNNABLE_POLICIES_H_
