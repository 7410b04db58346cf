// SlabPool: alloctrace's own pool policy ("slab"), built the way the fastest
// general allocators (tcmalloc, mimalloc) build their small-object path, for
// node containers (std::map/set/list nodes, shared_ptr control blocks).
//
// Design:
//  - Size classes every 8 bytes up to kMaxSmall (256). A request maps to its
//    class by arithmetic, no search: round bytes up to max(8, align), divide
//    by 8. Node sizes pack tightly (a 40-byte map node takes 40 bytes; glibc
//    takes 48, 16-byte classes would take 48).
//  - Each class keeps a LIFO free list threaded through its free blocks. The
//    caller passes the size to Deallocate (std allocators and the replay
//    concept both know it), so a free finds its class by the same
//    arithmetic: O(1), no owner lookup, no per-block header.
//  - Fast paths are one branch each: Allocate pops the free list if it is
//    non-empty; Deallocate pushes unless the class is the "large" sentinel.
//    Requests over kMaxSmall, or aligned beyond 256, map to that sentinel
//    class, whose free list is always empty, so they cost no extra branch on
//    the small path and go to malloc/aligned_alloc in the slow path,
//    linked in a LargeBlockList (a 32-byte header each) so that releasing
//    the pool (Stack holding: its container goes) frees them too.
//  - When the free list is empty the class bump-allocates from its current
//    span. Spans are page-aligned runs carved from slabs; a class's spans
//    double from 16 KiB to 1 MiB. Slabs are mmapped, doubling from 1 MiB to
//    64 MiB; pages become resident only when a block on them is first used.
//  - Alignment: a class's block size is a multiple of every alignment mapped
//    to it, and spans are page-aligned, so each block is aligned as asked.
//
// Memory is not returned to the system before the pool is destroyed or
// ReleaseAll() is called; freed blocks are reused by their class only.
//
// Thread-safety: as the threading policy says. SingleThreaded (the replayed
// "slab"): none. MultiThreaded: one mutex around every call.
// Failure: Allocate returns nullptr when the system is out of memory.
#ifndef ALLOCTRACE_POOL_SLAB_POOL_H_
#define ALLOCTRACE_POOL_SLAB_POOL_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/pool/large_block_list.h"
#include "alloctrace/pool/page_map.h"
#include "alloctrace/pool/policies.h"

namespace alloctrace::pool {

template <typename Threading = SingleThreaded>
class SlabPool {
 public:
  using ThreadingPolicy = Threading;
  static constexpr char kName[] = "slab";
  static constexpr bool kFreesBlocks = true;
  static constexpr size_t kGranule = 8;
  // Largest request served from slabs.
  static constexpr size_t kMaxSmall = 256;
  // Class index of requests that go to malloc.
  static constexpr size_t kLargeClass = kMaxSmall / kGranule + 1;
  static constexpr size_t kFirstSpanBytes = size_t{16} << 10;
  static constexpr size_t kMaxSpanBytes = size_t{1} << 20;
  static constexpr size_t kFirstSlabBytes = size_t{1} << 20;
  static constexpr size_t kMaxSlabBytes = size_t{64} << 20;

  SlabPool() { ResetClasses(); }
  SlabPool(const SlabPool&) = delete;
  SlabPool& operator=(const SlabPool&) = delete;
  ~SlabPool() { UnmapSlabs(); }

  // The size class serving (bytes, align); kLargeClass for the malloc path.
  // `align` is a power of two.
  static size_t ClassIndex(size_t bytes, size_t align) {
    const size_t unit = ((align - 1) | (kGranule - 1)) + 1;  // max(8, align)
    const size_t rounded = (bytes + static_cast<size_t>(bytes == 0) + unit - 1) & ~(unit - 1);
    return std::min(rounded / kGranule, kLargeClass);
  }
  static size_t ClassBlockSize(size_t index) { return index * kGranule; }

  // A block of at least `bytes` bytes aligned to `align` (a power of two),
  // or nullptr if the system is out of memory.
  void* Allocate(size_t bytes, size_t align) {
    std::lock_guard<Mutex> lock(mutex_);
    SizeClass& size_class = classes_[ClassIndex(bytes, align)];
    void* block = size_class.free_list;
    if (ABSL_PREDICT_TRUE(block != nullptr)) {
      size_class.free_list = *static_cast<void**>(block);
      return block;
    }
    if (ABSL_PREDICT_TRUE(size_class.bump < size_class.bump_end)) {
      block = size_class.bump;
      size_class.bump += size_class.block_size;
      return block;
    }
    return Refill(size_class, bytes, align);
  }

  // Allocate, with the first `bytes` bytes zero. A large request comes from
  // calloc, which does not write pages fresh from the system.
  void* AllocateZeroed(size_t bytes, size_t align) {
    if (ClassIndex(bytes, align) == kLargeClass) {
      std::lock_guard<Mutex> lock(mutex_);
      return large_.AllocateZeroed(bytes, align);
    }
    void* block = Allocate(bytes, align);
    if (block != nullptr) std::memset(block, 0, bytes);
    return block;
  }

  // Resizes a block from Allocate(old_bytes, align) (or nullptr: allocates)
  // to new_bytes, keeping min(old_bytes, new_bytes) bytes of content. In
  // place when both sizes map to one class; two large sizes go to realloc
  // (in place, or by moving pages rather than copying them, where the
  // system can), so a chain of growing reallocs is linear. Otherwise
  // allocate, copy, free. nullptr, with `block` untouched, when out of memory.
  void* Reallocate(void* block, size_t old_bytes, size_t new_bytes, size_t align) {
    if (block == nullptr) return Allocate(new_bytes, align);
    const size_t old_class = ClassIndex(old_bytes, align);
    const size_t new_class = ClassIndex(new_bytes, align);
    if (old_class == new_class) {
      if (old_class != kLargeClass) return block;
      if (LargeBlockList::CanReallocate(align)) {
        std::lock_guard<Mutex> lock(mutex_);
        return large_.Reallocate(block, new_bytes);
      }
    }
    void* fresh = Allocate(new_bytes, align);
    if (fresh == nullptr) return nullptr;
    std::memcpy(fresh, block, std::min(old_bytes, new_bytes));
    Deallocate(block, old_bytes, align);
    return fresh;
  }

  // Frees a block from Allocate(bytes, align), with the same bytes and align.
  void Deallocate(void* block, size_t bytes, size_t align) {
    std::lock_guard<Mutex> lock(mutex_);
    const size_t index = ClassIndex(bytes, align);
    if (ABSL_PREDICT_FALSE(index == kLargeClass)) {
      large_.Deallocate(block);
      return;
    }
    SizeClass& size_class = classes_[index];
    *static_cast<void**>(block) = size_class.free_list;
    size_class.free_list = block;
  }

  // Unmaps every slab and frees every block on the malloc path: all blocks,
  // live or not, are gone (Stack holding: the container went).
  void ReleaseAll() {
    std::lock_guard<Mutex> lock(mutex_);
    UnmapSlabs();
    ResetClasses();
    large_.ReleaseAll();
  }

  // Bytes mapped for slabs.
  size_t mapped_bytes() const {
    std::lock_guard<Mutex> lock(mutex_);
    size_t bytes = 0;
    for (const Slab& slab : slabs_) bytes += slab.bytes;
    return bytes;
  }

 private:
  using Mutex = typename Threading::Mutex;

  struct SizeClass {
    void* free_list;  // Freed blocks, linked through their first word.
    char* bump;       // Next never-used block of the current span ...
    char* bump_end;   // ... up to here (a whole number of blocks).
    size_t block_size;
    size_t next_span_bytes;
  };
  struct Slab {
    void* start;
    size_t bytes;
  };

  // The free list and the span are empty: carve a new span, or serve a
  // large request from malloc.
  ABSL_ATTRIBUTE_NOINLINE void* Refill(SizeClass& size_class, size_t bytes, size_t align) {
    if (&size_class == &classes_[kLargeClass]) return large_.Allocate(bytes, align);
    const size_t span_bytes = size_class.next_span_bytes;
    char* span = CarveSpan(span_bytes);
    if (span == nullptr) return nullptr;
    size_class.next_span_bytes = std::min(span_bytes * 2, kMaxSpanBytes);
    const size_t block_size = size_class.block_size;
    size_class.bump = span + block_size;
    size_class.bump_end = span + span_bytes / block_size * block_size;
    return span;
  }

  // `bytes` (a multiple of kPageSize) from the current slab, or a new one.
  char* CarveSpan(size_t bytes) {
    if (slab_left_ < bytes) {
      // The rest of the current slab is abandoned: never touched, it costs
      // address space only.
      size_t slab_bytes = std::max(next_slab_bytes_, bytes);
      void* slab = MapPages(slab_bytes);
      if (slab == nullptr) return nullptr;
      try {
        slabs_.push_back({slab, slab_bytes});
      } catch (const std::bad_alloc&) {
        UnmapPages(slab, slab_bytes);
        return nullptr;
      }
      next_slab_bytes_ = std::min(next_slab_bytes_ * 2, kMaxSlabBytes);
      slab_cursor_ = static_cast<char*>(slab);
      slab_left_ = slab_bytes;
    }
    char* span = slab_cursor_;
    slab_cursor_ += bytes;
    slab_left_ -= bytes;
    return span;
  }

  void ResetClasses() {
    for (size_t i = 0; i < classes_.size(); ++i) {
      classes_[i] = SizeClass{nullptr, nullptr, nullptr, ClassBlockSize(i), kFirstSpanBytes};
    }
    next_slab_bytes_ = kFirstSlabBytes;
    slab_cursor_ = nullptr;
    slab_left_ = 0;
  }

  void UnmapSlabs() {
    for (const Slab& slab : slabs_) UnmapPages(slab.start, slab.bytes);
    slabs_.clear();
    slabs_.shrink_to_fit();
  }

  // Index 0 is never used (bytes 0 is served as 1); kLargeClass never has a
  // free block or a span, which sends it to Refill.
  std::array<SizeClass, kLargeClass + 1> classes_;
  mutable Mutex mutex_;
  char* slab_cursor_;
  size_t slab_left_;
  size_t next_slab_bytes_;
  std::vector<Slab> slabs_;
  // Blocks on the malloc path, linked so that releasing the pool frees them.
  LargeBlockList large_;
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_SLAB_POOL_H_
