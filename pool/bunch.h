// Bunch: the chunks that serve one block size, the middle layer of the pool
// (chunk.h -> bunch.h -> pool.h). The storage policy decides how chunks are
// kept and searched; the growth policy how big the next chunk is.
//
// Thread-safety: none; the pool serializes access.
// Failure: Allocate returns nullptr when the system is out of memory;
// Deallocate CHECK-fails on a block the bunch does not own.
#ifndef ALLOCTRACE_POOL_BUNCH_H_
#define ALLOCTRACE_POOL_BUNCH_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/base/check.h"
#include "alloctrace/pool/chunk.h"

namespace alloctrace::pool {

template <typename Storage, typename Growth>
class Bunch {
 public:
  // block_size: a positive multiple of Chunk::kBlockGranule.
  explicit Bunch(size_t block_size)
      : block_size_(block_size), next_chunk_blocks_(Growth::FirstChunkBlocks(block_size)) {}
  Bunch(Bunch&&) noexcept = default;
  Bunch& operator=(Bunch&&) noexcept = default;

  size_t block_size() const { return block_size_; }

  void* Allocate() {
    void* block = chunks_.TryAllocate();
    if (ABSL_PREDICT_TRUE(block != nullptr)) return block;
    return Grow();
  }

  // Precondition: `block` came from this bunch's Allocate and is live.
  void Deallocate(void* block) { chunks_.Deallocate(block); }

  size_t chunk_count() const { return chunks_.chunk_count(); }
  // Bytes the chunks took from the system.
  size_t footprint() const {
    size_t bytes = 0;
    chunks_.ForEachChunk([&bytes](const Chunk& c) { bytes += c.footprint(); });
    return bytes;
  }
  size_t free_blocks() const {
    size_t blocks = 0;
    chunks_.ForEachChunk([&blocks](const Chunk& c) { blocks += c.free_count(); });
    return blocks;
  }

 private:
  // Every chunk is full: add one.
  ABSL_ATTRIBUTE_NOINLINE void* Grow() {
    Chunk::Ptr chunk = Chunk::Create(block_size_, next_chunk_blocks_);
    if (chunk == nullptr) return nullptr;
    try {
      chunks_.Add(std::move(chunk));
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
    next_chunk_blocks_ = Growth::NextChunkBlocks(next_chunk_blocks_, block_size_);
    void* block = chunks_.TryAllocate();
    ALLOCTRACE_CHECK(block != nullptr, "a fresh chunk had no free block");
    return block;
  }

  size_t block_size_;
  uint32_t next_chunk_blocks_;
  typename Storage::Chunks chunks_;
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_BUNCH_H_
