// The registry of replay allocators: every type in AllAllocatorTypes
// (allocator_types.h), by name, for listing (--list-policies), selection by
// glob patterns (--policies) and dispatch to a typed replay loop.
//
//   struct AddOne {
//     template <typename A>
//     void operator()(const AllocatorInfo& info) { ... ReplayWith<A> ... }
//   };
//   ForEachAllocatorType(AddOne{...});                  // every allocator
//   WithAllocatorType("slab/st/single", AddOne{...});   // one, by name
//
// Names (unique; no spaces, commas or glob characters):
//   baselines  malloc, new, boost_pool, boost_fast_pool,
//              boost_fast_pool_nolock, pmr_unsync_pool, pmr_monotonic, bump
//   external   tcmalloc, jemalloc, mimalloc (run with their library preloaded)
//   ours       slab/<threading>/<holding>, small_node/<threading>/<holding>
//   article    pool/<storage>/<growth>/<threading>/<holding>/<delete>, 48 of
//              them, e.g. pool/boundary/exp/st/stack/free
// (the pool policies are the pool catalog's types: pool/catalog.h).
//
// Thread-safety: all functions are thread-safe (no mutable state).
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_REGISTRY_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_REGISTRY_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/engine/allocators/allocator_types.h"

namespace alloctrace::allocators {
namespace allocators_internal {

// A::Info() with what the registry knows from A's type.
template <typename A>
AllocatorInfo InfoOf() {
  AllocatorInfo info = A::Info();
  info.thread_safe = A::kThreadSafe;
  info.state_per_arena = A::kArenaReleasesBlocks;
  info.frees_blocks = A::kReusesFreedBlocks;
  return info;
}

template <typename F, typename... A>
void ForEachType(TypeList<A...>, F& f) {
  static_assert((IsReplayAllocator<A>::value && ...),
                "every registered type models the replay allocator concept");
  (f.template operator()<A>(InfoOf<A>()), ...);
}

template <typename F, typename... A>
bool WithType(TypeList<A...>, std::string_view name, F& f) {
  bool found = false;
  // Short-circuits at the first match.
  ((A::Info().name == name ? (f.template operator()<A>(InfoOf<A>()), found = true) : false) || ...);
  return found;
}

}  // namespace allocators_internal

// Calls f.template operator()<A>(const AllocatorInfo& info) for every
// allocator type A, in listing order.
template <typename F>
void ForEachAllocatorType(F&& f) {
  allocators_internal::ForEachType(AllAllocatorTypes{}, f);
}

// Calls f.template operator()<A>(info) for the allocator named `name`;
// false if there is none.
template <typename F>
bool WithAllocatorType(std::string_view name, F&& f) {
  return allocators_internal::WithType(AllAllocatorTypes{}, name, f);
}

// Every allocator, in listing order.
std::vector<AllocatorInfo> AllAllocators();

// Every allocator by name.
std::map<std::string, AllocatorInfo> AllocatorInfosByName();

// The default set's fixed part, in listing order: every baseline but
// `bump` (it never frees, so it is a harness floor, not a contender, and a
// long trace would need the sum of every size ever allocated), the
// preloaded mallocs, and slab and small_node single-threaded with both
// holdings (a pool per container, one shared pool), so the verdict chooses
// between the holdings by measurement. The replayer adds the fastest
// article policy of each storage kind, picked per trace
// (ArticleStorageKinds), and swaps in thread-safe variants for traces that
// share an arena between threads (replayer/measure/policy_safety.h).
std::vector<std::string> DefaultPolicyNames();

// The article grid's storage kinds ("simple", "boundary", "ordered"); the
// policies of kind K match "pool/K/*".
std::vector<std::string> ArticleStorageKinds();

// Whether `name` matches the glob `pattern`: `*` matches any run of
// characters (slashes included), `?` any one character.
bool MatchesGlob(std::string_view pattern, std::string_view name);

// The names matching a comma-separated list of glob patterns ("malloc,
// slab/*,pool/*/exp/st/*"), in pattern order, each name once; blanks around
// patterns are ignored. Errors: InvalidArgument if no pattern is given, or
// naming the first pattern that matches nothing, with the nearest name or
// family glob ("slab/*") when that pattern has no glob characters.
absl::StatusOr<std::vector<std::string>> SelectAllocators(
    std::string_view comma_separated_patterns);

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_REGISTRY_H_
