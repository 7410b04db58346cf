// TraceAllocator<T>: a drop-in std allocator that records every allocate and
// deallocate it serves into the current alloctrace recording.
//
// Change one template argument and run the program:
//
//   std::map<int, int, std::less<int>,
//            alloctrace::TraceAllocator<std::pair<const int, int>>> m;
//
// Memory comes from ::operator new / ::operator delete (aligned overloads for
// over-aligned types), exactly as std::allocator would get it.
//
// Arenas: each default-constructed TraceAllocator is a new allocator instance
// ("arena") with its own id, recorded when it is created and when its last
// copy is destroyed. Copies and rebound copies share the arena, so all the
// nodes of one container land in one arena and a replay can give each
// container its own pool. Copying a container
// (select_on_container_copy_construction) starts a new arena; the rest of
// what containers are told is in tracer/arena_allocator.h.
//
// Thread-safety: as std::allocator. Copies may be used and destroyed from any
// thread. Recording goes to Recorder::Global() (see tracer/recorder.h); if no
// recording was started, the first event starts one that writes
// $ALLOCTRACE_OUT (default "alloctrace.<pid>.trace").
#ifndef ALLOCTRACE_TRACER_TRACE_ALLOCATOR_H_
#define ALLOCTRACE_TRACER_TRACE_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>

#include "base/bits.h"
#include "tracer/arena_allocator.h"
#include "tracer/recorder.h"

namespace alloctrace {

// TraceAllocator(kNoArena) records into arena 0, the global heap, as `new`
// or std::make_shared would allocate, instead of a new arena (no_arena.h).

namespace trace_allocator_internal {

// The shared identity of one allocator instance and all its copies.
// Not allocated through a TraceAllocator, so never recorded itself.
class ArenaHandle {
 public:
  static ArenaHandle* Create() { return new ArenaHandle(Recorder::Global().CreateArena()); }
  // Arena 0, "no container": a global heap such as plain new or make_shared.
  // Holds one reference of its own, so it is never destroyed.
  static ArenaHandle* NoArena() {
    static ArenaHandle* const kNoArena = new ArenaHandle(0);
    kNoArena->Ref();
    return kNoArena;
  }
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Recorder::Global().DestroyArena(id_);
      delete this;
    }
  }
  uint32_t id() const { return id_; }

 private:
  explicit ArenaHandle(uint32_t id) : id_(id) {}
  std::atomic<uint32_t> refs_{1};
  const uint32_t id_;
};

}  // namespace trace_allocator_internal

template <typename T>
class TraceAllocator : public ArenaAllocator<TraceAllocator, T> {
 public:
  using size_type = std::size_t;

  // A new arena. Record with kNoArena for arena 0.
  TraceAllocator() : arena_(trace_allocator_internal::ArenaHandle::Create()) {}
  explicit TraceAllocator(NoArenaTag) : arena_(trace_allocator_internal::ArenaHandle::NoArena()) {}
  TraceAllocator(const TraceAllocator& other) noexcept : arena_(other.arena_) { arena_->Ref(); }
  template <typename U>
  TraceAllocator(const TraceAllocator<U>& other) noexcept  // NOLINT: implicit by design
      : arena_(other.arena_) {
    arena_->Ref();
  }
  TraceAllocator& operator=(const TraceAllocator& other) noexcept {
    other.arena_->Ref();
    arena_->Unref();
    arena_ = other.arena_;
    return *this;
  }
  ~TraceAllocator() { arena_->Unref(); }

  T* allocate(size_type n) {
    if (n > std::numeric_limits<size_type>::max() / sizeof(T)) throw std::bad_array_new_length();
    void* p;
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      p = ::operator new(n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      p = ::operator new(n * sizeof(T));
    }
    Recorder::Global().RecordAlloc(p, arena_->id(), sizeof(T), n, kAlignLog2);
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_type n) noexcept {
    Recorder::Global().RecordFree(p, arena_->id());
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      ::operator delete(p, n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      ::operator delete(p, n * sizeof(T));
    }
  }

  uint32_t arena_id() const { return arena_->id(); }

 private:
  template <typename U>
  friend class TraceAllocator;
  template <template <typename> class, typename>
  friend class ArenaAllocator;
  const void* arena_key() const { return arena_; }

  static constexpr uint8_t kAlignLog2 = Log2(alignof(T));

  trace_allocator_internal::ArenaHandle* arena_;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_TRACE_ALLOCATOR_H_
