// A replay per class of containers: MixAllocator serves each arena from the
// policy its class is assigned (a mix, written "3=slab/st/stack;*=malloc"
// by class id), as a program whose containers each name their own
// allocator type would.
//
// What it models: one allocator instance per policy of the mix, shared by
// every class assigned that policy, as the adopted types share them in the
// program: a `single` policy's process-wide pool (HoldingSingleton) serves
// every container of that pool type, whatever its class; a `stack`
// policy's pools are per container (per arena) anyway; and every class
// left to "the heap" (`*`, arena 0 included) shares the process's one
// malloc. Whether a single-threaded policy may serve a class is the
// parent's rule (replayer/measure/per_container.h), not checked here.
//
// Cost: one table load and one indirect call per op, beside a single
// policy's direct call. Every contender of a per-class race is a mix
// (a single policy too, as "*=policy"), so they all pay it alike.
//
// Thread-safety: the plan is read-only while a run uses it; a MixAllocator
// is as thread-safe as its slots are for the arenas they serve (the
// parent's rule).
#ifndef ALLOCTRACE_REPLAYER_ENGINE_MIX_ALLOCATOR_H_
#define ALLOCTRACE_REPLAYER_ENGINE_MIX_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/engine/mix_spec.h"
#include "alloctrace/replayer/engine/replay_loop.h"
#include "alloctrace/replayer/engine/replay_program.h"

namespace alloctrace {

// One allocator of the registry behind virtual calls (the concept's
// members: allocator_concept.h).
class ErasedAllocator {
 public:
  virtual ~ErasedAllocator() = default;
  virtual void* Allocate(size_t bytes, size_t align, uint32_t arena) = 0;
  virtual void* AllocateZeroed(size_t bytes, size_t align, uint32_t arena) = 0;
  virtual void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) = 0;
  virtual void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align,
                           uint32_t arena) = 0;
  virtual void ArenaCreated(uint32_t arena) = 0;
  virtual void ArenaDestroyed(uint32_t arena) = 0;
  virtual void ReserveArenas(uint32_t limit) = 0;
};

template <typename A>
class ErasedAllocatorOf final : public ErasedAllocator {
 public:
  void* Allocate(size_t bytes, size_t align, uint32_t arena) override {
    return a_.Allocate(bytes, align, arena);
  }
  void* AllocateZeroed(size_t bytes, size_t align, uint32_t arena) override {
    return replay_internal::AllocateZeroed(a_, bytes, align, arena);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) override {
    a_.Deallocate(p, bytes, align, arena);
  }
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align,
                   uint32_t arena) override {
    return a_.Reallocate(p, old_bytes, new_bytes, align, arena);
  }
  void ArenaCreated(uint32_t arena) override { a_.ArenaCreated(arena); }
  void ArenaDestroyed(uint32_t arena) override { a_.ArenaDestroyed(arena); }
  void ReserveArenas(uint32_t limit) override {
    if constexpr (replay_internal::HasReserveArenas<A>::value) a_.ReserveArenas(limit);
  }

 private:
  A a_;
};

using MakeErasedFn = std::unique_ptr<ErasedAllocator> (*)();

template <typename A>
std::unique_ptr<ErasedAllocator> MakeErased() {
  return std::make_unique<ErasedAllocatorOf<A>>();
}

// What a MixAllocator is built from: one maker per distinct policy (its
// slot), and each arena's slot.
struct MixPlan {
  std::vector<MakeErasedFn> makers;
  std::vector<uint8_t> slot_of_arena;  // arena_limit entries
};

// The plan of `spec` for `program` (its arena_classes), with each policy's
// maker from `makers` by name: InvalidArgument naming a policy it lacks.
absl::StatusOr<MixPlan> MakeMixPlan(const MixSpec& spec, const ReplayView& program,
                                    const std::map<std::string, MakeErasedFn>& makers);

class MixAllocator {
 public:
  static constexpr bool kThreadSafe = true;  // per class, by the parent's rule
  static constexpr bool kReusesFreedBlocks = true;
  static constexpr bool kArenaReleasesBlocks = false;
  static allocators::AllocatorInfo Info();

  // The plan every MixAllocator constructed after this call is built from
  // (a run constructs its allocator itself: replay_setup.h). Not owned;
  // must outlive them.
  static void UsePlan(const MixPlan* plan);

  MixAllocator();

  void* Allocate(size_t bytes, size_t align, uint32_t arena) {
    return Of(arena).Allocate(bytes, align, arena);
  }
  void* AllocateZeroed(size_t bytes, size_t align, uint32_t arena) {
    return Of(arena).AllocateZeroed(bytes, align, arena);
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena) {
    Of(arena).Deallocate(p, bytes, align, arena);
  }
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    return Of(arena).Reallocate(p, old_bytes, new_bytes, align, arena);
  }
  void ArenaCreated(uint32_t arena) { Of(arena).ArenaCreated(arena); }
  void ArenaDestroyed(uint32_t arena) { Of(arena).ArenaDestroyed(arena); }
  void ReserveArenas(uint32_t limit) {
    for (auto& slot : slots_) slot->ReserveArenas(limit);
  }

 private:
  ErasedAllocator& Of(uint32_t arena) {
    return *slots_[arena < num_arenas_ ? slot_of_arena_[arena] : 0];
  }

  std::vector<std::unique_ptr<ErasedAllocator>> slots_;
  const uint8_t* slot_of_arena_;
  size_t num_arenas_;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_MIX_ALLOCATOR_H_
