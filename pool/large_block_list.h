// LargeBlockList: the blocks a pool passes to malloc (too big, or aligned
// beyond 16), linked so the pool can free whatever is still live when it is
// released (Stack holding: the arena goes, its blocks go).
//
// Each block is preceded by a 32-byte link header; the allocation starts
// max(32, align) bytes before the block so the block keeps its alignment.
// Alignments above alignof(std::max_align_t) use aligned_alloc.
//
// Zeroed blocks come from calloc, which leaves pages fresh from the system
// (already zero) unwritten: a 1 GiB calloc costs what malloc's does.
// Reallocate uses realloc, which grows a block in place or moves its pages
// (mremap) instead of copying them where the system can: a chain of growing
// reallocs stays linear instead of copying the whole block at every step.
//
// Thread-safety: none; the pool serializes access.
// Failure: Allocate returns nullptr when malloc does.
#ifndef ALLOCTRACE_POOL_LARGE_BLOCK_LIST_H_
#define ALLOCTRACE_POOL_LARGE_BLOCK_LIST_H_

#include <cstddef>

namespace alloctrace::pool {

class LargeBlockList {
 public:
  LargeBlockList() = default;
  LargeBlockList(const LargeBlockList&) = delete;
  LargeBlockList& operator=(const LargeBlockList&) = delete;
  ~LargeBlockList() { ReleaseAll(); }

  // `align` is a power of two.
  void* Allocate(size_t bytes, size_t align);
  // Allocate, with the block's bytes zero.
  void* AllocateZeroed(size_t bytes, size_t align);
  // Whether Reallocate can resize blocks of this alignment (those that came
  // from malloc rather than aligned_alloc).
  static bool CanReallocate(size_t align);
  // Resizes `block` (live, from this list, CanReallocate(its align)) to
  // `bytes`, keeping min(old, new) bytes. nullptr, with `block` untouched,
  // when the system is out of memory.
  void* Reallocate(void* block, size_t bytes);
  // Precondition: `block` came from this list's Allocate and is live.
  void Deallocate(void* block);
  // Frees every live block.
  void ReleaseAll();

  size_t count() const { return count_; }

 private:
  struct Link {
    Link* prev;
    Link* next;
    size_t offset;  // From the start of the system allocation to the block.
    size_t unused;  // Keeps sizeof(Link) a multiple of 16.
  };
  static_assert(sizeof(Link) == 32, "Offset() assumes a 32-byte link");

  // Links a fresh allocation whose block starts `offset` bytes in.
  void* Push(char* memory, size_t offset);

  Link* head_ = nullptr;
  size_t count_ = 0;
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_LARGE_BLOCK_LIST_H_
