// The replay allocator concept: what every allocator the replayer compares
// provides. Allocators are concrete classes, never called through virtual
// functions; the replayer instantiates its timed loop once per type (see
// registry.h for the list and for dispatch by name).
//
// A type A models the concept if it provides:
//
//   static AllocatorInfo Info();           // name, family, one-line description
//   static constexpr bool kThreadSafe;     // Allocate/Deallocate/Reallocate may
//                                          // run concurrently (for arenas that
//                                          // exist; arena events need the caller
//                                          // to synchronize)
//   static constexpr bool kReusesFreedBlocks;   // a freed block can serve a later
//                                               // Allocate (false: no-op frees)
//   static constexpr bool kArenaReleasesBlocks; // ArenaDestroyed(a) frees the
//                                               // blocks of a still live
//   A();                                   // fresh state, one per replay run
//   void* Allocate(size_t bytes, size_t align, uint32_t arena);
//   void Deallocate(void* p, size_t bytes, size_t align, uint32_t arena);
//   void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align,
//                    uint32_t arena);
//   void ArenaCreated(uint32_t arena);     // a container (allocator instance)
//                                          // was created
//   void ArenaDestroyed(uint32_t arena);   // ... and destroyed
//   ~A();                                  // releases the memory it holds
//
// Contracts, for every allocator:
//  - `align` is a power of two. `bytes` may be 0 (served as a unique block of
//    at least one byte).
//  - Allocate returns a block of at least `bytes` bytes aligned to `align`,
//    or nullptr only when the system is out of memory. It never throws.
//  - Deallocate and Reallocate get the bytes, align and arena the block was
//    allocated (or last reallocated) with.
//  - Reallocate keeps min(old_bytes, new_bytes) bytes of content and returns
//    the new block, or nullptr (out of memory) leaving `p` untouched. The
//    malloc family uses realloc; everything else allocates, copies and frees.
//  - Arena 0 means "no arena" (whole-program heap) and always exists. Other
//    arena ids are dense small integers from 1; an id may be created again
//    after it was destroyed. An arena used without ArenaCreated is created on
//    first use. After ArenaDestroyed(a), a's blocks must not be touched or
//    freed. Only Stack-holding pools act on arena events; for the rest they
//    are no-ops.
//  - ~A() releases the allocator's own memory (pools, chunks, slabs). Blocks
//    still live on a plain malloc path are the caller's to free, except with
//    Stack-holding pools, which free them with their arena.
//  - Allocators backed by process-wide singletons (Boost pools, Singleton
//    holding) allow one live instance per type (CHECK-enforced) and purge
//    the singleton on destruction. The replayer runs each allocator in its
//    own process, so this costs nothing there.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_CONCEPT_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_CONCEPT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "alloctrace/base/check.h"
#include "alloctrace/base/enum_words.h"

namespace alloctrace::allocators {

// Families, for grouping in reports and for the recommendation's
// preference among policies it cannot tell apart.
enum class Family {
  kBaseline,  // malloc, new, Boost, pmr, bump
  kExternal,  // tcmalloc, jemalloc, mimalloc
  kArticle,   // the 48 article policies
  kOurs,      // alloctrace's own pools (slab, small_node)
};
inline constexpr EnumWord<Family> kFamilyWords[] = {{Family::kBaseline, "baseline"},
                                                    {Family::kExternal, "external"},
                                                    {Family::kArticle, "article"},
                                                    {Family::kOurs, "ours"}};

// How a user puts an allocator into their own program: the C++ type to
// paste (with `T` as the element type) and where it comes from, or, for a
// malloc, what to link or preload.
struct Adoption {
  std::string cpp_type;      // "" for a malloc: see `how`
  std::string header;        // what to #include for cpp_type
  std::string bazel_target;  // "" where none is needed (the standard library)
  std::string cmake_target;
  std::string how;  // for a malloc (or with a caveat): in words
};

struct AllocatorInfo {
  std::string name;  // Unique; no spaces, commas or glob characters.
  Family family = Family::kBaseline;
  std::string description;  // One line.
  // A malloc library the run's process must be started with (LD_PRELOAD),
  // as a file name the dynamic loader finds; empty for none.
  std::string preload = {};
  Adoption adopt = {};
  // A::kThreadSafe and A::kReusesFreedBlocks, filled in by the registry
  // (registry.h).
  bool thread_safe = false;
  bool frees_blocks = true;
  // A::kArenaReleasesBlocks, filled in by the registry: each arena has a
  // state of its own (a pool per container), so arenas that threads keep to
  // themselves share nothing. False: one state serves every arena.
  bool state_per_arena = false;
  // The harness's own cost (bump): measured and shown beside the others,
  // never a contender nor in the default set.
  bool floor = false;
};

// Whether A has the concept's members with the right signatures.
template <typename A, typename = void>
struct IsReplayAllocator : std::false_type {};
template <typename A>
struct IsReplayAllocator<
    A, std::void_t<
           decltype(A::Info()), decltype(A::kThreadSafe), decltype(A::kReusesFreedBlocks),
           decltype(A::kArenaReleasesBlocks),
           std::enable_if_t<std::is_same_v<
               decltype(std::declval<A&>().Allocate(size_t{}, size_t{}, uint32_t{})), void*>>,
           decltype(std::declval<A&>().Deallocate(nullptr, size_t{}, size_t{}, uint32_t{})),
           std::enable_if_t<std::is_same_v<decltype(std::declval<A&>().Reallocate(
                                               nullptr, size_t{}, size_t{}, size_t{}, uint32_t{})),
                                           void*>>,
           decltype(std::declval<A&>().ArenaCreated(uint32_t{})),
           decltype(std::declval<A&>().ArenaDestroyed(uint32_t{}))>>
    : std::bool_constant<std::is_default_constructible_v<A> &&
                         std::is_same_v<decltype(A::Info()), AllocatorInfo>> {};

// Reallocate for allocators without a native one: allocate, copy, free.
template <typename A>
void* ReallocateByCopy(A& allocator, void* p, size_t old_bytes, size_t new_bytes, size_t align,
                       uint32_t arena) {
  void* block = allocator.Allocate(new_bytes, align, arena);
  if (block == nullptr || p == nullptr) return block;
  std::memcpy(block, p, std::min(old_bytes, new_bytes));
  allocator.Deallocate(p, old_bytes, align, arena);
  return block;
}

// The concept members most allocators share, as a base to derive from
// (class A : public ReplayAllocatorDefaults<A>): realloc by allocate, copy
// and free, and no use for arena events. A class that does either
// differently declares its own member, which hides the default.
template <typename Derived>
class ReplayAllocatorDefaults {
 public:
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    return ReallocateByCopy(static_cast<Derived&>(*this), p, old_bytes, new_bytes, align, arena);
  }
  void ArenaCreated(uint32_t /*arena*/) {}
  void ArenaDestroyed(uint32_t /*arena*/) {}
};

namespace allocators_internal {

// Enforces "one live instance per type" for allocators over process-wide
// state. Not thread-safe: instances are created and destroyed by one thread.
template <typename Owner>
class SingleInstanceGuard {
 public:
  SingleInstanceGuard() {
    ALLOCTRACE_CHECK(live_ == 0,
                     "a second instance of an allocator over process-wide "
                     "state; destroy the first one before");
    ++live_;
  }
  ~SingleInstanceGuard() { --live_; }
  SingleInstanceGuard(const SingleInstanceGuard&) = delete;
  SingleInstanceGuard& operator=(const SingleInstanceGuard&) = delete;

 private:
  static inline int live_ = 0;
};

}  // namespace allocators_internal
}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_ALLOCATOR_CONCEPT_H_
