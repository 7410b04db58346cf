#include "alloctrace/tracer/handle_store.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using handle_store_internal::kMaxCached;
using handle_store_internal::SharedCount;

std::vector<void*> TakeMany(size_t n) {
  std::vector<void*> blocks;
  for (size_t i = 0; i < n; ++i) blocks.push_back(HandleStore::Take());
  return blocks;
}

void GiveAll(const std::vector<void*>& blocks) {
  for (void* p : blocks) HandleStore::Give(p);
}

TEST(HandleStoreTest, BlocksAreDistinctAlignedAndWhollyUsable) {
  const std::vector<void*> blocks = TakeMany(5000);  // several mappings
  std::set<uintptr_t> seen;
  for (void* p : blocks) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    EXPECT_EQ(a % HandleStore::kBlockBytes, 0u) << p;
    std::memset(p, 0xab, HandleStore::kBlockBytes);
    seen.insert(a);
  }
  EXPECT_EQ(seen.size(), blocks.size());
  // No two blocks overlap.
  for (auto it = seen.begin(); std::next(it) != seen.end(); ++it) {
    ASSERT_GE(*std::next(it) - *it, HandleStore::kBlockBytes);
  }
  GiveAll(blocks);
}

TEST(HandleStoreTest, AGivenBlockIsTakenFirst) {
  void* p = HandleStore::Take();
  HandleStore::Give(p);
  EXPECT_EQ(HandleStore::Take(), p);
  HandleStore::Give(p);
}

TEST(HandleStoreTest, AnExitingThreadsBlocksAreTakenByTheNextThread) {
  std::vector<void*> given;
  std::thread([&] {
    given = TakeMany(3000);
    GiveAll(given);
  }).join();
  // Its blocks, the rest of its last mapping, and what it took from the
  // shared list first.
  const uint32_t shared = SharedCount();
  ASSERT_GE(shared, 3000u);
  std::vector<void*> taken;
  std::thread([&] { taken = TakeMany(shared); }).join();
  const std::set<void*> got(taken.begin(), taken.end());
  for (void* p : given) ASSERT_TRUE(got.count(p)) << p << " was lost at its thread's exit";
  // The second thread gave nothing back: its cache was empty at its exit but
  // for the rest of a mapping it made if it made one (it should not have).
  EXPECT_EQ(SharedCount(), 0u);
  GiveAll(taken);  // into this thread's cache, past kMaxCached: partly shared again
}

TEST(HandleStoreTest, ABlockGivenOnAnotherThreadStaysInTheStore) {
  void* p = HandleStore::Take();
  const uint32_t before = SharedCount();
  std::thread([&] { HandleStore::Give(p); }).join();
  EXPECT_EQ(SharedCount(), before + 1);
}

TEST(HandleStoreTest, AThreadKeepsAtMostkMaxCachedBlocks) {
  std::thread([] {
    const std::vector<void*> blocks = TakeMany(2 * kMaxCached);
    GiveAll(blocks);
    EXPECT_LE(handle_store_internal::tls_cache.free.count, kMaxCached);
    EXPECT_GT(SharedCount(), 0u);
  }).join();
}

}  // namespace
}  // namespace alloctrace
