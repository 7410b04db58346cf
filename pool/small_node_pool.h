// SmallNodePool: a pool for very small nodes in the manner of the small-object
// allocator of "Modern C++ Design" (Loki), the scheme foonathan/memory's
// profiler compares as its "small node pool" beside the node and array pools.
//
// Design:
//  - One FixedAllocator per block size (1 to kMaxSmall bytes), found by
//    indexing an array with the block size: no search.
//  - A FixedAllocator owns chunks of at most 255 blocks. A chunk's free list
//    is kept in its free blocks as one-byte indices: a free block's first
//    byte is the index of the next free block of the same chunk. So a block
//    can be 1 byte (a pointer-threaded free list needs 8), at the price of
//    per-chunk bookkeeping (first free index, free count) beside the chunk.
//  - Allocate takes from the chunk that served last, else searches the
//    chunks for one with room (O(c)), else adds a chunk.
//  - Deallocate finds the owning chunk by searching outwards from the chunk
//    of the previous free (frees cluster): O(c) worst case. Chunks that
//    become wholly free stay for reuse, as in foonathan/memory's pools and
//    the rest of this library (Loki gives all but one back to the system;
//    here that happens when the pool goes, e.g. with its arena).
//  - Block size: bytes rounded up to the alignment (align <= 16). Chunks
//    come from ::operator new (16-aligned), so every block is aligned as
//    asked. Larger or more aligned requests go to a LargeBlockList
//    (malloc), freed with the pool.
//  - A chunk of a class holds min(255, max(1, kChunkBytes / block_size))
//    blocks; its blocks' index bytes are written when the chunk is made.
//
// In a container, one pool per container (pool_allocator.h):
//   std::set<int, std::less<int>, alloctrace::pool::BasicPoolAllocator<
//       int, alloctrace::pool::SmallNodePool<>, alloctrace::pool::HoldingStack>> s;
//
// Thread-safety: as the threading policy says. SingleThreaded: none.
// MultiThreaded: one mutex around every call.
// Failure: Allocate returns nullptr when the system is out of memory.
// Deallocate CHECK-fails on a small block no chunk of its class owns.
// Memory: chunks are freed when the pool is destroyed or ReleaseAll() is
// called; freed blocks are reused, never returned early.
#ifndef ALLOCTRACE_POOL_SMALL_NODE_POOL_H_
#define ALLOCTRACE_POOL_SMALL_NODE_POOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/base/check.h"
#include "alloctrace/pool/large_block_list.h"
#include "alloctrace/pool/policies.h"

namespace alloctrace::pool {

// The blocks of one size: chunks with one-byte free-list indices.
class SmallNodeFixedAllocator {
 public:
  static constexpr size_t kMaxBlocksPerChunk = 255;  // an index fits a byte
  static constexpr size_t kChunkBytes = 4096;

  SmallNodeFixedAllocator() = default;
  SmallNodeFixedAllocator(const SmallNodeFixedAllocator&) = delete;
  SmallNodeFixedAllocator& operator=(const SmallNodeFixedAllocator&) = delete;
  ~SmallNodeFixedAllocator() { Release(); }

  // Sets the block size; only while no chunk exists.
  void Init(size_t block_size) {
    block_size_ = block_size;
    const size_t fit = kChunkBytes / block_size;
    blocks_per_chunk_ =
        static_cast<uint8_t>(fit < 1 ? 1 : (fit > kMaxBlocksPerChunk ? kMaxBlocksPerChunk : fit));
  }
  size_t block_size() const { return block_size_; }
  size_t blocks_per_chunk() const { return blocks_per_chunk_; }

  void* Allocate() {
    if (ABSL_PREDICT_FALSE(alloc_ >= chunks_.size() || chunks_[alloc_].free_count == 0)) {
      if (!FindOrAddChunk()) return nullptr;
    }
    Chunk& chunk = chunks_[alloc_];
    unsigned char* block = chunk.data + size_t{chunk.first_free} * block_size_;
    chunk.first_free = *block;
    --chunk.free_count;
    return block;
  }

  // Precondition: `block` came from this allocator's Allocate and is live.
  void Deallocate(void* block) {
    const size_t i = FindOwner(static_cast<unsigned char*>(block));
    dealloc_ = i;
    Chunk& chunk = chunks_[i];
    auto* p = static_cast<unsigned char*>(block);
    const size_t index = static_cast<size_t>(p - chunk.data) / block_size_;
    ALLOCTRACE_CHECK(chunk.data + index * block_size_ == p,
                     "small-node pool: freed pointer is not at a block start");
    *p = chunk.first_free;
    chunk.first_free = static_cast<uint8_t>(index);
    ++chunk.free_count;
  }

  // Frees every chunk, live blocks included.
  void Release() {
    for (Chunk& chunk : chunks_) ::operator delete(chunk.data);
    chunks_.clear();
    chunks_.shrink_to_fit();
    alloc_ = dealloc_ = 0;
  }

  size_t chunk_count() const { return chunks_.size(); }
  size_t free_blocks() const {
    size_t n = 0;
    for (const Chunk& chunk : chunks_) n += chunk.free_count;
    return n;
  }

 private:
  struct Chunk {
    unsigned char* data;
    uint8_t first_free;  // index of the first free block
    uint8_t free_count;
  };

  bool Contains(const Chunk& chunk, const unsigned char* p) const {
    return p >= chunk.data && p < chunk.data + size_t{blocks_per_chunk_} * block_size_;
  }

  // Points alloc_ at a chunk with a free block, adding one if none has.
  ABSL_ATTRIBUTE_NOINLINE bool FindOrAddChunk() {
    for (size_t i = 0; i < chunks_.size(); ++i) {
      if (chunks_[i].free_count > 0) {
        alloc_ = i;
        return true;
      }
    }
    const size_t bytes = size_t{blocks_per_chunk_} * block_size_;
    auto* data = static_cast<unsigned char*>(::operator new(bytes, std::nothrow));
    if (data == nullptr) return false;
    // Block i links to i + 1; the last link is never followed (free_count
    // reaches 0 first).
    for (size_t i = 0; i < blocks_per_chunk_; ++i) {
      data[i * block_size_] = static_cast<unsigned char>(i + 1);
    }
    try {
      chunks_.push_back(Chunk{data, 0, blocks_per_chunk_});
    } catch (const std::bad_alloc&) {
      ::operator delete(data);
      return false;
    }
    alloc_ = chunks_.size() - 1;
    return true;
  }

  // The chunk owning `p`, searched outwards from the previous free's chunk.
  size_t FindOwner(const unsigned char* p) const {
    const size_t n = chunks_.size();
    ALLOCTRACE_CHECK(n > 0, "small-node pool: block freed into a class with no chunk");
    const size_t start = dealloc_ < n ? dealloc_ : n - 1;
    if (Contains(chunks_[start], p)) return start;
    size_t down = start;
    size_t up = start + 1;
    while (down > 0 || up < n) {
      if (down > 0 && Contains(chunks_[--down], p)) return down;
      if (up < n && Contains(chunks_[up], p)) return up;
      ++up;
    }
    ALLOCTRACE_CHECK(false, "small-node pool: freed block belongs to no chunk of its size");
    return 0;
  }

  std::vector<Chunk> chunks_;
  size_t block_size_ = 1;
  uint8_t blocks_per_chunk_ = 1;
  size_t alloc_ = 0;    // chunk that served the last allocation
  size_t dealloc_ = 0;  // chunk that took the last free
};

template <typename Threading = SingleThreaded>
class SmallNodePool {
 public:
  using ThreadingPolicy = Threading;
  static constexpr char kName[] = "small_node";
  static constexpr bool kFreesBlocks = true;
  // Largest request served from chunks; larger ones go to malloc.
  static constexpr size_t kMaxSmall = 256;
  // Largest alignment served from chunks.
  static constexpr size_t kMaxBlockAlign = 16;

  SmallNodePool() {
    for (size_t size = 1; size <= kMaxSmall; ++size) classes_[size].Init(size);
  }
  SmallNodePool(const SmallNodePool&) = delete;
  SmallNodePool& operator=(const SmallNodePool&) = delete;

  // The block size serving (bytes, align), or 0 for the malloc path.
  // `align` is a power of two.
  static size_t BlockSize(size_t bytes, size_t align) {
    if (bytes == 0) bytes = 1;
    if (bytes > kMaxSmall || align > kMaxBlockAlign) return 0;
    const size_t rounded = (bytes + align - 1) & ~(align - 1);
    return rounded <= kMaxSmall ? rounded : 0;
  }

  // A block of at least `bytes` bytes aligned to `align` (a power of two),
  // or nullptr if the system is out of memory.
  void* Allocate(size_t bytes, size_t align) {
    std::lock_guard<Mutex> lock(mutex_);
    const size_t size = BlockSize(bytes, align);
    if (ABSL_PREDICT_FALSE(size == 0)) return large_.Allocate(bytes, align);
    return classes_[size].Allocate();
  }

  // Frees a block from Allocate(bytes, align), with the same bytes and align.
  void Deallocate(void* block, size_t bytes, size_t align) {
    if (block == nullptr) return;
    std::lock_guard<Mutex> lock(mutex_);
    const size_t size = BlockSize(bytes, align);
    if (ABSL_PREDICT_FALSE(size == 0)) {
      large_.Deallocate(block);
      return;
    }
    classes_[size].Deallocate(block);
  }

  // Frees every chunk and every large block, live or not.
  void ReleaseAll() {
    std::lock_guard<Mutex> lock(mutex_);
    for (SmallNodeFixedAllocator& c : classes_) c.Release();
    large_.ReleaseAll();
  }

  // For tests and reports.
  size_t chunk_count() const {
    std::lock_guard<Mutex> lock(mutex_);
    size_t n = 0;
    for (const SmallNodeFixedAllocator& c : classes_) n += c.chunk_count();
    return n;
  }
  const SmallNodeFixedAllocator& ClassFor(size_t bytes, size_t align) const {
    return classes_[BlockSize(bytes, align)];
  }

 private:
  using Mutex = typename Threading::Mutex;

  mutable Mutex mutex_;
  // Index = block size; index 0 is unused.
  std::array<SmallNodeFixedAllocator, kMaxSmall + 1> classes_;
  LargeBlockList large_;
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_SMALL_NODE_POOL_H_
