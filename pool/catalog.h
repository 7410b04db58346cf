// The pool policy catalog: every pool policy alloctrace measures, as the
// allocator type a user puts in their own containers. One list, PoolCatalog,
// of BasicPoolAllocator<std::byte, PoolT, Holding> types; the replayer
// replays exactly these types (one Holding::Handle per arena, as one
// allocator instance per container keeps), lists them under the names
// below, and prints the C++ type to adopt for each. Nothing else defines a
// pool policy: a policy added here is replayable, listed, adoptable and
// compile-tested (the replayer's catalog compile test).
//
// Names (no spaces, commas or glob characters):
//   pool/<storage>/<growth>/<threading>/<holding>/<delete>  the article's pool
//   slab/<threading>/<holding>                              SlabPool
//   small_node/<threading>/<holding>                        SmallNodePool
// with threading st | mt, holding stack (a pool per allocator instance: one
// per container) | single (one pool for the whole process, per pool type).
//
// The C++ type is spelled with `T` for the element type, in the library's
// aliases, e.g.
//   alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded,
//                                   alloctrace::pool::HoldingSingleton>
// `template <class T> using A = <cpp_type>;` after including kHeader
// declares the allocator.
#ifndef ALLOCTRACE_POOL_CATALOG_H_
#define ALLOCTRACE_POOL_CATALOG_H_

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/type_list.h"
#include "alloctrace/pool/policies.h"
#include "alloctrace/pool/pool.h"
#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/pool/slab_pool.h"
#include "alloctrace/pool/small_node_pool.h"
#include "alloctrace/pool/storage_policies.h"

namespace alloctrace::pool {

// Where a user gets the catalog's types.
inline constexpr char kHeader[] = "alloctrace/pool/pool_allocator.h";
inline constexpr char kBazelTarget[] = "@alloctrace//pool";
inline constexpr char kCMakeTarget[] = "alloctrace::pool";

struct PolicyEntry {
  std::string name;                // see the naming scheme above
  std::string cpp_type;            // the allocator to adopt, `T` the element type
  std::string description;         // one line
  bool thread_safe = false;        // may be used from several threads at once
  bool pool_per_instance = false;  // Stack holding: a pool per container
  bool frees_blocks = true;        // false: deallocate is a no-op
};

namespace catalog_internal {

inline const char* Describe(StorageSimple) {
  return "simple storage (last-used chunk first, O(c) alloc and free)";
}
inline const char* Describe(StorageBoundary) {
  return "boundary storage (full/non-full apart, O(1) alloc, O(c) free)";
}
inline const char* Describe(StorageOrdered) {
  return "ordered storage (chunk map by address, O(c) alloc, O(log c) free)";
}
inline const char* Describe(GrowthLinear) { return "255 blocks per chunk"; }
inline const char* Describe(GrowthExponential) { return "chunks doubling from 16 blocks to 1 MiB"; }
inline const char* Describe(SingleThreaded) { return "no lock"; }
inline const char* Describe(MultiThreaded) { return "a mutex per pool"; }
inline const char* Describe(HoldingStack) { return "a pool per container"; }
inline const char* Describe(HoldingSingleton) { return "one pool for the process"; }

// Spelling<PoolT>: the name, C++ type and description of PoolT under a
// holding policy.
template <typename PoolT>
struct Spelling;

template <typename Storage, typename Growth, typename Threading, bool kDelete>
struct Spelling<Pool<Storage, Growth, Threading, kDelete>> {
  template <typename Holding>
  static std::string Name() {
    return absl::StrCat("pool/", Storage::kName, "/", Growth::kName, "/", Threading::kName, "/",
                        Holding::kName, "/", kDelete ? "free" : "keep");
  }
  template <typename Holding>
  static std::string CppType() {
    return absl::StrCat("alloctrace::pool::PoolAllocator<T, ", Storage::kCppName, ", ",
                        Growth::kCppName, ", ", Threading::kCppName, ", ", Holding::kCppName, ", ",
                        kDelete ? "true" : "false", ">");
  }
  template <typename Holding>
  static std::string Description() {
    return absl::StrCat("article pool: ", Describe(Storage()), ", ", Describe(Growth()), ", ",
                        Describe(Threading()), ", ", Describe(Holding()),
                        kDelete ? "" : ", frees are no-ops");
  }
};

// SlabAllocator / SmallNodeAllocator: `Alias`<T, Threading, Holding>.
template <typename Threading>
struct Spelling<SlabPool<Threading>> {
  template <typename Holding>
  static std::string Name() {
    return absl::StrCat("slab/", Threading::kName, "/", Holding::kName);
  }
  template <typename Holding>
  static std::string CppType() {
    return absl::StrCat("alloctrace::pool::SlabAllocator<T, ", Threading::kCppName, ", ",
                        Holding::kCppName, ">");
  }
  template <typename Holding>
  static std::string Description() {
    return absl::StrCat(
        "ours: 8-byte size classes to 256 found by arithmetic, LIFO free lists, "
        "O(1) sized free, bump from mmapped slabs; ",
        Describe(Threading()), ", ", Describe(Holding()));
  }
};

template <typename Threading>
struct Spelling<SmallNodePool<Threading>> {
  template <typename Holding>
  static std::string Name() {
    return absl::StrCat("small_node/", Threading::kName, "/", Holding::kName);
  }
  template <typename Holding>
  static std::string CppType() {
    return absl::StrCat("alloctrace::pool::SmallNodeAllocator<T, ", Threading::kCppName, ", ",
                        Holding::kCppName, ">");
  }
  template <typename Holding>
  static std::string Description() {
    return absl::StrCat(
        "small-node pool (Modern C++ Design): chunks of <= 255 blocks, one-byte free "
        "list indices, exact sizes from 1 byte; ",
        Describe(Threading()), ", ", Describe(Holding()));
  }
};

template <typename PoolT>
using HoldingVariants = TypeList<BasicPoolAllocator<std::byte, PoolT, HoldingStack>,
                                 BasicPoolAllocator<std::byte, PoolT, HoldingSingleton>>;

template <template <typename> class PoolOf>
using ThreadingHoldingVariants =
    Concat<HoldingVariants<PoolOf<SingleThreaded>>, HoldingVariants<PoolOf<MultiThreaded>>>;

template <typename S, typename G, typename Th, typename H>
using DeleteVariants = TypeList<BasicPoolAllocator<std::byte, Pool<S, G, Th, true>, H>,
                                BasicPoolAllocator<std::byte, Pool<S, G, Th, false>, H>>;

// The 16 article policies of one storage kind: growth x threading x holding
// x delete, in that order.
template <typename S>
using ArticleVariants =
    Concat<DeleteVariants<S, GrowthLinear, SingleThreaded, HoldingStack>,
           DeleteVariants<S, GrowthLinear, SingleThreaded, HoldingSingleton>,
           DeleteVariants<S, GrowthLinear, MultiThreaded, HoldingStack>,
           DeleteVariants<S, GrowthLinear, MultiThreaded, HoldingSingleton>,
           DeleteVariants<S, GrowthExponential, SingleThreaded, HoldingStack>,
           DeleteVariants<S, GrowthExponential, SingleThreaded, HoldingSingleton>,
           DeleteVariants<S, GrowthExponential, MultiThreaded, HoldingStack>,
           DeleteVariants<S, GrowthExponential, MultiThreaded, HoldingSingleton>>;

}  // namespace catalog_internal

// The catalog entry of A, a BasicPoolAllocator<U, PoolT, Holding> of the
// catalog (any U).
template <typename A>
PolicyEntry EntryOf() {
  using PoolT = typename A::pool_type;
  using Holding = typename A::holding_policy;
  using Spelling = catalog_internal::Spelling<PoolT>;
  return PolicyEntry{Spelling::template Name<Holding>(),
                     Spelling::template CppType<Holding>(),
                     Spelling::template Description<Holding>(),
                     PoolT::ThreadingPolicy::kThreadSafe,
                     Holding::kPoolPerInstance,
                     PoolT::kFreesBlocks};
}

// alloctrace's own pools: slab and small_node, st/mt x stack/single.
using OwnPoolCatalog = Concat<catalog_internal::ThreadingHoldingVariants<SlabPool>,
                              catalog_internal::ThreadingHoldingVariants<SmallNodePool>>;

// The article's 16 of one storage policy: growth x threading x holding x
// delete.
template <typename Storage>
using ArticlePoolCatalogFor = catalog_internal::ArticleVariants<Storage>;

// The article's 48: storage x growth x threading x holding x delete.
using ArticlePoolCatalog =
    Concat<ArticlePoolCatalogFor<StorageSimple>, ArticlePoolCatalogFor<StorageBoundary>,
           ArticlePoolCatalogFor<StorageOrdered>>;

using PoolCatalog = Concat<OwnPoolCatalog, ArticlePoolCatalog>;

static_assert(OwnPoolCatalog::kSize == 8);
static_assert(ArticlePoolCatalog::kSize == 48);

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_CATALOG_H_
