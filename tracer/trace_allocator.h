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
// Run-time switch (tracer/policy_switch.h): with ALLOCTRACE_POLICY=<name>
// set, every TraceAllocator serves its memory from that pool policy of
// pool/catalog.h, a pool per arena for `stack` policies and the shared one
// for `single`, or from ::operator new for `std`, and records nothing. The
// name is read when the first TraceAllocator is constructed; an unknown one
// exits with status 2.
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

#include "absl/base/optimization.h"
#include "alloctrace/base/bits.h"
#include "alloctrace/tracer/arena_allocator.h"
#include "alloctrace/tracer/policy_switch.h"
#include "alloctrace/tracer/recorder.h"

namespace alloctrace {

// TraceAllocator(kNoArena) records into arena 0, the global heap, as `new`
// or std::make_shared would allocate, instead of a new arena (no_arena.h).

namespace trace_allocator_internal {

// The shared identity of one allocator instance and all its copies: its
// arena id when recording, or the policy and pool that serve it when the
// switch chose one (ops_ non-null; then nothing is recorded).
// Not allocated through a TraceAllocator, so never recorded itself.
class ArenaHandle {
 public:
  static ArenaHandle* Create() {
    policy_switch::Resolve();
    const policy_switch::Ops* ops = policy_switch::Active();
    if (ops != nullptr) return new ArenaHandle(0, ops, ops->make_pool());
    return new ArenaHandle(Recorder::Global().CreateArena(), nullptr, nullptr);
  }
  // Arena 0, "no container": a global heap such as plain new or make_shared.
  // Holds one reference of its own, so it is never destroyed (nor its pool).
  static ArenaHandle* NoArena() {
    static ArenaHandle* const kNoArena = [] {
      policy_switch::Resolve();
      const policy_switch::Ops* ops = policy_switch::Active();
      return new ArenaHandle(0, ops, ops != nullptr ? ops->make_pool() : nullptr);
    }();
    kNoArena->Ref();
    return kNoArena;
  }
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (ops_ == nullptr) {
        Recorder::Global().DestroyArena(id_);
      } else {
        ops_->destroy_pool(pool_);
      }
      delete this;
    }
  }
  uint32_t id() const { return id_; }
  // nullptr: recording. Otherwise the policy serving this arena from pool().
  const policy_switch::Ops* ops() const { return ops_; }
  void* pool() const { return pool_; }

 private:
  ArenaHandle(uint32_t id, const policy_switch::Ops* ops, void* pool)
      : id_(id), ops_(ops), pool_(pool) {}
  std::atomic<uint32_t> refs_{1};
  const uint32_t id_;
  const policy_switch::Ops* const ops_;
  void* const pool_;
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
    // The switch: one predictable branch when recording, plus one indirect
    // call when a policy serves the arena.
    if (const policy_switch::Ops* ops = arena_->ops(); ABSL_PREDICT_FALSE(ops != nullptr)) {
      void* q = ops->allocate(arena_->pool(), n * sizeof(T), alignof(T));
      if (q == nullptr) throw std::bad_alloc();
      return static_cast<T*>(q);
    }
    void* p;
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      p = ::operator new (n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      p = ::operator new(n * sizeof(T));
    }
    Recorder::Global().RecordAlloc(p, arena_->id(), sizeof(T), n, kAlignLog2);
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_type n) noexcept {
    if (const policy_switch::Ops* ops = arena_->ops(); ABSL_PREDICT_FALSE(ops != nullptr)) {
      ops->deallocate(arena_->pool(), p, n * sizeof(T), alignof(T));
      return;
    }
    Recorder::Global().RecordFree(p, arena_->id());
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      ::operator delete (p, n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      ::operator delete(p, n * sizeof(T));
    }
  }

  uint32_t arena_id() const { return arena_->id(); }
  // Under ALLOCTRACE_POLICY: the pool serving this allocator and its copies
  // (nullptr for std); nullptr when recording.
  const void* policy_pool() const { return arena_->pool(); }

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
