#include "alloctrace/replayer/engine/allocators/baseline_allocators.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

#include "alloctrace/pool/page_map.h"

namespace alloctrace::allocators {

AllocatorInfo MallocAllocator::Info() {
  AllocatorInfo info{"malloc", Family::kBaseline,
                     "the process's malloc/free/realloc (glibc unless another is "
                     "preloaded); aligned_alloc above 16"};
  info.adopt.how =
      "nothing to change: glibc malloc serves std::allocator (through operator new) unless "
      "another malloc is linked or preloaded";
  return info;
}

void* MallocAllocator::AlignedAllocate(size_t bytes, size_t align) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t rounded = (bytes + align - 1) & ~(align - 1);
  return std::aligned_alloc(align, rounded == 0 ? align : rounded);
}

AllocatorInfo NewAllocator::Info() {
  AllocatorInfo info{"new", Family::kBaseline,
                     "std::allocator: ::operator new/delete, sized and aligned overloads"};
  info.adopt = Adoption{"std::allocator<T>", "memory", "", "", "the standard default"};
  return info;
}

AllocatorInfo PmrUnsyncPoolAllocator::Info() {
  AllocatorInfo info{"pmr_unsync_pool", Family::kBaseline,
                     "std::pmr::unsynchronized_pool_resource over new_delete_resource, "
                     "one per run"};
  info.adopt = Adoption{"std::pmr::polymorphic_allocator<T>", "memory_resource", "", "",
                        "give every container the same std::pmr::unsynchronized_pool_resource "
                        "(over new_delete_resource), as the replay does; used from one thread"};
  return info;
}

AllocatorInfo PmrMonotonicAllocator::Info() {
  AllocatorInfo info{"pmr_monotonic", Family::kBaseline,
                     "std::pmr::monotonic_buffer_resource over new_delete_resource, one "
                     "per run; frees are no-ops"};
  info.adopt = Adoption{"std::pmr::polymorphic_allocator<T>", "memory_resource", "", "",
                        "give every container the same std::pmr::monotonic_buffer_resource "
                        "(over new_delete_resource), as the replay does; nothing is freed "
                        "before the resource goes"};
  return info;
}

AllocatorInfo BumpAllocator::Info() {
  AllocatorInfo info{"bump", Family::kBaseline,
                     "pointer bump through a pre-faulted 64 MiB slab, never frees: the "
                     "harness's own cost (its RSS figures mean nothing)"};
  info.adopt.how = "not an allocator to adopt: the replay harness's own cost";
  info.floor = true;
  return info;
}

BumpAllocator::BumpAllocator() {
  void* slab = pool::MapPages(kPrefaultedBytes);
  if (slab == nullptr) return;  // the first Allocate maps a slab instead
  slabs_.push_back({slab, kPrefaultedBytes});
  // MADV_POPULATE_WRITE where the kernel has it (5.14), else touch each page.
  if (madvise(slab, kPrefaultedBytes, 23 /* MADV_POPULATE_WRITE */) != 0) {
    for (size_t i = 0; i < kPrefaultedBytes; i += pool::kPageSize) {
      static_cast<volatile char*>(slab)[i] = 0;
    }
  }
  cursor_ = reinterpret_cast<uintptr_t>(slab);
  limit_ = cursor_ + kPrefaultedBytes;
}

BumpAllocator::~BumpAllocator() {
  for (const Slab& slab : slabs_) pool::UnmapPages(slab.start, slab.bytes);
}

void* BumpAllocator::AllocateFromNewSlab(size_t size, size_t align) {
  // Room for the block at any alignment, in whole pages.
  const size_t needed = (size + align + pool::kPageSize - 1) & ~(pool::kPageSize - 1);
  if (needed < size) return nullptr;  // Overflow.
  const size_t slab_bytes = std::max(next_slab_bytes_, needed);
  void* slab = pool::MapPages(slab_bytes);
  if (slab == nullptr) return nullptr;
  try {
    slabs_.push_back({slab, slab_bytes});
  } catch (const std::bad_alloc&) {
    pool::UnmapPages(slab, slab_bytes);
    return nullptr;
  }
  next_slab_bytes_ = std::min(next_slab_bytes_ * 2, kMaxSlabBytes);
  // The rest of the previous slab is abandoned: bump allocators never look back.
  cursor_ = reinterpret_cast<uintptr_t>(slab);
  limit_ = cursor_ + slab_bytes;
  return Allocate(size, align, 0);
}

}  // namespace alloctrace::allocators
