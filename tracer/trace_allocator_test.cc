#include "alloctrace/tracer/trace_allocator.h"

#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "alloctrace/format/trace_reader.h"
#include "alloctrace/tracer/recorder.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

template <typename T>
using TA = TraceAllocator<T>;

struct Counts {
  uint64_t allocs = 0, frees = 0, arena_creates = 0, arena_destroys = 0;
  uint64_t bytes = 0;
  std::set<uint32_t> alloc_arenas;
};

// Records `body` into a fresh trace and returns what the trace holds.
template <typename F>
Counts RecordAndCount(const std::string& name, F body) {
  const std::string path = std::string(testing::TempDir()) + "/" + name + ".trace";
  RecordingOptions options;
  options.path = path;
  options.workload = name;
  EXPECT_TRUE(Recorder::Global().Start(options).ok());
  body();
  RecordingStats stats;
  EXPECT_TRUE(Recorder::Global().Stop(&stats).ok());
  EXPECT_EQ(stats.unmatched_frees, 0u);
  Counts c;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return c;
  std::vector<Event> events;
  while (true) {
    auto more = (*reader)->NextChunk(&events);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    for (const Event& e : events) {
      switch (e.kind) {
        case OpKind::kAlloc:
          ++c.allocs;
          c.bytes += (*reader)->shapes()[e.shape].bytes();
          c.alloc_arenas.insert(e.arena);
          break;
        case OpKind::kFree:
          ++c.frees;
          break;
        case OpKind::kArenaCreate:
          ++c.arena_creates;
          break;
        case OpKind::kArenaDestroy:
          ++c.arena_destroys;
          break;
        default:
          break;
      }
    }
  }
  EXPECT_TRUE((*reader)->has_footer());
  return c;
}

// One body per container: fill, mutate, let go. Each container type the
// issue names must work unchanged with TraceAllocator.
template <typename C>
struct ContainerCase;

template <>
struct ContainerCase<std::map<int, int, std::less<int>, TA<std::pair<const int, int>>>> {
  static constexpr const char* kName = "map";
  static void Run() {
    std::map<int, int, std::less<int>, TA<std::pair<const int, int>>> m;
    for (int i = 0; i < 1000; ++i) m[i * 7 % 1000] = i;
    for (int i = 0; i < 1000; i += 2) m.erase(i);
  }
  static constexpr uint64_t kMinAllocs = 1000;
};

template <>
struct ContainerCase<std::set<int, std::less<int>, TA<int>>> {
  static constexpr const char* kName = "set";
  static void Run() {
    std::set<int, std::less<int>, TA<int>> s;
    for (int i = 0; i < 500; ++i) s.insert(i);
    std::set<int, std::less<int>, TA<int>> copy(s);  // a copy is a new arena
  }
  static constexpr uint64_t kMinAllocs = 1000;
};

template <>
struct ContainerCase<std::list<int, TA<int>>> {
  static constexpr const char* kName = "list";
  static void Run() {
    std::list<int, TA<int>> a, b;
    for (int i = 0; i < 300; ++i) (i % 2 ? a : b).push_back(i);
    std::list<int, TA<int>> c(a.get_allocator());  // same arena: splice is legal
    c.splice(c.end(), a);
  }
  static constexpr uint64_t kMinAllocs = 300;
};

template <>
struct ContainerCase<std::forward_list<int, TA<int>>> {
  static constexpr const char* kName = "forward_list";
  static void Run() {
    std::forward_list<int, TA<int>> l;
    for (int i = 0; i < 300; ++i) l.push_front(i);
    l.remove_if([](int v) { return v % 3 == 0; });
  }
  static constexpr uint64_t kMinAllocs = 300;
};

template <>
struct ContainerCase<std::vector<double, TA<double>>> {
  static constexpr const char* kName = "vector";
  static void Run() {
    std::vector<double, TA<double>> v;
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    v.shrink_to_fit();
  }
  static constexpr uint64_t kMinAllocs = 10;  // geometric growth
};

template <>
struct ContainerCase<std::deque<int, TA<int>>> {
  static constexpr const char* kName = "deque";
  static void Run() {
    std::deque<int, TA<int>> d;
    for (int i = 0; i < 5000; ++i) d.push_back(i);
    for (int i = 0; i < 2500; ++i) d.pop_front();
  }
  static constexpr uint64_t kMinAllocs = 10;
};

using UMap =
    std::unordered_map<int, int, std::hash<int>, std::equal_to<int>, TA<std::pair<const int, int>>>;
template <>
struct ContainerCase<UMap> {
  static constexpr const char* kName = "unordered_map";
  static void Run() {
    UMap m;
    for (int i = 0; i < 1000; ++i) m.emplace(i, i);
    for (int i = 0; i < 1000; i += 3) m.erase(i);
  }
  static constexpr uint64_t kMinAllocs = 1000;
};

struct SharedTag {};
template <>
struct ContainerCase<SharedTag> {
  static constexpr const char* kName = "allocate_shared";
  static void Run() {
    TA<int> alloc;
    std::vector<std::shared_ptr<int>> v;
    for (int i = 0; i < 200; ++i) v.push_back(std::allocate_shared<int>(alloc, i));
    std::shared_ptr<int> global = std::allocate_shared<int>(TA<int>(kNoArena), 1);
  }
  static constexpr uint64_t kMinAllocs = 201;
};

template <typename C>
class TraceAllocatorContainerTest : public testing::Test {};

using Containers = testing::Types<std::map<int, int, std::less<int>, TA<std::pair<const int, int>>>,
                                  std::set<int, std::less<int>, TA<int>>, std::list<int, TA<int>>,
                                  std::forward_list<int, TA<int>>, std::vector<double, TA<double>>,
                                  std::deque<int, TA<int>>, UMap, SharedTag>;
TYPED_TEST_SUITE(TraceAllocatorContainerTest, Containers);

TYPED_TEST(TraceAllocatorContainerTest, RecordsEveryAllocationAndFreesItAll) {
  using Case = ContainerCase<TypeParam>;
  const Counts c = RecordAndCount(Case::kName, [] { Case::Run(); });
  EXPECT_GE(c.allocs, Case::kMinAllocs);
  EXPECT_EQ(c.allocs, c.frees) << "every allocation is freed when the container dies";
  EXPECT_GT(c.bytes, 0u);
  EXPECT_GE(c.arena_creates, 1u);
  EXPECT_EQ(c.arena_creates, c.arena_destroys) << "every container's arena ends";
}

TEST(TraceAllocatorTest, RebindSharesArenaAndNewAllocatorGetsNewArena) {
  TA<int> a;
  TA<double> b(a);
  TA<int> c;
  EXPECT_EQ(a.arena_id(), b.arena_id());
  EXPECT_TRUE(a == b);
  EXPECT_NE(a.arena_id(), c.arena_id());
  EXPECT_FALSE(a == c);
  TA<int> copy = std::allocator_traits<TA<int>>::select_on_container_copy_construction(a);
  EXPECT_NE(copy.arena_id(), a.arena_id());
  EXPECT_EQ(TA<int>(kNoArena).arena_id(), 0u);
}

TEST(TraceAllocatorTest, TwoContainersAreTwoArenas) {
  const Counts c = RecordAndCount("two_maps", [] {
    std::map<int, int, std::less<int>, TA<std::pair<const int, int>>> m1, m2;
    for (int i = 0; i < 10; ++i) {
      m1[i] = i;
      m2[i] = i;
    }
  });
  EXPECT_EQ(c.alloc_arenas.size(), 2u);
  EXPECT_EQ(c.allocs, 20u);
}

struct alignas(64) OverAligned {
  char bytes[64];
};

TEST(TraceAllocatorTest, OverAlignedTypesAreAlignedAndRecorded) {
  const Counts c = RecordAndCount("overaligned", [] {
    std::vector<OverAligned, TA<OverAligned>> v(10);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u);
  });
  EXPECT_EQ(c.allocs, 1u);
  EXPECT_EQ(c.bytes, 640u);
}

// Classes: tag types and value types name them.
struct Msg {
  char text[24];
};

}  // namespace

namespace app {
struct OrderIndex;  // a tag: declared only
}  // namespace app

namespace {

struct PriceLevels;

template <typename K, typename V, typename Tag = void>
using TracedMap = std::map<K, V, std::less<K>, TraceAllocator<std::pair<const K, V>, Tag>>;

TEST(TraceAllocatorClassTest, TypeNamesAreTheCompilersSpelling) {
  EXPECT_EQ(TypeName<app::OrderIndex>(), "alloctrace::app::OrderIndex");
  EXPECT_EQ(TypeName<PriceLevels>().substr(TypeName<PriceLevels>().rfind("::") + 2), "PriceLevels");
  EXPECT_EQ(TypeName<int>(), "int");
  const std::string_view pair = TypeName<std::pair<const long, Msg>>();
  // GCC spells `long` as `long int`; both keep the namespaces.
  EXPECT_EQ(pair.substr(0, 20), "std::pair<const long");
  EXPECT_NE(pair.find("Msg>"), std::string_view::npos) << pair;
  EXPECT_EQ(pair.back(), '>');
}

TEST(TraceAllocatorClassTest, RebindKeepsTheClassOfTheDeclaredValueType) {
  TraceAllocator<std::pair<const long, Msg>> untagged;
  TraceAllocator<std::pair<const long, Msg>, app::OrderIndex> tagged;
  EXPECT_NE(untagged.class_id(), 0u);
  EXPECT_NE(tagged.class_id(), 0u);
  EXPECT_NE(untagged.class_id(), tagged.class_id());
  struct Node {
    void* links[3];
    std::pair<const long, Msg> value;
  };
  // A rebound copy shares the arena, hence the class.
  using Traits = std::allocator_traits<decltype(tagged)>;
  typename Traits::template rebind_alloc<Node> node_copy(tagged);
  EXPECT_EQ(node_copy.arena_id(), tagged.arena_id());
  EXPECT_EQ(node_copy.class_id(), tagged.class_id());
  // A rebound allocator default-constructed (as std::map does for its nodes)
  // is a new arena of the original class, not of a class named after Node.
  typename Traits::template rebind_alloc<Node> node_fresh;
  EXPECT_NE(node_fresh.arena_id(), tagged.arena_id());
  EXPECT_EQ(node_fresh.class_id(), tagged.class_id());
  typename std::allocator_traits<decltype(untagged)>::template rebind_alloc<Node> untagged_node;
  EXPECT_EQ(untagged_node.class_id(), untagged.class_id());
  EXPECT_NE(TraceAllocator<Node>().class_id(), untagged.class_id()) << "Node written by hand";
  // Rebinding twice still names the declared type; the container's copy is
  // a new arena of the same class.
  typename std::allocator_traits<decltype(node_fresh)>::template rebind_alloc<int> twice;
  EXPECT_EQ(twice.class_id(), tagged.class_id());
  auto copy = Traits::select_on_container_copy_construction(tagged);
  EXPECT_EQ(copy.class_id(), tagged.class_id());
  EXPECT_NE(copy.arena_id(), tagged.arena_id());
  EXPECT_EQ(TraceAllocator<int>(kNoArena).class_id(), 0u);
}

// What a recorded trace says of its classes and arenas.
struct RecordedClasses {
  absl::flat_hash_map<uint32_t, ClassDef> classes;
  std::map<uint32_t, uint32_t> arena_class;             // arena index -> class id
  std::map<uint32_t, std::set<uint32_t>> alloc_arenas;  // class id -> arenas with allocations
};

template <typename F>
RecordedClasses RecordClasses(const std::string& name, F body) {
  const std::string path = std::string(testing::TempDir()) + "/" + name + ".trace";
  RecordingOptions options;
  options.path = path;
  EXPECT_TRUE(Recorder::Global().Start(options).ok());
  body();
  EXPECT_TRUE(Recorder::Global().Stop().ok());
  RecordedClasses r;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return r;
  absl::Status s =
      (*reader)->ForEachEvent([](const std::vector<Event>&) {},
                              [&](const Event& e) {
                                if (e.kind == OpKind::kArenaCreate)
                                  r.arena_class[e.arena] = e.shape;
                                if (e.kind == OpKind::kAlloc)
                                  r.alloc_arenas[(*reader)->arena_class(e.arena)].insert(e.arena);
                                return absl::OkStatus();
                              });
  EXPECT_TRUE(s.ok()) << s;
  r.classes = (*reader)->classes();
  return r;
}

TEST(TraceAllocatorClassTest, TheTraceNamesEachClassOnceAndEachArenaItsClass) {
  const RecordedClasses r = RecordClasses("classes", [] {
    TracedMap<long, Msg, app::OrderIndex> by_id, by_time;  // one class, two arenas
    TracedMap<long, Msg> untagged;
    std::list<int, TraceAllocator<int, PriceLevels>> levels;
    for (long i = 0; i < 8; ++i) {
      by_id[i];
      by_time[-i];
      untagged[i];
      levels.push_back(static_cast<int>(i));
    }
  });
  ASSERT_EQ(r.classes.size(), 3u);
  const uint32_t order_index =
      TraceAllocator<std::pair<const long, Msg>, app::OrderIndex>().class_id();
  const uint32_t pair = TraceAllocator<std::pair<const long, Msg>>().class_id();
  const uint32_t levels = TraceAllocator<int, PriceLevels>().class_id();
  ASSERT_TRUE(r.classes.contains(order_index));
  ASSERT_TRUE(r.classes.contains(pair));
  ASSERT_TRUE(r.classes.contains(levels));
  const ClassDef& oi = r.classes.at(order_index);
  EXPECT_EQ(oi.name, "alloctrace::app::OrderIndex");
  EXPECT_TRUE(oi.tagged);
  EXPECT_EQ(oi.elem_size, sizeof(std::pair<const long, Msg>));
  const ClassDef& p = r.classes.at(pair);
  EXPECT_EQ(p.name, (TypeName<std::pair<const long, Msg>>()))
      << "named from the value type, not the node";
  EXPECT_FALSE(p.tagged);
  EXPECT_EQ(p.elem_size, sizeof(std::pair<const long, Msg>));
  EXPECT_EQ(r.classes.at(levels).elem_size, sizeof(int));
  // Two containers of one class: one class id, two arenas.
  EXPECT_EQ(r.alloc_arenas.at(order_index).size(), 2u);
  EXPECT_EQ(r.alloc_arenas.at(pair).size(), 1u);
  EXPECT_EQ(r.alloc_arenas.at(levels).size(), 1u);
  EXPECT_FALSE(r.alloc_arenas.count(0) > 0) << "no container's allocations are unnamed";
  for (const auto& [arena, cls] : r.arena_class) EXPECT_TRUE(r.classes.contains(cls)) << arena;
}

}  // namespace
}  // namespace alloctrace
