#include "alloctrace/format/address_map.h"

#include <map>
#include <random>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// Against std::map as the reference, over aligned and unaligned addresses
// spread across several 4 GiB directories.
TEST(AddressMapTest, AgreesWithAReferenceMap) {
  AddressMap map;
  std::map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(7);
  const uint64_t bases[] = {0x10000, 0x7f0000000000, 0x5555'0000'0000, 0xffff'ffff'0000};
  for (int i = 0; i < 200000; ++i) {
    uint64_t addr = bases[rng() % 4] + (rng() % 100000) * 16;
    if (rng() % 50 == 0) addr += 8;  // unaligned
    const auto it = ref.find(addr);
    if (it == ref.end()) {
      ASSERT_EQ(map.Find(addr), AddressMap::kNone);
      const uint32_t id = static_cast<uint32_t>(rng() % 1000000);
      map.Insert(addr, id);
      ref[addr] = id;
      ASSERT_EQ(map.Find(addr), id);
    } else {
      ASSERT_EQ(map.Find(addr), it->second);
      ASSERT_EQ(map.Erase(addr), it->second);
      ASSERT_EQ(map.Find(addr), AddressMap::kNone);
      ASSERT_EQ(map.Erase(addr), AddressMap::kNone);
      ref.erase(it);
    }
    ASSERT_EQ(map.size(), ref.size());
  }
}

TEST(AddressMapTest, IdZeroAndAddressZeroWork) {
  AddressMap map;
  map.Insert(0, 0);
  EXPECT_EQ(map.Find(0), 0u);
  EXPECT_EQ(map.Erase(0), 0u);
  EXPECT_EQ(map.Find(0), AddressMap::kNone);
  EXPECT_EQ(map.Find(0x123450), AddressMap::kNone);  // never-seen directory
}

}  // namespace
}  // namespace alloctrace
