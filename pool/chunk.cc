#include "alloctrace/pool/chunk.h"

#include <cstdlib>
#include <limits>
#include <new>

#include "alloctrace/base/check.h"

namespace alloctrace::pool {
namespace {

constexpr size_t RoundUp(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace

Chunk::Chunk(size_t block_size, uint32_t blocks)
    : untouched_(data()),
      end_(data() + block_size * blocks),
      block_size_(static_cast<uint32_t>(block_size)),
      block_count_(blocks),
      free_count_(blocks) {}

Chunk::Ptr Chunk::Create(size_t block_size, uint32_t blocks) {
  ALLOCTRACE_CHECK(block_size > 0 && block_size % kBlockGranule == 0 &&
                       block_size <= std::numeric_limits<uint32_t>::max(),
                   "block size must be a positive multiple of 8");
  ALLOCTRACE_CHECK(blocks > 0, "a chunk needs at least one block");
  const size_t bytes = RoundUp(HeaderSize() + block_size * blocks, kDataAlign);
  void* memory = std::aligned_alloc(kDataAlign, bytes);
  if (memory == nullptr) return nullptr;
  return Ptr(new (memory) Chunk(block_size, blocks));
}

void Chunk::Destroy(Chunk* chunk) {
  if (chunk == nullptr) return;
  chunk->~Chunk();
  std::free(chunk);
}

}  // namespace alloctrace::pool
