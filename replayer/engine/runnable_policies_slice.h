// The body of runnable_policies_K.cc: the registry's types of slice K with
// their replay loops. Included by those four files only.
//
// Thread-safety: as runnable_policies.h.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_RUNNABLE_POLICIES_SLICE_H_
#define ALLOCTRACE_REPLAYER_ENGINE_RUNNABLE_POLICIES_SLICE_H_

#include <map>
#include <string>
#include <utility>

#include "alloctrace/replayer/engine/allocators/allocator_types.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/runnable_policies.h"
#include "alloctrace/replayer/engine/thread_replay.h"
#include "alloctrace/replayer/engine/thread_window_server.h"
#include "alloctrace/replayer/engine/window_loop.h"
#include "alloctrace/replayer/engine/window_server.h"

namespace alloctrace::runnable_policies_internal {

struct AddPolicy {
  std::map<std::string, RunnablePolicy>* out;
  template <typename A>
  void operator()() const {
    allocators::AllocatorInfo info = allocators::allocators_internal::InfoOf<A>();
    std::string name = info.name;
    (*out)[name] = RunnablePolicy{
        std::move(info), &ReplayWith<A>,       &ReplayPerThreadWith<A>,   &ReplayWindowsWith<A>,
        &MakeErased<A>,  &ServeWindowsWith<A>, &ServeThreadWindowsWith<A>};
  }
};

template <size_t K, typename... A>
void AddSliceOfList(TypeList<A...> list, std::map<std::string, RunnablePolicy>* out) {
  AddSliceOf<K>(list, std::index_sequence_for<A...>{}, AddPolicy{out});
}

}  // namespace alloctrace::runnable_policies_internal

#endif  // ALLOCTRACE_REPLAYER_ENGINE_RUNNABLE_POLICIES_SLICE_H_
