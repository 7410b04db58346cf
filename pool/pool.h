// Pool: a policy-based pool allocator for all block sizes, after "Improving
// Performance with Custom Pool Allocators for STL" (Dr. Dobb's, 2005).
//
// Three layers: a Chunk (chunk.h) is N blocks of one size with its free list
// embedded in the free blocks; a Bunch (bunch.h) is the chunks of one block
// size; the Pool is a vector of bunches sorted by block size, found by binary
// search. Requests above kMaxSmall bytes, or aligned beyond 16, go to malloc
// (aligned_alloc above alignof(max_align_t)) and are linked in a list so the
// pool can free them when it is released.
//
// Block sizes: a request of `bytes` with alignment `align` (a power of two)
// is served by blocks of bytes rounded up to 8, or to 16 when align is 16.
// Chunks start 16-aligned, so every block is aligned to 8, and blocks whose
// size is a multiple of 16 to 16.
//
// Policies. Each is a tag struct; these are the contracts they meet.
//
//   StoragePolicy (storage_policies.h: StorageSimple, StorageBoundary,
//   StorageOrdered):
//     static constexpr char kName[];      // "simple", in allocator names
//     static constexpr char kCppName[];   // "alloctrace::pool::StorageSimple"
//     class Chunks {                      // the chunks of one bunch; movable,
//                                         // owns its chunks
//       void* TryAllocate();              // a block from an existing chunk,
//                                         // or nullptr if every chunk is full
//       void Add(Chunk::Ptr chunk);       // adopts a fresh chunk; the next
//                                         // TryAllocate succeeds. May throw
//                                         // std::bad_alloc
//       void Deallocate(void* block);     // back to its owning chunk;
//                                         // CHECK-fails if no chunk owns it
//       size_t chunk_count() const;
//       template <typename F> void ForEachChunk(F&& f) const;  // f(const Chunk&)
//     };
//
//   GrowthPolicy (policies.h: GrowthLinear, GrowthExponential):
//     static constexpr char kName[];
//     static uint32_t FirstChunkBlocks(size_t block_size);           // >= 1
//     static uint32_t NextChunkBlocks(uint32_t previous, size_t block_size);
//
//   ThreadingPolicy (policies.h: SingleThreaded, MultiThreaded):
//     static constexpr char kName[];
//     static constexpr bool kThreadSafe;
//     class Mutex;                        // BasicLockable, default-constructible
//
//   DeletePolicy: the bool kDelete. true: Deallocate frees the block for
//   reuse. false: Deallocate is a no-op; memory goes when the pool goes.
//
//   HoldingPolicy (which pool an allocator object uses): see pool_allocator.h.
//
// Thread-safety: as the threading policy says; MultiThreaded takes one mutex
// around every allocation and free, SingleThreaded none.
// Failure: Allocate returns nullptr when the system is out of memory.
// Deallocate CHECK-fails when it finds no chunk owning a small block.
// Memory: chunks stay with the pool until the pool is destroyed or
// ReleaseAll() is called; freed blocks are reused, never returned early.
#ifndef ALLOCTRACE_POOL_POOL_H_
#define ALLOCTRACE_POOL_POOL_H_

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/base/check.h"
#include "alloctrace/pool/bunch.h"
#include "alloctrace/pool/chunk.h"
#include "alloctrace/pool/large_block_list.h"
#include "alloctrace/pool/policies.h"
#include "alloctrace/pool/storage_policies.h"

namespace alloctrace::pool {

struct PoolStats {
  size_t bunches = 0;  // Block sizes in use.
  size_t chunks = 0;
  size_t chunk_bytes = 0;   // Taken from the system by chunks.
  size_t free_blocks = 0;   // In chunks, free for reuse.
  size_t large_blocks = 0;  // Live blocks on the malloc path.
};

template <typename Storage, typename Growth, typename Threading, bool kDelete = true,
          size_t kMaxSmallSize = 64>
class Pool {
 public:
  using StoragePolicy = Storage;
  using GrowthPolicy = Growth;
  using ThreadingPolicy = Threading;
  static constexpr bool kFreesBlocks = kDelete;
  // Largest request served from chunks; larger ones go to malloc.
  static constexpr size_t kMaxSmall = kMaxSmallSize;
  // Largest alignment served from chunks.
  static constexpr size_t kMaxBlockAlign = 16;
  static_assert(kMaxSmall >= 1, "kMaxSmallSize must be positive");

  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // The block size that serves (bytes, align) from chunks.
  static size_t BlockSize(size_t bytes, size_t align) {
    const size_t granule = align <= Chunk::kBlockGranule ? Chunk::kBlockGranule : kMaxBlockAlign;
    if (bytes == 0) bytes = 1;
    return (bytes + granule - 1) & ~(granule - 1);
  }
  static bool IsSmall(size_t bytes, size_t align) {
    return bytes <= kMaxSmall && align <= kMaxBlockAlign;
  }

  // A block of at least `bytes` bytes aligned to `align` (a power of two),
  // or nullptr if the system is out of memory.
  void* Allocate(size_t bytes, size_t align) {
    std::lock_guard<Mutex> lock(mutex_);
    return AllocateLocked(bytes, align);
  }

  // Allocate, with the first `bytes` bytes zero. A large block comes from
  // calloc, which does not write pages fresh from the system.
  void* AllocateZeroed(size_t bytes, size_t align) {
    std::lock_guard<Mutex> lock(mutex_);
    if (ABSL_PREDICT_FALSE(!IsSmall(bytes, align))) {
      return large_.AllocateZeroed(bytes, align);
    }
    void* block = AllocateLocked(bytes, align);
    if (block != nullptr) std::memset(block, 0, bytes);
    return block;
  }

  // Frees a block from Allocate(bytes, align), with the same bytes and align.
  // A no-op when kDelete is false.
  void Deallocate(void* block, size_t bytes, size_t align) {
    if constexpr (!kDelete) return;
    if (block == nullptr) return;
    std::lock_guard<Mutex> lock(mutex_);
    DeallocateLocked(block, bytes, align);
  }

  // Resizes a block from Allocate(old_bytes, align) (or nullptr: allocates)
  // to new_bytes, keeping min(old_bytes, new_bytes) bytes of content.
  // In place when one block size serves both sizes; a large block stays on
  // the system's path and is resized by realloc (in place, or by moving
  // pages, not copying them, where the system can), so a chain of growing
  // reallocs is linear. Otherwise allocate, copy, free. nullptr, with
  // `block` untouched, when the system is out of memory.
  void* Reallocate(void* block, size_t old_bytes, size_t new_bytes, size_t align) {
    std::lock_guard<Mutex> lock(mutex_);
    if (block == nullptr) return AllocateLocked(new_bytes, align);
    const bool old_small = IsSmall(old_bytes, align);
    const bool new_small = IsSmall(new_bytes, align);
    if (old_small && new_small && BlockSize(old_bytes, align) == BlockSize(new_bytes, align)) {
      return block;
    }
    if (!old_small && !new_small && LargeBlockList::CanReallocate(align)) {
      return large_.Reallocate(block, new_bytes);
    }
    void* fresh = AllocateLocked(new_bytes, align);
    if (fresh == nullptr) return nullptr;
    std::memcpy(fresh, block, std::min(old_bytes, new_bytes));
    if constexpr (kDelete) {
      DeallocateLocked(block, old_bytes, align);
    } else if (!old_small) {
      // Large blocks are the system's: the pool keeps no free list of them
      // to leak into, so even a no-free pool gives a replaced one back.
      large_.Deallocate(block);
    }
    return fresh;
  }

  // Frees every chunk and every large block, live or not.
  void ReleaseAll() {
    std::lock_guard<Mutex> lock(mutex_);
    bunches_.clear();
    bunches_.shrink_to_fit();
    large_.ReleaseAll();
  }

  PoolStats Stats() const {
    std::lock_guard<Mutex> lock(mutex_);
    PoolStats stats;
    stats.bunches = bunches_.size();
    for (const BunchT& bunch : bunches_) {
      stats.chunks += bunch.chunk_count();
      stats.chunk_bytes += bunch.footprint();
      stats.free_blocks += bunch.free_blocks();
    }
    stats.large_blocks = large_.count();
    return stats;
  }

 private:
  using BunchT = Bunch<Storage, Growth>;
  using Mutex = typename Threading::Mutex;

  void* AllocateLocked(size_t bytes, size_t align) {
    if (ABSL_PREDICT_FALSE(!IsSmall(bytes, align))) {
      return large_.Allocate(bytes, align);
    }
    BunchT* bunch = FindOrAddBunch(BlockSize(bytes, align));
    if (ABSL_PREDICT_FALSE(bunch == nullptr)) return nullptr;
    return bunch->Allocate();
  }

  void DeallocateLocked(void* block, size_t bytes, size_t align) {
    if (ABSL_PREDICT_FALSE(!IsSmall(bytes, align))) {
      large_.Deallocate(block);
      return;
    }
    BunchT* bunch = FindBunch(BlockSize(bytes, align));
    ALLOCTRACE_CHECK(bunch != nullptr, "block freed with a size this pool never served");
    bunch->Deallocate(block);
  }

  // Binary search: the first bunch with a block size >= block_size.
  typename std::vector<BunchT>::iterator LowerBound(size_t block_size) {
    return std::lower_bound(
        bunches_.begin(), bunches_.end(), block_size,
        [](const BunchT& bunch, size_t size) { return bunch.block_size() < size; });
  }

  BunchT* FindBunch(size_t block_size) {
    auto it = LowerBound(block_size);
    if (it == bunches_.end() || it->block_size() != block_size) return nullptr;
    return &*it;
  }

  BunchT* FindOrAddBunch(size_t block_size) {
    auto it = LowerBound(block_size);
    if (ABSL_PREDICT_TRUE(it != bunches_.end() && it->block_size() == block_size)) {
      return &*it;
    }
    return AddBunch(it, block_size);
  }

  // First request of this block size: a new bunch, in order.
  ABSL_ATTRIBUTE_NOINLINE BunchT* AddBunch(typename std::vector<BunchT>::iterator position,
                                           size_t block_size) {
    try {
      return &*bunches_.emplace(position, block_size);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }

  mutable Mutex mutex_;
  std::vector<BunchT> bunches_;  // Sorted by block size.
  LargeBlockList large_;
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_POOL_H_
