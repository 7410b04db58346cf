#include "alloctrace/pool/pool_allocator.h"

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace::pool {
namespace {

// Each family names an allocator template: Family::Alloc<T>.
struct DefaultPolicies {
  template <typename T>
  using Alloc = PoolAllocator<T>;
};
struct SimpleLinearSingletonMt {
  template <typename T>
  using Alloc =
      PoolAllocator<T, StorageSimple, GrowthLinear, MultiThreaded, HoldingSingleton, true>;
};
struct OrderedNoDeleteStack {
  template <typename T>
  using Alloc =
      PoolAllocator<T, StorageOrdered, GrowthExponential, SingleThreaded, HoldingStack, false>;
};
struct SlabStack {
  template <typename T>
  using Alloc = SlabAllocator<T>;
};
struct SlabSingletonMt {
  template <typename T>
  using Alloc = SlabAllocator<T, MultiThreaded, HoldingSingleton>;
};

template <typename Family>
class PoolAllocatorTest : public ::testing::Test {};

using Families = ::testing::Types<DefaultPolicies, SimpleLinearSingletonMt, OrderedNoDeleteStack,
                                  SlabStack, SlabSingletonMt>;
TYPED_TEST_SUITE(PoolAllocatorTest, Families);

TYPED_TEST(PoolAllocatorTest, MeetsTheAllocatorTraits) {
  using A = typename TypeParam::template Alloc<int>;
  using Traits = std::allocator_traits<A>;
  using Rebound = typename Traits::template rebind_alloc<std::string>;
  static_assert(std::is_same_v<typename Traits::value_type, int>);
  static_assert(
      std::is_same_v<typename std::allocator_traits<Rebound>::template rebind_alloc<int>, A>);
  static_assert(Traits::propagate_on_container_copy_assignment::value);
  static_assert(Traits::propagate_on_container_move_assignment::value);
  static_assert(Traits::propagate_on_container_swap::value);
  static_assert(std::is_nothrow_copy_constructible_v<A>);
  A a;
  A copy = a;
  Rebound rebound(a);
  EXPECT_TRUE(a == copy);
  EXPECT_TRUE(a == rebound);
  EXPECT_TRUE(A(rebound) == a);
  A moved_to(std::move(copy));
  EXPECT_TRUE(moved_to == a);
  EXPECT_TRUE(copy == a);  // Moved-from allocators stay equal and usable.
  int* p = copy.allocate(3);
  copy.deallocate(p, 3);
  EXPECT_THROW(a.allocate(a.max_size() + 1), std::bad_array_new_length);
}

TYPED_TEST(PoolAllocatorTest, HoldsAsThePolicySays) {
  using A = typename TypeParam::template Alloc<double>;
  A a;
  A b;
  constexpr bool kPerInstance = A::holding_policy::kPoolPerInstance;
  EXPECT_EQ(a == b, !kPerInstance);
  EXPECT_EQ(&a.pool() == &b.pool(), !kPerInstance);
  static_assert(std::allocator_traits<A>::is_always_equal::value == !kPerInstance);
}

TYPED_TEST(PoolAllocatorTest, WorksInAStdMap) {
  using Node = std::pair<const int, std::string>;
  std::map<int, std::string, std::less<int>, typename TypeParam::template Alloc<Node>> m;
  for (int i = 0; i < 20000; ++i) m.emplace(i, std::to_string(i));
  for (int i = 0; i < 20000; i += 2) m.erase(i);
  for (int i = 20000; i < 25000; ++i) m.emplace(i, std::to_string(i));
  EXPECT_EQ(m.size(), 15000u);
  for (const auto& [key, value] : m) ASSERT_EQ(value, std::to_string(key));
  auto copy = m;
  auto moved = std::move(m);
  m.emplace(1, "one");  // The moved-from map keeps a working allocator.
  EXPECT_EQ(copy, moved);
  EXPECT_EQ(m.size(), 1u);
}

TYPED_TEST(PoolAllocatorTest, WorksInAStdListAndSet) {
  std::list<int, typename TypeParam::template Alloc<int>> list;
  std::set<long, std::less<long>, typename TypeParam::template Alloc<long>> set;
  for (int i = 0; i < 10000; ++i) {
    list.push_back(i);
    set.insert(i * 7 % 1000);
  }
  list.remove_if([](int x) { return x % 3 == 0; });
  EXPECT_EQ(list.size(), 6666u);
  EXPECT_EQ(set.size(), 1000u);
  decltype(list) other(list.get_allocator());  // splice needs equal allocators.
  other.splice(other.end(), list);
  EXPECT_EQ(other.size(), 6666u);
}

TYPED_TEST(PoolAllocatorTest, WorksInAStdVectorAndUnorderedMap) {
  std::vector<int, typename TypeParam::template Alloc<int>> v;
  for (int i = 0; i < 100000; ++i) v.push_back(i);  // Big buffers: malloc path.
  EXPECT_EQ(v[99999], 99999);
  std::unordered_map<int, int, std::hash<int>, std::equal_to<int>,
                     typename TypeParam::template Alloc<std::pair<const int, int>>>
      u;
  for (int i = 0; i < 10000; ++i) u[i] = i * 2;
  EXPECT_EQ(u[777], 1554);
}

TYPED_TEST(PoolAllocatorTest, WorksWithAllocateShared) {
  struct Widget {
    explicit Widget(int v) : value(v) {}
    int value;
    alignas(16) char payload[24] = {};
  };
  typename TypeParam::template Alloc<Widget> alloc;
  std::vector<std::shared_ptr<Widget>> widgets;
  for (int i = 0; i < 1000; ++i) {
    widgets.push_back(std::allocate_shared<Widget>(alloc, i));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(widgets.back()->payload) % 16, 0u);
  }
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(widgets[i]->value, i);
}

TEST(PoolAllocatorStackTest, APoolLivesAsLongAsItsLastAllocatorCopy) {
  std::weak_ptr<int> observer;
  std::shared_ptr<int> survivor;
  {
    PoolAllocator<int> alloc;
    survivor = std::allocate_shared<int>(alloc, 42);
    observer = survivor;
  }
  // The control block holds a rebound copy of the allocator, hence the pool.
  EXPECT_EQ(*survivor, 42);
  survivor.reset();
  EXPECT_TRUE(observer.expired());
}

}  // namespace
}  // namespace alloctrace::pool
