// Chunk: N equal-size blocks in one allocation, the bottom layer of the pool
// after "Improving Performance with Custom Pool Allocators for STL" (Dr.
// Dobb's, 2005): chunk -> bunch (bunch.h) -> pool (pool.h).
//
// The chunk header and its blocks share one allocation. Free blocks form a
// singly linked list threaded through the blocks themselves (a free block's
// first word points to the next free block), so bookkeeping costs nothing but
// the header. Blocks never handed out are not on that list: they are carved
// off the untouched tail on demand, so a new chunk touches no page beyond its
// header and its resident size grows with use.
//
// Alignment: the first block is 16-byte aligned and blocks are laid out every
// block_size bytes, so a block is aligned to the largest power of two (up to
// 16) that divides block_size.
//
// Thread-safety: none; the owning bunch or pool serializes access.
// Failure: Create returns nullptr when the system is out of memory.
#ifndef ALLOCTRACE_POOL_CHUNK_H_
#define ALLOCTRACE_POOL_CHUNK_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace alloctrace::pool {

class Chunk {
 public:
  // Every block holds a free-list pointer while free.
  static constexpr size_t kBlockGranule = sizeof(void*);
  // Alignment of the first block.
  static constexpr size_t kDataAlign = 16;

  struct Deleter {
    void operator()(Chunk* chunk) const { Chunk::Destroy(chunk); }
  };
  using Ptr = std::unique_ptr<Chunk, Deleter>;

  // A chunk of `blocks` blocks of `block_size` bytes. block_size must be a
  // positive multiple of kBlockGranule; blocks >= 1. nullptr if out of memory.
  static Ptr Create(size_t block_size, uint32_t blocks);
  static void Destroy(Chunk* chunk);

  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  // A free block. Precondition: !full().
  void* Allocate() {
    void* block = free_list_;
    if (block != nullptr) {
      free_list_ = *static_cast<void**>(block);
    } else {
      block = untouched_;
      untouched_ += block_size_;
    }
    --free_count_;
    return block;
  }

  // Returns a block to the chunk. Precondition: Contains(block) and the block
  // is live (allocated and not yet freed).
  void Deallocate(void* block) {
    *static_cast<void**>(block) = free_list_;
    free_list_ = block;
    ++free_count_;
  }

  // Whether `p` points into this chunk's blocks.
  bool Contains(const void* p) const {
    const auto address = reinterpret_cast<uintptr_t>(p);
    return address >= reinterpret_cast<uintptr_t>(data()) &&
           address < reinterpret_cast<uintptr_t>(end_);
  }

  bool full() const { return free_count_ == 0; }
  bool empty() const { return free_count_ == block_count_; }
  uint32_t block_count() const { return block_count_; }
  uint32_t free_count() const { return free_count_; }
  size_t block_size() const { return block_size_; }
  // Bytes this chunk took from the system, header included.
  size_t footprint() const { return HeaderSize() + size_t{block_size_} * block_count_; }

  // First block; chunks are ordered by it.
  char* data() const { return reinterpret_cast<char*>(const_cast<Chunk*>(this)) + HeaderSize(); }

 private:
  Chunk(size_t block_size, uint32_t blocks);
  ~Chunk() = default;

  // The header, rounded up so the first block is kDataAlign-aligned.
  static constexpr size_t HeaderSize() {
    return (sizeof(Chunk) + kDataAlign - 1) / kDataAlign * kDataAlign;
  }

  void* free_list_ = nullptr;  // Freed blocks, linked through their first word.
  char* untouched_;            // Blocks in [untouched_, end_) never handed out.
  char* end_;                  // One past the last block.
  uint32_t block_size_;
  uint32_t block_count_;
  uint32_t free_count_;
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_CHUNK_H_
