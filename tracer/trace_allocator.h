// TraceAllocator<T, Tag = void>: a drop-in std allocator that records every
// allocate and deallocate it serves into the current alloctrace recording.
//
// Change one template argument and run the program:
//
//   std::map<int, int, std::less<int>,
//            alloctrace::TraceAllocator<std::pair<const int, int>>> m;
//
// Classes: every arena (below) belongs to a class, the role its container
// plays, recorded once in the trace's class table with the arena's creation
// (proto/trace.proto, ClassDef). A tag type names the class:
//
//   struct OrderIndex;  // declared only; never defined or instantiated
//   std::map<K, V, std::less<K>,
//            alloctrace::TraceAllocator<std::pair<const K, V>, OrderIndex>> by_id;
//
// and every container tagged OrderIndex is one class, "OrderIndex" (with
// its namespaces: "app::OrderIndex"). Untagged, the class is named after
// the value type written, "std::pair<const long int, Msg>": the name is
// the compiler's spelling of the type (tracer/type_name.h), so GCC and
// Clang may spell one type differently. A class's element size is sizeof
// of that declared value type. Rebinding keeps the class: the map's node
// allocator, TraceAllocator<Node, Tag, Declared>, carries the declared
// value type as its third parameter (leave it at its default), so even a
// node allocator the container default-constructs belongs to the class the
// user wrote, not to one named after the node type. Containers of one class
// share its id and have arenas of their own.
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
// for `single`, or from ::operator new for `std`, and records nothing
// (then, as with std::allocator and HoldingSingleton, all the allocators of
// a std or `single` policy share one handle and compare equal). The
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
#include <type_traits>

#include "absl/base/optimization.h"
#include "alloctrace/base/bits.h"
#include "alloctrace/tracer/arena_allocator.h"
#include "alloctrace/tracer/handle_store.h"
#include "alloctrace/tracer/policy_switch.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/ref_count.h"
#include "alloctrace/tracer/type_name.h"

namespace alloctrace {

// TraceAllocator(kNoArena) records into arena 0, the global heap, as `new`
// or std::make_shared would allocate, instead of a new arena (no_arena.h).

namespace trace_allocator_internal {

// The class of the containers whose declared value type is `Declared`,
// tagged `Tag` (void: untagged). Registered with the recorder once per
// instantiation, on first use.
template <typename Declared, typename Tag>
struct ClassOf {
  static constexpr bool kTagged = !std::is_void_v<Tag>;
  static constexpr std::string_view kName = TypeName<std::conditional_t<kTagged, Tag, Declared>>();
  static uint32_t Id() {
    static const uint32_t id = Recorder::RegisterClass(kName, sizeof(Declared), kTagged);
    return id;
  }
};

class ServedHandle;

// The shared identity of one allocator instance and all its copies: its
// arena id when recording, or the policy and pool that serve it when the
// switch chose one (a ServedHandle; then nothing is recorded). Not
// allocated through a TraceAllocator, so never recorded itself.
//
// A recorded arena's handle is this class alone, 16 bytes (mode, count, id,
// class), from the handle store (HandleStore): a program that makes a
// container per string or per node has as many handles live as
// containers, and each container's destruction reads its handle, so the
// fewer lines they take, the fewer of those reads miss the cache.
//
// Under std and `single` policies every arena of a policy is served alike,
// so all share one handle that is never destroyed and counts no references
// (Ops::shared_arena): creating, copying and destroying such an allocator
// then costs what std::allocator's or HoldingSingleton's does, next to
// nothing, rather than a heap allocation and atomic reference counts per
// arena (a program that default-constructs a string's allocator per string
// makes millions of arenas). Arena 0's handle is never destroyed either.
class ArenaHandle {
 public:
  // How the arena's memory is served.
  enum class Mode : uint8_t {
    kRecord,  // ::operator new / delete, recorded
    kStd,     // ::operator new / delete, inline, as std::allocator
    kPool,    // ops()->allocate / deallocate over pool()
  };

  // The handle of a new arena of ClassT (ClassOf). Inline and one load
  // once a std or `single` policy serves every arena (no assignment): the
  // shared handle, without resolving or registering the class again.
  template <typename ClassT>
  static ArenaHandle* ForNewArena() {
    if (void* h = policy_switch::internal::every_arena.load(std::memory_order_acquire);
        ABSL_PREDICT_TRUE(h != nullptr)) {
      return static_cast<ArenaHandle*>(h);
    }
    return Create(ClassT::Id(), ClassT::kName);
  }

  static inline ArenaHandle* Create(uint32_t class_id, std::string_view class_name);
  // Create's path under the switch (ALLOCTRACE_POLICY).
  ABSL_ATTRIBUTE_NOINLINE static inline ArenaHandle* CreateServed(uint32_t class_id,
                                                                  std::string_view class_name);
  // Arena 0, "no container": a global heap such as plain new or make_shared.
  // Never destroyed (nor its pool).
  static inline ArenaHandle* NoArena();
  // Counted without locked instructions in a single-threaded program
  // (ref_count.h).
  void Ref() {
    if (counted_) refs_.Ref();
  }
  // Inline as far as the count; the last reference's work is a call.
  void Unref() {
    if (counted_ && refs_.Unref()) Destroy();
  }
  Mode mode() const { return mode_; }
  uint32_t id() const { return id_; }
  // Its class (Recorder::RegisterClass); 0 for arena 0 and under the switch.
  uint32_t class_id() const { return class_id_; }
  // nullptr: recording. Otherwise the policy serving this arena from pool().
  inline const policy_switch::Ops* ops() const;
  inline void* pool() const;
  // ops()->allocate and ->deallocate (mode kPool only).
  inline void* Allocate(size_t bytes, size_t align) const;
  inline void Deallocate(void* p, size_t bytes, size_t align) const;

 protected:
  ArenaHandle(Mode mode, bool counted, uint32_t id, uint32_t class_id)
      : mode_(mode), counted_(counted), id_(id), class_id_(class_id) {}
  ~ArenaHandle() = default;

 private:
  // The one handle of every arena of `ops` (std or a `single` policy).
  static inline ArenaHandle* Shared(const policy_switch::Ops* ops);
  const ServedHandle* served() const;
  // The last reference's work: a recorded arena's end recorded and its
  // handle given back, or a served arena's pool destroyed.
  ABSL_ATTRIBUTE_NOINLINE inline void Destroy();
  // Destroy's path for an arena a policy serves.
  ABSL_ATTRIBUTE_NOINLINE inline void DestroyServed();

  const Mode mode_;
  const bool counted_;  // false: shared or arena 0, never destroyed
  RefCount refs_;
  const uint32_t id_;
  const uint32_t class_id_;
};
static_assert(sizeof(ArenaHandle) == 16);

// The handle of an arena a policy serves (ALLOCTRACE_POLICY), or of arena 0.
class ServedHandle final : public ArenaHandle {
 public:
  ServedHandle(const policy_switch::Ops* ops, void* pool, bool counted)
      : ArenaHandle(ops == nullptr ? Mode::kRecord
                    : ops->is_std  ? Mode::kStd
                                   : Mode::kPool,
                    counted, 0, 0),
        ops_(ops),
        pool_(pool),
        allocate_(ops != nullptr ? ops->allocate : nullptr),
        deallocate_(ops != nullptr ? ops->deallocate : nullptr) {}

 private:
  friend class ArenaHandle;

  const policy_switch::Ops* const ops_;
  void* const pool_;
  // ops_->allocate and ->deallocate, kept here: one load less per call.
  void* (*const allocate_)(void* pool, size_t bytes, size_t align);
  void (*const deallocate_)(void* pool, void* p, size_t bytes, size_t align);
};

// A recorded arena's handle: the base alone, from the handle store.
class RecordedHandle final : public ArenaHandle {
 public:
  RecordedHandle(uint32_t id, uint32_t class_id)
      : ArenaHandle(Mode::kRecord, /*counted=*/true, id, class_id) {}
};
static_assert(sizeof(RecordedHandle) <= HandleStore::kBlockBytes);

inline const ServedHandle* ArenaHandle::served() const {
  return static_cast<const ServedHandle*>(this);
}

ArenaHandle* ArenaHandle::Create(uint32_t class_id, std::string_view class_name) {
  policy_switch::Resolve();
  if (policy_switch::Active() == nullptr) {
    // Recording: the handle and the arena's creation inline here, and the
    // switch's work (below) a call, so this path saves no registers for it.
    void* block = HandleStore::Take();
    return new (block) RecordedHandle(Recorder::Global().CreateArena(class_id), class_id);
  }
  return CreateServed(class_id, class_name);
}

ArenaHandle* ArenaHandle::CreateServed(uint32_t class_id, std::string_view class_name) {
  const policy_switch::Ops* ops = policy_switch::Active();
  // Under an assignment, the policy of this arena's class.
  if (const policy_switch::Assignment* a = policy_switch::Assigned()) {
    ops = a->For(class_id, class_name);
  }
  if (!ops->pool_per_instance) {
    ArenaHandle* h = Shared(ops);
    // One policy for every class: later arenas take h without asking.
    if (policy_switch::Assigned() == nullptr)
      policy_switch::internal::every_arena.store(h, std::memory_order_release);
    return h;
  }
  return new ServedHandle(ops, ops->make_pool(class_name), /*counted=*/true);
}

ArenaHandle* ArenaHandle::NoArena() {
  static ArenaHandle* const kNoArena = [] {
    policy_switch::Resolve();
    const policy_switch::Ops* ops = policy_switch::Active();
    return new ServedHandle(ops, ops != nullptr ? ops->make_pool({}) : nullptr,
                            /*counted=*/false);
  }();
  return kNoArena;
}

void ArenaHandle::Destroy() {
  if (mode_ == Mode::kRecord) {  // a recorded arena's: from the handle store
    Recorder::Global().DestroyArena(id_);
    auto* self = static_cast<RecordedHandle*>(this);
    self->~RecordedHandle();
    HandleStore::Give(self);
    return;
  }
  DestroyServed();
}

void ArenaHandle::DestroyServed() {
  const ServedHandle* self = served();
  self->ops_->destroy_pool(self->pool_);
  delete self;
}

const policy_switch::Ops* ArenaHandle::ops() const {
  return mode_ == Mode::kRecord ? nullptr : served()->ops_;
}
void* ArenaHandle::pool() const { return mode_ == Mode::kRecord ? nullptr : served()->pool_; }
void* ArenaHandle::Allocate(size_t bytes, size_t align) const {
  return served()->allocate_(served()->pool_, bytes, align);
}
void ArenaHandle::Deallocate(void* p, size_t bytes, size_t align) const {
  served()->deallocate_(served()->pool_, p, bytes, align);
}

ArenaHandle* ArenaHandle::Shared(const policy_switch::Ops* ops) {
  void* h = ops->shared_arena->load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(h != nullptr)) return static_cast<ArenaHandle*>(h);
  auto* fresh = new ServedHandle(ops, ops->make_pool({}), /*counted=*/false);
  ArenaHandle* as_base = fresh;
  void* expected = h;
  if (ops->shared_arena->compare_exchange_strong(expected, as_base, std::memory_order_acq_rel,
                                                 std::memory_order_acquire)) {
    return fresh;
  }
  delete fresh;  // another thread's won; the pool is the process's, not fresh's
  return static_cast<ArenaHandle*>(expected);
}

}  // namespace trace_allocator_internal

// Tag: a type naming the class (declared only), or void: the class is named
// after Declared. Declared: the value type the container was declared with;
// rebinding sets it, leave it at its default.
template <typename T, typename Tag = void, typename Declared = T>
class TraceAllocator : public ArenaAllocator<TraceAllocator, T, Tag, Declared> {
 public:
  using size_type = std::size_t;
  // The same allocator with another tag: for code written over an allocator
  // template of one parameter (tracer/workloads/workload_support.h,
  // TaggedAllocator) to name its containers' classes.
  template <typename NewTag>
  using with_tag = TraceAllocator<T, NewTag>;

  // A new arena, of the class of (Declared, Tag). Record with kNoArena for
  // arena 0 (which has no class).
  TraceAllocator()
      : arena_(trace_allocator_internal::ArenaHandle::ForNewArena<
               trace_allocator_internal::ClassOf<Declared, Tag>>()) {}
  explicit TraceAllocator(NoArenaTag) : arena_(trace_allocator_internal::ArenaHandle::NoArena()) {}
  TraceAllocator(const TraceAllocator& other) noexcept : arena_(other.arena_) { arena_->Ref(); }
  // From an allocator of the same tag: shares its arena, and so its class.
  template <typename U, typename D>
  TraceAllocator(const TraceAllocator<U, Tag, D>& other) noexcept  // NOLINT: implicit by design
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
    // The switch: one load and one predictable branch, plus one indirect
    // call when a pool policy serves the arena. std and recording call
    // ::operator new inline, as std::allocator does.
    const trace_allocator_internal::ArenaHandle* arena = arena_;
    using Mode = trace_allocator_internal::ArenaHandle::Mode;
    const Mode mode = arena->mode();
    if (ABSL_PREDICT_FALSE(mode == Mode::kPool)) {
      void* q = arena->Allocate(n * sizeof(T), alignof(T));
      if (q == nullptr) throw std::bad_alloc();
      return static_cast<T*>(q);
    }
    void* p;
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      p = ::operator new (n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      p = ::operator new(n * sizeof(T));
    }
    if (mode == Mode::kRecord) {
      Recorder::Global().RecordAlloc(p, arena->id(), sizeof(T), n, kAlignLog2);
    }
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_type n) noexcept {
    const trace_allocator_internal::ArenaHandle* arena = arena_;
    using Mode = trace_allocator_internal::ArenaHandle::Mode;
    const Mode mode = arena->mode();
    if (ABSL_PREDICT_FALSE(mode == Mode::kPool)) {
      arena->Deallocate(p, n * sizeof(T), alignof(T));
      return;
    }
    // Recorded before the block is freed, so its address cannot be reused
    // (and recorded) by another thread first.
    if (mode == Mode::kRecord) Recorder::Global().RecordFree(p, arena->id());
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      ::operator delete (p, n * sizeof(T), std::align_val_t{alignof(T)});
    } else {
      ::operator delete(p, n * sizeof(T));
    }
  }

  uint32_t arena_id() const { return arena_->id(); }
  // The arena's class, shared by copies and rebound copies; 0 for arena 0
  // and under ALLOCTRACE_POLICY (nothing is recorded then).
  uint32_t class_id() const { return arena_->class_id(); }
  // Under ALLOCTRACE_POLICY: the pool serving this allocator and its copies
  // (nullptr for std); nullptr when recording.
  const void* policy_pool() const { return arena_->pool(); }

 private:
  template <typename, typename, typename>
  friend class TraceAllocator;
  template <template <typename...> class, typename, typename...>
  friend class ArenaAllocator;
  const void* arena_key() const { return arena_; }

  static constexpr uint8_t kAlignLog2 = Log2(alignof(T));

  trace_allocator_internal::ArenaHandle* arena_;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_TRACE_ALLOCATOR_H_
