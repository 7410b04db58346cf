// The list of workloads, written once and instantiated for any allocator
// template: WorkloadDefs<alloctrace::TraceAllocator>() records,
// WorkloadDefs<std::allocator>() runs plain, and tests instantiate it with a
// counting allocator. tracer/workloads/workloads.h is the registry programs use.
//
// MultiThreadedWorkloadDefs<Alloc>() are the workloads that run several
// threads (thread_workloads.h), kept apart because they need an Alloc that is
// safe to share between threads: instantiating them with a single-threaded
// pool compiles, and corrupts it at run time.
//
// Defaults are small (each trace roughly 5k to 100k events, and runs that
// touch at most a few hundred MB: 1016-byte records are copied by value);
// the source's own values are in ParamSpec::source_value where the source
// states them.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_TABLE_H_
#define ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_TABLE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "alloctrace/tracer/workloads/container_workloads.h"
#include "alloctrace/tracer/workloads/map_workloads.h"
#include "alloctrace/tracer/workloads/node_workloads.h"
#include "alloctrace/tracer/workloads/record_workloads.h"
#include "alloctrace/tracer/workloads/shared_ptr_workloads.h"
#include "alloctrace/tracer/workloads/thread_workloads.h"
#include "alloctrace/tracer/workloads/workload_params.h"

namespace alloctrace::workloads {

using RunFn = void (*)(const WorkloadParams& params, uint64_t seed);

inline constexpr std::string_view kSourceDrDobbs =
    "Dr. Dobb's, \"Improving Performance with Custom Pool Allocators for STL\" (2005)";
inline constexpr std::string_view kSourceSharedPtr =
    "\"Efficiently allocating lots of std::shared_ptr\" (lukas-barth.net, 2024)";
inline constexpr std::string_view kSourceFoonathan =
    "foonathan/memory profiler (test/profiling.cpp, test/benchmark.hpp)";
inline constexpr std::string_view kSourceRecords =
    "\"Writing functional code in C++ III: Performance of different allocation schemes\" "
    "(lucabol.com, 2012)";
inline constexpr std::string_view kSourceAlloctrace = "alloctrace (no source article)";
// mimalloc-bench's multi-threaded stressors.
inline constexpr std::string_view kSourceXmalloc =
    "mimalloc-bench (github.com/daanx/mimalloc-bench), xmalloc-test (Lever and Boreham, "
    "USENIX 2000)";
inline constexpr std::string_view kSourceLarson =
    "mimalloc-bench (github.com/daanx/mimalloc-bench), larson (Larson and Krishnan, ISMM 1998)";
inline constexpr std::string_view kSourceMstress =
    "mimalloc-bench (github.com/daanx/mimalloc-bench), mstress (mimalloc's test-stress.c: its "
    "transfer array)";
inline constexpr std::string_view kSourceGlibcThread =
    "mimalloc-bench (github.com/daanx/mimalloc-bench), glibc-thread (glibc's "
    "bench-malloc-thread.c)";

struct WorkloadDef {
  std::string_view name;
  std::string_view description;
  std::string_view source;
  std::vector<ParamSpec> params;
  bool seeded;  // whether the seed changes the sequence of allocations and frees
  RunFn run;
  // Runs several threads: Alloc must be thread-safe, and which thread frees
  // which object depends on the scheduler (see thread_workloads.h).
  bool multi_threaded = false;
};

namespace table_internal {

inline std::vector<ParamSpec> SharedPtrParams() {
  return {
      {"lists", 100, "1000", "number of singly linked lists"},
      {"nodes", 10000, "1,000,000", "ramp-up: nodes inserted at random lists before iterating"},
      {"iterations", 100, "50,000", "iterations; iteration i drops list i % lists"},
      {"inserts_per_iteration", 100, "1000", "nodes inserted at random lists per iteration"},
  };
}

inline std::vector<ParamSpec> NodeParams() {
  return {
      {"node_size", 0, "1, 4, 8 and 256",
       "bytes per node: 1, 4, 8, 16, 32, 64, 128 or 256; 0 = each of 8..256 in turn", 0,
       NodeSizeValues()},
      {"count", 1024, "256, 512 and 1024", "nodes per run"},
      {"runs", 4, "1024 (sample_size)", "runs per node size, each with a fresh allocator"},
  };
}

inline std::vector<ParamSpec> ArrayParams() {
  return {
      {"node_size", 0, "1, 4 and 8", "bytes per node: 1, 4 or 8; 0 = each in turn", 0,
       ArraySizeValues()},
      {"array_nodes", 0, "1, 4 and 8", "nodes per array: 1, 4 or 8; 0 = each in turn", 0,
       ArraySizeValues()},
      {"count", 1024, "256, 512 and 1024", "arrays per run"},
      {"runs", 2, "1024 (sample_size)", "runs per combination, each with a fresh allocator"},
  };
}

inline std::vector<ParamSpec> RecordParams(int64_t rounds) {
  return {
      {"records", 1000, "1000 (howMany)", "records per container"},
      {"rounds", rounds, "1000 (repetitions)",
       "containers filled and destroyed, one after another"},
      {"big_block", 1000, "1000 (bigBlock)",
       "payload bytes per record (48, 240 or 1000); a record is 16 bytes more", 48,
       BigBlockValues()},
  };
}

inline std::vector<ParamSpec> PodVectorParams() {
  std::vector<ParamSpec> params = RecordParams(1000);
  params.push_back({"buffer_percent", 10, "200 and 10 (N = 2 x howMany, howMany / 10)",
                    "the stack buffer's records, in percent of records", 0});
  return params;
}

// `params` followed by min_size and max_size, block sizes drawn uniformly.
inline std::vector<ParamSpec> WithBlockSizes(std::vector<ParamSpec> params, int64_t min_size,
                                             int64_t max_size, std::string_view source_min = "",
                                             std::string_view source_max = "") {
  params.push_back({"min_size", min_size, source_min, "smallest block, bytes"});
  params.push_back(
      {"max_size", max_size, source_max, "largest block, bytes (below min_size: min_size)"});
  return params;
}

}  // namespace table_internal

// Over 80 lines: a table, one entry per workload, read in one place.
template <template <typename> class Alloc>
const std::vector<WorkloadDef>& WorkloadDefs() {
  using table_internal::ArrayParams;
  using table_internal::NodeParams;
  using table_internal::PodVectorParams;
  using table_internal::RecordParams;
  using table_internal::SharedPtrParams;
  static const std::vector<WorkloadDef>* const kDefs = new std::vector<WorkloadDef>{
      {"simple_map",
       "fill an int->int std::map with random keys, then let it go out of scope",
       kSourceDrDobbs,
       {{"entries", 30000, "", "entries inserted"}},
       true,
       &RunSimpleMap<Alloc>},
      {"fixed_priority_queue",
       "a std::set<int> of fixed capacity: once full, a random item is inserted only if "
       "greater than the smallest, which is erased",
       kSourceDrDobbs,
       {{"capacity", 5000, "", "most items kept"}, {"inserts", 200000, "", "random items offered"}},
       true,
       &RunFixedPriorityQueue<Alloc>},
      {"remove_if",
       "fill an int->int std::map, then several times erase the entries whose value % k == r "
       "(random k, r)",
       kSourceDrDobbs,
       {{"entries", 30000, "", "entries inserted first"},
        {"passes", 3, "", "erase passes, each with a new random predicate"}},
       true,
       &RunRemoveIf<Alloc>},
      {"random",
       "fill an int->int std::map, then randomly insert a key or erase an entry",
       kSourceDrDobbs,
       {{"entries", 10000, "", "entries inserted first"},
        {"operations", 50000, "", "random inserts and erases (50/50)"}},
       true,
       &RunRandomMap<Alloc>},
      {"swap_splice",
       "std::map swaps (equal allocators, and allocators that travel with the swap) and "
       "std::list splices (one shared allocator) among four maps and four lists",
       kSourceDrDobbs,
       {{"entries", 1000, "", "elements per map and per list at the start"},
        {"operations", 20000, "", "random steps"}},
       true,
       &RunSwapSplice<Alloc>},
      {"shared_ptr_new",
       "linked lists of shared_ptr nodes made by shared_ptr(new Node): object and control "
       "block are two global-heap allocations",
       kSourceSharedPtr, SharedPtrParams(), true, &RunSharedPtrLists<Alloc, SharedPtrKind::kNew>},
      {"make_shared",
       "linked lists of shared_ptr nodes made by std::make_shared: one global-heap allocation "
       "per node",
       kSourceSharedPtr, SharedPtrParams(), true,
       &RunSharedPtrLists<Alloc, SharedPtrKind::kMakeShared>},
      {"allocate_shared",
       "linked lists of shared_ptr nodes made by std::allocate_shared with one allocator "
       "instance (own arena) for the whole run, as with boost::fast_pool_allocator",
       kSourceSharedPtr, SharedPtrParams(), true,
       &RunSharedPtrLists<Alloc, SharedPtrKind::kAllocateShared>},
      {"single", "allocate one node and free it at once, `count` times per run", kSourceFoonathan,
       NodeParams(), false, &RunNodeStrategy<Alloc, FreeOrder::kSingle>},
      {"bulk", "allocate `count` nodes, then free them in allocation order", kSourceFoonathan,
       NodeParams(), false, &RunNodeStrategy<Alloc, FreeOrder::kBulk>},
      {"bulk_reversed", "allocate `count` nodes, then free them in reverse order", kSourceFoonathan,
       NodeParams(), false, &RunNodeStrategy<Alloc, FreeOrder::kBulkReversed>},
      {"butterfly", "allocate `count` nodes, then free them in random order", kSourceFoonathan,
       NodeParams(), true, &RunNodeStrategy<Alloc, FreeOrder::kButterfly>},
      {"array_single", "allocate one array of nodes and free it at once, `count` times per run",
       kSourceFoonathan, ArrayParams(), false, &RunArrayStrategy<Alloc, FreeOrder::kSingle>},
      {"array_bulk", "allocate `count` arrays of nodes, then free them in allocation order",
       kSourceFoonathan, ArrayParams(), false, &RunArrayStrategy<Alloc, FreeOrder::kBulk>},
      {"array_bulk_reversed", "allocate `count` arrays of nodes, then free them in reverse order",
       kSourceFoonathan, ArrayParams(), false, &RunArrayStrategy<Alloc, FreeOrder::kBulkReversed>},
      {"array_butterfly", "allocate `count` arrays of nodes, then free them in random order",
       kSourceFoonathan, ArrayParams(), true, &RunArrayStrategy<Alloc, FreeOrder::kButterfly>},
      {"records_by_value", "records stored by value in a std::vector grown by push_back",
       kSourceRecords, RecordParams(300), false, &RunRecords<Alloc, RecordStorage::kByValue>},
      {"records_pod_vector",
       "records stored by value in a pod_vector: a stack buffer of N records, then a heap "
       "buffer doubling from 2N (the trace holds only the heap fallback)",
       kSourceRecords, PodVectorParams(), false, &RunRecords<Alloc, RecordStorage::kPodVector>},
      {"records_local_pool",
       "records from a boost::pool<> local to each round, never freed one by one: the trace "
       "holds the pool's chunks (global heap), released at scope exit, and a vector of pointers",
       kSourceRecords, RecordParams(300), false, &RunRecords<Alloc, RecordStorage::kLocalPool>},
      {"records_shared_new",
       "a std::vector of shared_ptr<Record> made by shared_ptr(new Record): two global-heap "
       "allocations per record",
       kSourceRecords, RecordParams(20), false, &RunRecords<Alloc, RecordStorage::kSharedFromNew>},
      {"records_singleton_pool",
       "a std::vector of shared_ptr<Record> whose records come from a boost::singleton_pool "
       "(deleter returns them): a global-heap control block per record, pool chunks once",
       kSourceRecords, RecordParams(20), false, &RunRecords<Alloc, RecordStorage::kSingletonPool>},
      {"records_make_shared",
       "a std::vector of shared_ptr<Record> made by std::make_shared: one global-heap "
       "allocation per record",
       kSourceRecords, RecordParams(20), false, &RunRecords<Alloc, RecordStorage::kMakeShared>},
      {"list_churn",
       "two std::list<int> sharing one allocator: random push_front, push_back, erase in "
       "the middle and splice between them",
       kSourceAlloctrace,
       {{"initial", 1000, "", "elements per list at the start"},
        {"operations", 50000, "", "random steps"}},
       true,
       &RunListChurn<Alloc>},
      {"unordered_map",
       "std::unordered_map<int, int>: inserts, lookups, erases and explicit rehashes; the "
       "bucket arrays are allocations too",
       kSourceAlloctrace,
       {{"entries", 20000, "", "entries inserted first (keys from [0, 2 * entries))"},
        {"operations", 40000, "", "random lookups, inserts and erases (a third each)"}},
       true,
       &RunUnorderedMap<Alloc>},
      {"order_book",
       "a limit order book: per side, orders by id (tagged OrderIndex) and quantity by price "
       "(tagged PriceLevels); random adds, cancels and fills: two named classes of containers",
       kSourceAlloctrace,
       {{"orders", 50000, "", "random steps (add 50%, cancel 30%, fill 20%)"},
        {"levels", 200, "", "distinct prices"}},
       true,
       &RunOrderBook<Alloc>},
  };
  return *kDefs;
}

// The multi-threaded workloads; Alloc must meet thread_workloads.h's
// contract (copies used concurrently from several threads).
template <template <typename> class Alloc>
const std::vector<WorkloadDef>& MultiThreadedWorkloadDefs() {
  using table_internal::WithBlockSizes;
  static const std::vector<WorkloadDef>* const kDefs = new std::vector<WorkloadDef>{
      {"producer_consumer",
       "producer threads build messages (vectors of random size) with one shared allocator "
       "and pass them through a bounded queue to consumer threads, which free them",
       kSourceXmalloc,
       WithBlockSizes({{"producers", 2, "100", "producer threads"},
                       {"consumers", 2, "100", "consumer threads"},
                       {"messages", 10000, "", "messages per producer"},
                       {"queue_capacity", 256, "", "most messages waiting in the queue"}},
                      16, 512),
       true, &RunProducerConsumer<Alloc>, true},
      {"larson",
       "lineages of threads, each thread inheriting its predecessor's live blocks (global "
       "heap), replacing random ones, and leaving them to its successor",
       kSourceLarson,
       WithBlockSizes({{"threads", 4, "the number of cores", "concurrent lineages of threads"},
                       {"generations", 4, "", "threads per lineage, one after another"},
                       {"operations", 2500, "", "blocks replaced per thread"},
                       {"slots", 500, "5000 (chunks per thread)", "live blocks per lineage"}},
                      8, 1000, "8", "1000"),
       true, &RunLarson<Alloc>, true},
      {"migration",
       "threads swap newly allocated blocks into random slots of one shared array and free "
       "the blocks they take out, most made by other threads; one shared allocator",
       kSourceMstress,
       WithBlockSizes({{"threads", 4, "", "threads"},
                       {"operations", 5000, "", "blocks swapped in per thread"},
                       {"slots", 1000, "", "slots of the shared array"}},
                      16, 256),
       true, &RunMigration<Alloc>, true},
      {"thread_map_churn",
       "threads each insert and erase random keys in a std::map<int, int> of their own; "
       "nothing crosses threads",
       kSourceGlibcThread,
       {{"threads", 4, "", "threads, each with its own map"},
        {"operations", 10000, "", "random inserts or erases per thread"},
        {"keys", 2000, "", "keys are drawn from [0, keys)"}},
       true,
       &RunThreadMapChurn<Alloc>,
       true},
  };
  return *kDefs;
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_TABLE_H_
