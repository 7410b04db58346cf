#include "alloctrace/base/bits.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

static_assert(Log2(alignof(double)) == 3, "usable in constant expressions");

TEST(BitsTest, Log2IsTheFloorAndLog2CeilTheCeiling) {
  struct Case {
    uint64_t v;
    uint8_t floor, ceil;
  };
  const Case kCases[] = {
      {0, 0, 0},
      {1, 0, 0},
      {2, 1, 1},
      {3, 1, 2},
      {16, 4, 4},
      {24, 4, 5},
      {4095, 11, 12},
      {4096, 12, 12},
      {4097, 12, 13},
      {uint64_t{1} << 63, 63, 63},
      {~uint64_t{0}, 63, 64},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(Log2(c.v), c.floor) << c.v;
    EXPECT_EQ(Log2Ceil(c.v), c.ceil) << c.v;
  }
  for (int k = 0; k < 64; ++k) {
    const uint64_t p = uint64_t{1} << k;
    EXPECT_EQ(Log2(p), k);
    EXPECT_EQ(Log2Ceil(p), k);
    if (k >= 1) {
      EXPECT_EQ(Log2Ceil(p + 1), k + 1) << k;
    }
  }
}

}  // namespace
}  // namespace alloctrace
