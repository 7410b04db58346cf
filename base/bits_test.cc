#include "base/bits.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

static_assert(Log2(alignof(double)) == 3, "usable in constant expressions");

TEST(BitsTest, Log2IsTheFloor) {
  EXPECT_EQ(Log2(0), 0);
  EXPECT_EQ(Log2(1), 0);
  EXPECT_EQ(Log2(2), 1);
  EXPECT_EQ(Log2(3), 1);
  EXPECT_EQ(Log2(16), 4);
  EXPECT_EQ(Log2(4095), 11);
  EXPECT_EQ(Log2(4096), 12);
  EXPECT_EQ(Log2(~uint64_t{0}), 63);
  for (int k = 0; k < 64; ++k) EXPECT_EQ(Log2(uint64_t{1} << k), k);
}

TEST(BitsTest, Log2CeilRoundsUpToAPowerOfTwo) {
  EXPECT_EQ(Log2Ceil(0), 0);
  EXPECT_EQ(Log2Ceil(1), 0);
  EXPECT_EQ(Log2Ceil(2), 1);
  EXPECT_EQ(Log2Ceil(3), 2);
  EXPECT_EQ(Log2Ceil(24), 5);
  EXPECT_EQ(Log2Ceil(4096), 12);
  EXPECT_EQ(Log2Ceil(4097), 13);
  EXPECT_EQ(Log2Ceil(uint64_t{1} << 63), 63);
  for (int k = 1; k < 63; ++k) EXPECT_EQ(Log2Ceil((uint64_t{1} << k) + 1), k + 1);
}

}  // namespace
}  // namespace alloctrace
