// ArenaAllocator: what an allocator whose instances are arenas tells the
// containers that use it. Shared by TraceAllocator (tracer/trace_allocator.h)
// and its test twin CountingAllocator (tracer/workloads/counting_allocator.h),
// so that the twin cannot drift from what the recording sees.
//
// The model: each default-constructed allocator is a new arena; copies and
// rebound copies share it, so every node of one container lands in one arena
// and a replay can give each container its own pool. Arena 0 ("no arena",
// from NoArenaTag) is the global heap, as `new` or std::make_shared would
// allocate. Hence:
// - copy-constructing a container starts a new arena (arena 0 stays 0);
// - copy assignment keeps the target's arena; move assignment and swap carry
//   the arena along, so a container's nodes never change arenas;
// - two allocators compare equal iff they share an arena.
//
// Use (CRTP): `template <typename T> class A : public ArenaAllocator<A, T>`,
// or, for an allocator with more parameters that rebinding keeps,
// `template <typename T, typename X> class A : public ArenaAllocator<A, T, X>`
// (rebind<U> is then A<U, X>). A<T, Extra...> must be default-constructible
// (a new arena) and provide, for the base (befriend it as below):
//   uint32_t arena_id() const;        // 0 for arena 0
//   const void* arena_key() const;    // the same for exactly the copies of one arena
//   template <template <typename...> class, typename, typename...>
//   friend class ::alloctrace::ArenaAllocator;
#ifndef ALLOCTRACE_TRACER_ARENA_ALLOCATOR_H_
#define ALLOCTRACE_TRACER_ARENA_ALLOCATOR_H_

#include <cstddef>
#include <type_traits>

#include "alloctrace/tracer/no_arena.h"

namespace alloctrace {

template <template <typename...> class Alloc, typename T, typename... Extra>
class ArenaAllocator {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::false_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  template <typename U>
  struct rebind {
    using other = Alloc<U, Extra...>;
  };

  Alloc<T, Extra...> select_on_container_copy_construction() const {
    const Alloc<T, Extra...>& self = static_cast<const Alloc<T, Extra...>&>(*this);
    return self.arena_id() == 0 ? self : Alloc<T, Extra...>();
  }

  template <typename... U>
  friend bool operator==(const Alloc<T, Extra...>& a, const Alloc<U...>& b) {
    return Key(a) == Key(b);
  }
  template <typename... U>
  friend bool operator!=(const Alloc<T, Extra...>& a, const Alloc<U...>& b) {
    return Key(a) != Key(b);
  }

 private:
  template <typename... U>
  static const void* Key(const Alloc<U...>& a) {
    return a.arena_key();
  }
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_ARENA_ALLOCATOR_H_
