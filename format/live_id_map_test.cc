#include "alloctrace/format/live_id_map.h"

#include <cstdint>
#include <random>
#include <unordered_map>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(LiveIdMapTest, InsertFindErase) {
  LiveIdMap m;
  EXPECT_EQ(m.Find(7), LiveIdMap::kNone);
  EXPECT_EQ(m.Erase(7), LiveIdMap::kNone);
  EXPECT_TRUE(m.Insert(7, 0));
  EXPECT_FALSE(m.Insert(7, 5));  // present: kept
  EXPECT_EQ(m.Find(7), 0u);
  EXPECT_TRUE(m.contains(7));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.Erase(7), 0u);
  EXPECT_EQ(m.Erase(7), LiveIdMap::kNone);
  EXPECT_FALSE(m.contains(7));
  EXPECT_EQ(m.size(), 0u);
}

TEST(LiveIdMapTest, ExtremeIdsAndValues) {
  LiveIdMap m;
  EXPECT_TRUE(m.Insert(0, 1));
  EXPECT_TRUE(m.Insert(~uint32_t{0}, ~uint32_t{0} - 1));  // the largest id, the largest value
  EXPECT_EQ(m.Find(0), 1u);
  EXPECT_EQ(m.Find(~uint32_t{0}), ~uint32_t{0} - 1);
  EXPECT_EQ(m.Find(~uint32_t{0} - 1), LiveIdMap::kNone);
}

TEST(LiveIdMapTest, AgreesWithAHashMapUnderChurn) {
  // Ids from a counter, most erased soon, some kept long: what a program's
  // arenas do. A page emptied and refilled must read as empty in between.
  LiveIdMap m;
  std::unordered_map<uint32_t, uint32_t> ref;
  std::mt19937 rng(42);
  uint32_t next = 1;
  std::vector<uint32_t> live;
  for (int i = 0; i < 200000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      const uint32_t id = next++;
      const uint32_t value = rng() % 1000000;
      ASSERT_TRUE(m.Insert(id, value));
      ref[id] = value;
      live.push_back(id);
    } else {
      // Mostly the newest, sometimes any.
      const size_t k = rng() % 8 != 0 ? live.size() - 1 : rng() % live.size();
      const uint32_t id = live[k];
      live[k] = live.back();
      live.pop_back();
      ASSERT_EQ(m.Erase(id), ref[id]) << "id " << id;
      ref.erase(id);
    }
    if (i % 1000 == 0) {
      const uint32_t probe = rng() % (next + 10);
      const auto it = ref.find(probe);
      ASSERT_EQ(m.Find(probe), it == ref.end() ? LiveIdMap::kNone : it->second) << probe;
    }
  }
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [id, value] : ref) ASSERT_EQ(m.Find(id), value);
}

}  // namespace
}  // namespace alloctrace
