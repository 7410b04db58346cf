// Realloc, calloc and large blocks, over every pool: no pathological cost.
// A realloc that fits its block stays in place, a chain of growing large
// reallocs is linear (realloc moves pages, the pool does not copy), and a
// large calloc leaves fresh pages from the system unwritten.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "alloctrace/pool/pool.h"
#include "alloctrace/pool/slab_pool.h"
#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

// Resident bytes of this process (Linux).
int64_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

template <typename PoolT>
class LargeBlocksTest : public ::testing::Test {
 protected:
  PoolT pool_;
};

using PoolTypes = ::testing::Types<Pool<StorageSimple, GrowthExponential, SingleThreaded>,
                                   Pool<StorageBoundary, GrowthLinear, MultiThreaded>,
                                   Pool<StorageOrdered, GrowthLinear, SingleThreaded, false>,
                                   SlabPool<SingleThreaded>>;
TYPED_TEST_SUITE(LargeBlocksTest, PoolTypes);

TYPED_TEST(LargeBlocksTest, ReallocWithinOneBlockStaysInPlace) {
  void* p = this->pool_.Allocate(17, 8);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5a, 17);
  void* q = this->pool_.Reallocate(p, 17, 20, 8);  // 24-byte block either way
  EXPECT_EQ(q, p);
  EXPECT_EQ(static_cast<unsigned char*>(q)[16], 0x5a);
  this->pool_.Deallocate(q, 20, 8);
}

// 4 KiB steps from 4 KiB: copying at every step would move ~n^2/2 pages
// (20,000 steps: 800 GB). Finishing at all shows it is not quadratic; the
// content check shows nothing was lost on the way. AddressSanitizer's own
// realloc always copies, so it gets a shorter chain.
TYPED_TEST(LargeBlocksTest, ReallocChainOfGrowingLargeBlocksIsLinear) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr size_t kSteps = 500;
#else
  constexpr size_t kSteps = 20000;
#endif
  constexpr size_t kStep = 4096;
  size_t bytes = kStep;
  auto* p = static_cast<unsigned char*>(this->pool_.Allocate(bytes, 16));
  ASSERT_NE(p, nullptr);
  p[0] = 1;
  for (size_t i = 1; i < kSteps; ++i) {
    p = static_cast<unsigned char*>(this->pool_.Reallocate(p, bytes, bytes + kStep, 16));
    ASSERT_NE(p, nullptr) << "step " << i;
    p[bytes] = static_cast<unsigned char>(i + 1);  // first byte of the new part
    bytes += kStep;
  }
  for (size_t i = 0; i < kSteps; ++i) {
    ASSERT_EQ(p[i * kStep], static_cast<unsigned char>(i + 1)) << "step " << i;
  }
  // And back down, then below the pool's classes: still the same content.
  p = static_cast<unsigned char*>(this->pool_.Reallocate(p, bytes, 2 * kStep, 16));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[kStep], 2);
  p = static_cast<unsigned char*>(this->pool_.Reallocate(p, 2 * kStep, 8, 16));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[0], 1);
  this->pool_.Deallocate(p, 8, 16);
}

TYPED_TEST(LargeBlocksTest, LargeCallocWritesNoFreshPage) {
  constexpr size_t kBytes = size_t{1} << 30;
  const int64_t before = ResidentBytes();
  auto* p = static_cast<unsigned char*>(this->pool_.AllocateZeroed(kBytes, 16));
  ASSERT_NE(p, nullptr);
  const int64_t after = ResidentBytes();
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[kBytes - 1], 0);
  // A memset would make the whole GiB resident.
  EXPECT_LT(after - before, int64_t{64} << 20)
      << "resident before " << before << ", after " << after;
  this->pool_.Deallocate(p, kBytes, 16);
}

TYPED_TEST(LargeBlocksTest, SmallCallocIsZeroedEvenOnAReusedBlock) {
  auto* p = static_cast<unsigned char*>(this->pool_.Allocate(40, 8));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xff, 40);
  this->pool_.Deallocate(p, 40, 8);
  auto* q = static_cast<unsigned char*>(this->pool_.AllocateZeroed(40, 8));
  ASSERT_NE(q, nullptr);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(q[i], 0) << i;
  this->pool_.Deallocate(q, 40, 8);
}

}  // namespace
}  // namespace alloctrace::pool
