// Baseline allocators the pool policies are measured against, as replay
// allocators (allocator_concept.h):
//
//   malloc           glibc malloc/free/realloc; aligned_alloc above
//                    alignof(max_align_t). Preloading another malloc
//                    (tcmalloc, jemalloc, mimalloc) measures that one.
//   new              std::allocator: ::operator new/delete, sized and aligned
//                    overloads.
//   pmr_unsync_pool  std::pmr::unsynchronized_pool_resource over
//                    new_delete_resource, one resource for the whole run.
//   pmr_monotonic    std::pmr::monotonic_buffer_resource over
//                    new_delete_resource, one for the whole run; frees are
//                    no-ops.
//   bump             bumps a pointer through mmapped slabs and never frees
//                    before destruction: the replay harness's own cost.
//
// The Boost pools are in boost_allocators.h.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_BASELINE_ALLOCATORS_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_BASELINE_ALLOCATORS_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/engine/allocators/preloaded_mallocs.h"

namespace alloctrace::allocators {

// Thread-safety: thread-safe. Failure: nullptr from malloc.
class MallocAllocator : public ReplayAllocatorDefaults<MallocAllocator> {
 public:
  static constexpr bool kThreadSafe = true;
  static constexpr bool kReusesFreedBlocks = true;
  static constexpr bool kArenaReleasesBlocks = false;
  static AllocatorInfo Info();

  void* Allocate(size_t bytes, size_t align, uint32_t /*arena*/) {
    if (ABSL_PREDICT_TRUE(align <= alignof(std::max_align_t))) {
      return std::malloc(bytes);
    }
    return AlignedAllocate(bytes, align);
  }
  // calloc, replayed as calloc: it may skip zeroing memory fresh from the
  // system, which Allocate + memset cannot. (Optional concept member; the
  // replay loop uses Allocate + memset for allocators without it.)
  void* AllocateZeroed(size_t bytes, size_t align, uint32_t arena) {
    if (ABSL_PREDICT_TRUE(align <= alignof(std::max_align_t))) return std::calloc(1, bytes);
    void* p = AlignedAllocate(bytes, align);
    if (p != nullptr) std::memset(p, 0, bytes);
    return p;
  }
  void Deallocate(void* p, size_t /*bytes*/, size_t /*align*/, uint32_t /*arena*/) { std::free(p); }
  void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t align, uint32_t arena) {
    if (ABSL_PREDICT_TRUE(align <= alignof(std::max_align_t))) {
      // realloc(p, 0) would free p.
      return std::realloc(p, new_bytes == 0 ? 1 : new_bytes);
    }
    return ReallocateByCopy(*this, p, old_bytes, new_bytes, align, arena);
  }

 private:
  static void* AlignedAllocate(size_t bytes, size_t align);
};

// The entries of kPreloadedMallocs (preloaded_mallocs.h), in its order.
enum class ExternalMalloc { kTcmalloc, kJemalloc, kMimalloc };

constexpr const PreloadedMalloc& PreloadedMallocOf(ExternalMalloc which) {
  return kPreloadedMallocs[static_cast<size_t>(which)];
}
static_assert(std::size(kPreloadedMallocs) == 3);
static_assert(PreloadedMallocOf(ExternalMalloc::kTcmalloc).policy == "tcmalloc");
static_assert(PreloadedMallocOf(ExternalMalloc::kJemalloc).policy == "jemalloc");
static_assert(PreloadedMallocOf(ExternalMalloc::kMimalloc).policy == "mimalloc");

// Thread-safety: thread-safe. Failure: nullptr where new throws bad_alloc.
// The malloc family of another library: MallocAllocator in a process
// started with that library preloaded (the replayer re-executes itself with
// LD_PRELOAD for these). In a process without the preload it is glibc's
// malloc, so the conformance suite does not run over these types.
template <ExternalMalloc kWhich>
class PreloadedMallocAllocator : public MallocAllocator {
 public:
  static AllocatorInfo Info() {
    const char* description = "";
    switch (kWhich) {
      case ExternalMalloc::kTcmalloc:
        description = "gperftools tcmalloc (minimal), preloaded: malloc/free/realloc/calloc";
        break;
      case ExternalMalloc::kJemalloc:
        description = "jemalloc 5, preloaded: malloc/free/realloc/calloc";
        break;
      case ExternalMalloc::kMimalloc:
        description = "mimalloc 2, preloaded: malloc/free/realloc/calloc";
        break;
    }
    constexpr const PreloadedMalloc& m = PreloadedMallocOf(kWhich);
    AllocatorInfo info = {std::string(m.policy), Family::kExternal, description,
                          std::string(m.file)};
    info.adopt.how = "link the program with -l" + std::string(m.link_name) +
                     " (Debian: " + std::string(m.debian_package) +
                     "), or start it with LD_PRELOAD=" + std::string(m.file);
    return info;
  }
};

// Runs `allocate` (which returns a pointer), turning a std::bad_alloc into
// nullptr: the replay concept's failure.
template <typename Allocate>
void* NullOnBadAlloc(Allocate allocate) {
  try {
    return allocate();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

class NewAllocator : public ReplayAllocatorDefaults<NewAllocator> {
 public:
  static constexpr bool kThreadSafe = true;
  static constexpr bool kReusesFreedBlocks = true;
  static constexpr bool kArenaReleasesBlocks = false;
  static AllocatorInfo Info();

  void* Allocate(size_t bytes, size_t align, uint32_t /*arena*/) {
    return NullOnBadAlloc([&] {
      if (ABSL_PREDICT_TRUE(align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__)) {
        return ::operator new(bytes);
      }
      return ::operator new (bytes, std::align_val_t{align});
    });
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t /*arena*/) {
    if (ABSL_PREDICT_TRUE(align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__)) {
      ::operator delete(p, bytes);
    } else {
      ::operator delete (p, bytes, std::align_val_t{align});
    }
  }
};

// One std::pmr `Resource` over new_delete_resource for the whole run; each
// request is for Derived::BlockBytes(bytes, align) bytes.
// Thread-safety: none. Failure: nullptr where the resource throws bad_alloc.
template <typename Derived, typename Resource>
class PmrResourceAllocator : public ReplayAllocatorDefaults<Derived> {
 public:
  static constexpr bool kThreadSafe = false;
  static constexpr bool kArenaReleasesBlocks = false;

  void* Allocate(size_t bytes, size_t align, uint32_t /*arena*/) {
    return NullOnBadAlloc(
        [&] { return resource_.allocate(Derived::BlockBytes(bytes, align), align); });
  }
  void Deallocate(void* p, size_t bytes, size_t align, uint32_t /*arena*/) {
    resource_.deallocate(p, Derived::BlockBytes(bytes, align), align);
  }

 private:
  Resource resource_{std::pmr::new_delete_resource()};
};

// Sizes are rounded up to a multiple of the alignment, as sizeof(T) always
// is: libstdc++ picks the pool by max(bytes, align), so a 24-byte request
// aligned to 16 would get a block of the 24-byte pool, aligned to 8 only.
class PmrUnsyncPoolAllocator
    : public PmrResourceAllocator<PmrUnsyncPoolAllocator, std::pmr::unsynchronized_pool_resource> {
 public:
  static constexpr bool kReusesFreedBlocks = true;
  static AllocatorInfo Info();
  static size_t BlockBytes(size_t bytes, size_t align) {
    return (bytes + align - 1) & ~(align - 1);
  }
};

// Its deallocate is a no-op.
class PmrMonotonicAllocator
    : public PmrResourceAllocator<PmrMonotonicAllocator, std::pmr::monotonic_buffer_resource> {
 public:
  static constexpr bool kReusesFreedBlocks = false;
  static AllocatorInfo Info();
  static size_t BlockBytes(size_t bytes, size_t /*align*/) { return bytes == 0 ? 1 : bytes; }
};

// Hands out consecutive addresses from mmapped slabs (1 MiB, doubling to
// 64 MiB; a bigger request gets a slab of its own) and frees nothing before
// destruction. Thread-safety: none. Failure: nullptr when mmap fails.
class BumpAllocator : public ReplayAllocatorDefaults<BumpAllocator> {
 public:
  static constexpr bool kThreadSafe = false;
  static constexpr bool kReusesFreedBlocks = false;
  static constexpr bool kArenaReleasesBlocks = false;
  static constexpr size_t kFirstSlabBytes = size_t{1} << 20;
  static constexpr size_t kMaxSlabBytes = size_t{64} << 20;
  static constexpr size_t kPrefaultedBytes = size_t{64} << 20;
  static AllocatorInfo Info();

  // Maps and faults in the first slab (kPrefaultedBytes) up front, outside
  // any timing, so that the replay's cost measured with this allocator is
  // the harness's own: the loop, the pointer table and the touch of each
  // block, with no page faults until that much has been allocated.
  BumpAllocator();
  BumpAllocator(const BumpAllocator&) = delete;
  BumpAllocator& operator=(const BumpAllocator&) = delete;
  ~BumpAllocator();

  void* Allocate(size_t bytes, size_t align, uint32_t /*arena*/) {
    const uintptr_t start = (cursor_ + align - 1) & ~(align - 1);
    const size_t size = bytes + static_cast<size_t>(bytes == 0);
    if (ABSL_PREDICT_TRUE(start <= limit_ && size <= limit_ - start)) {
      cursor_ = start + size;
      return reinterpret_cast<void*>(start);
    }
    return AllocateFromNewSlab(size, align);
  }
  void Deallocate(void* /*p*/, size_t /*bytes*/, size_t /*align*/, uint32_t /*arena*/) {}

 private:
  struct Slab {
    void* start;
    size_t bytes;
  };

  ABSL_ATTRIBUTE_NOINLINE void* AllocateFromNewSlab(size_t size, size_t align);

  uintptr_t cursor_ = 0;
  uintptr_t limit_ = 0;
  size_t next_slab_bytes_ = kFirstSlabBytes;
  std::vector<Slab> slabs_;
};

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_BASELINE_ALLOCATORS_H_
