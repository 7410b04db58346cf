#include "alloctrace/pool/chunk.h"

#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(ChunkTest, HandsOutEveryBlockOnceInAddressOrder) {
  Chunk::Ptr chunk = Chunk::Create(24, 10);
  ASSERT_NE(chunk, nullptr);
  EXPECT_TRUE(chunk->empty());
  EXPECT_EQ(chunk->block_count(), 10u);
  std::vector<void*> blocks;
  while (!chunk->full()) blocks.push_back(chunk->Allocate());
  ASSERT_EQ(blocks.size(), 10u);
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_TRUE(chunk->Contains(blocks[i]));
    EXPECT_EQ(Address(blocks[i]), Address(chunk->data()) + 24 * i);
    EXPECT_EQ(Address(blocks[i]) % 8, 0u);
  }
  EXPECT_FALSE(chunk->Contains(chunk->data() + 24 * 10));
  EXPECT_FALSE(chunk->Contains(chunk->data() - 1));
}

TEST(ChunkTest, ReusesFreedBlocksLastInFirstOut) {
  Chunk::Ptr chunk = Chunk::Create(16, 4);
  ASSERT_NE(chunk, nullptr);
  void* a = chunk->Allocate();
  void* b = chunk->Allocate();
  chunk->Deallocate(a);
  chunk->Deallocate(b);
  EXPECT_EQ(chunk->free_count(), 4u);
  EXPECT_EQ(chunk->Allocate(), b);
  EXPECT_EQ(chunk->Allocate(), a);
  // Then the untouched tail.
  EXPECT_EQ(Address(chunk->Allocate()), Address(chunk->data()) + 32);
}

TEST(ChunkTest, BlocksOfMultiplesOf16AreAligned16) {
  for (size_t size : {16u, 48u, 64u, 112u}) {
    Chunk::Ptr chunk = Chunk::Create(size, 7);
    ASSERT_NE(chunk, nullptr);
    while (!chunk->full()) EXPECT_EQ(Address(chunk->Allocate()) % 16, 0u);
  }
}

TEST(ChunkTest, FootprintCoversHeaderAndBlocks) {
  Chunk::Ptr chunk = Chunk::Create(8, 255);
  ASSERT_NE(chunk, nullptr);
  EXPECT_GE(chunk->footprint(), 8u * 255);
  EXPECT_LE(chunk->footprint(), 8u * 255 + 64);
}

TEST(ChunkDeathTest, RejectsBlockSizesThatCannotHoldALink) {
  EXPECT_DEATH(Chunk::Create(12, 4), "multiple of 8");
  EXPECT_DEATH(Chunk::Create(8, 0), "at least one block");
}

}  // namespace
}  // namespace alloctrace::pool
