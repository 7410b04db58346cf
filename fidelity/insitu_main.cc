// insitu: runs one built-in workload once, in this process, with the chosen
// allocator as its containers' allocator, and prints how long the run took.
// The workload is the same template `record` instantiates with
// TraceAllocator (tracer/workloads/workload_table.h), so the program timed
// here is the program whose trace the replayer replays.
//
//   insitu --workload=simple_map --allocator=slab/st/stack --param=entries=100000
//   {"workload": "simple_map", "allocator": "slab/st/stack", "replay_policy": "slab/st/stack",
//    "seconds": 0.012345, "cpu_seconds": 0.012001, "malloc": "/lib/.../libc.so.6"}
// seconds is the run's wall time, cpu_seconds this thread's CPU time.
//   insitu --list
//
// --allocator=std is std::allocator: operator new, so whichever malloc the
// process was started with (the fidelity check starts it with LD_PRELOAD for
// tcmalloc, jemalloc and mimalloc; "malloc" in the output names the library
// that serves malloc, so the caller can see that the preload took effect).
// The pool allocators are the pool catalog's types (pool/catalog.h), named
// as the replayer names them; they hold one pool per container
// (HoldingStack); on workloads whose allocations come from the global
// heap (shared_ptr(new T), make_shared: every container of the trace is arena
// 0) they hold one process-wide pool (HoldingSingleton), which is what the
// replay of that one arena does, and a per-object pool would be meaningless.
// "replay_policy" is the replayer's name for the allocator this run used.
//
// The multi-threaded workloads (`mt_workload` in --list;
// tracer/workloads/thread_workloads.h) share allocator instances between
// threads, so they run only with the thread-safe allocators (`mt_allocator`
// in --list: std, which is whatever malloc is loaded, slab/mt and
// boost_fast_pool); any other is refused as a usage error. "seconds" is then
// the wall time of the whole run, and "cpu_seconds" the process's CPU time
// (every thread's: the calling thread only starts and joins them).
//
// Exit status: 0 and one JSON line on stdout; 2 and a message on stderr for
// bad flags or parameters.
#include <dlfcn.h>

#include <time.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/cli_util.h"
#include "boost/pool/pool_alloc.hpp"
#include "alloctrace/pool/policies.h"
#include "alloctrace/pool/catalog.h"
#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/pool/storage_policies.h"
#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_table.h"

ABSL_FLAG(std::string, workload, "", "the built-in workload to run (see --list)");
ABSL_FLAG(std::string, allocator, "std", "the containers' allocator (see --list)");
ABSL_FLAG(std::vector<std::string>, param, {},
          "workload parameter overrides, name=value, comma-separated (given twice, the "
          "last one counts)");
ABSL_FLAG(uint64_t, seed, 1, "random seed of the workload (as record's --seed)");
ABSL_FLAG(bool, list, false, "list the workloads and allocators, then exit");

namespace alloctrace::fidelity {
namespace {

namespace ap = pool;
using workloads::RunFn;
using workloads::WorkloadDef;
using workloads::MultiThreadedWorkloadDefs;
using workloads::WorkloadDefs;

template <typename T>
using StdAlloc = std::allocator<T>;
template <typename T>
using BoostFastPool = boost::fast_pool_allocator<T>;

// A pool catalog type (pool/catalog.h) as the containers' allocator
// template.
template <typename CatalogType>
struct Rebound {
  template <typename T>
  using Alloc = typename std::allocator_traits<CatalogType>::template rebind_alloc<T>;
};

// One allocator the workloads can be run with: the run function of
// workload `index` in the table for per-container and for global-heap use,
// and the replayer's names for each.
struct AllocatorChoice {
  std::string name;
  std::string replay_stack;   // replay policy when each container has its own pool
  std::string replay_single;  // replay policy for the one global-heap pool
  const std::vector<WorkloadDef>* stack_defs;
  const std::vector<WorkloadDef>* single_defs;
  // The multi-threaded workloads with this allocator; null if it is not
  // thread-safe.
  const std::vector<WorkloadDef>* mt_stack_defs = nullptr;
  const std::vector<WorkloadDef>* mt_single_defs = nullptr;
};

// A pool policy of the catalog in its two holdings; named, as the replayer
// names it, by the per-container one.
template <typename StackType, typename SingleType>
AllocatorChoice CatalogChoice() {
  const std::string stack = ap::EntryOf<StackType>().name;
  return {stack, stack, ap::EntryOf<SingleType>().name,
          &WorkloadDefs<Rebound<StackType>::template Alloc>(),
          &WorkloadDefs<Rebound<SingleType>::template Alloc>()};
}

// A thread-safe pool of the catalog: the single-threaded workloads and the
// multi-threaded ones.
template <typename StackType, typename SingleType>
AllocatorChoice ThreadSafeCatalogChoice() {
  AllocatorChoice choice = CatalogChoice<StackType, SingleType>();
  choice.mt_stack_defs = &MultiThreadedWorkloadDefs<Rebound<StackType>::template Alloc>();
  choice.mt_single_defs = &MultiThreadedWorkloadDefs<Rebound<SingleType>::template Alloc>();
  return choice;
}

template <typename Storage, typename Growth>
AllocatorChoice ArticleChoice() {
  return CatalogChoice<
      ap::PoolAllocator<std::byte, Storage, Growth, ap::SingleThreaded, ap::HoldingStack, true>,
      ap::PoolAllocator<std::byte, Storage, Growth, ap::SingleThreaded, ap::HoldingSingleton,
                        true>>();
}

const std::vector<AllocatorChoice>& Choices() {
  static const std::vector<AllocatorChoice>* const kChoices = new std::vector<AllocatorChoice>{
      {"std", "malloc", "malloc", &WorkloadDefs<StdAlloc>(), &WorkloadDefs<StdAlloc>(),
       &MultiThreadedWorkloadDefs<StdAlloc>(), &MultiThreadedWorkloadDefs<StdAlloc>()},
      CatalogChoice<ap::SlabAllocator<std::byte, ap::SingleThreaded, ap::HoldingStack>,
                    ap::SlabAllocator<std::byte, ap::SingleThreaded, ap::HoldingSingleton>>(),
      ThreadSafeCatalogChoice<
          ap::SlabAllocator<std::byte, ap::MultiThreaded, ap::HoldingStack>,
          ap::SlabAllocator<std::byte, ap::MultiThreaded, ap::HoldingSingleton>>(),
      // boost::fast_pool_allocator's singleton pool takes a mutex by default.
      {"boost_fast_pool", "boost_fast_pool", "boost_fast_pool", &WorkloadDefs<BoostFastPool>(),
       &WorkloadDefs<BoostFastPool>(), &MultiThreadedWorkloadDefs<BoostFastPool>(),
       &MultiThreadedWorkloadDefs<BoostFastPool>()},
      ArticleChoice<ap::StorageSimple, ap::GrowthExponential>(),
      ArticleChoice<ap::StorageBoundary, ap::GrowthExponential>(),
      ArticleChoice<ap::StorageOrdered, ap::GrowthExponential>(),
      ArticleChoice<ap::StorageSimple, ap::GrowthLinear>(),
      ArticleChoice<ap::StorageBoundary, ap::GrowthLinear>(),
  };
  return *kChoices;
}

// Workloads that allocate from the global heap (arena 0), from a fresh
// default-constructed allocator each time (GlobalHeapAllocator): a pool
// held by that allocator object (HoldingStack) would die with it, so these
// run with one process-wide pool. records_local_pool and
// records_singleton_pool take only their pool chunks from the global heap,
// but a chunk from a dead stack pool crashes all the same; larson's blocks
// are all global-heap blocks, freed through other allocator objects.
bool UsesGlobalHeap(std::string_view workload) {
  return workload == "shared_ptr_new" || workload == "make_shared" ||
         workload == "records_shared_new" || workload == "records_make_shared" ||
         workload == "records_local_pool" || workload == "records_singleton_pool" ||
         workload == "larson";
}

std::string MallocProvider() {
  Dl_info info;
  void* (*m)(size_t) = &malloc;
  if (dladdr(reinterpret_cast<void*>(m), &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

// This thread's CPU time: on a shared machine it leaves out the time the
// run waited for a core, which wall time does not.
double ThreadCpuSeconds(clockid_t clock = CLOCK_THREAD_CPUTIME_ID) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string JsonString(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      o += ' ';
      continue;
    }
    o += c;
  }
  return o + "\"";
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "insitu: %s\n", message.c_str());
  return 2;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs one built-in workload in situ with a chosen allocator and prints its time.\n"
      "usage: insitu --workload=NAME [--allocator=NAME] [--param=name=value] [--seed=N]");
  std::vector<char*> args = ParseCommandLineOrExitUsage(argc, argv, "insitu");
  if (args.size() > 1) return UsageError(absl::StrCat("unexpected argument: ", args[1]));
  const std::vector<WorkloadDef>& names = WorkloadDefs<StdAlloc>();
  const std::vector<WorkloadDef>& mt_names = MultiThreadedWorkloadDefs<StdAlloc>();
  if (absl::GetFlag(FLAGS_list)) {
    for (const WorkloadDef& d : names) std::printf("workload %s\n", std::string(d.name).c_str());
    for (const WorkloadDef& d : mt_names) {
      std::printf("mt_workload %s\n", std::string(d.name).c_str());
    }
    for (const AllocatorChoice& c : Choices()) {
      std::printf("allocator %s (replay: %s, global heap: %s)\n", c.name.c_str(),
                  c.replay_stack.c_str(), c.replay_single.c_str());
    }
    for (const AllocatorChoice& c : Choices()) {
      if (c.mt_stack_defs != nullptr) std::printf("mt_allocator %s\n", c.name.c_str());
    }
    return 0;
  }
  const std::string workload = absl::GetFlag(FLAGS_workload);
  size_t index = names.size();
  bool multi_threaded = false;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].name == workload) index = i;
  }
  for (size_t i = 0; i < mt_names.size(); ++i) {
    if (mt_names[i].name == workload) index = i, multi_threaded = true;
  }
  if (index == names.size() && !multi_threaded) {
    std::vector<std::string> known;
    for (const WorkloadDef& d : names) known.emplace_back(d.name);
    for (const WorkloadDef& d : mt_names) known.emplace_back(d.name);
    return UsageError(absl::StrCat("--workload=", workload, ": no such workload; one of ",
                                   absl::StrJoin(known, ", ")));
  }
  const std::string allocator = absl::GetFlag(FLAGS_allocator);
  const AllocatorChoice* choice = nullptr;
  std::vector<std::string> known;
  for (const AllocatorChoice& c : Choices()) {
    known.push_back(c.name);
    // Article policies may be named by either holding.
    if (c.name == allocator || c.replay_stack == allocator || c.replay_single == allocator) {
      choice = &c;
    }
  }
  if (choice == nullptr) {
    return UsageError(absl::StrCat("--allocator=", allocator, ": no such allocator; one of ",
                                   absl::StrJoin(known, ", ")));
  }
  if (multi_threaded && choice->mt_stack_defs == nullptr) {
    std::vector<std::string> safe;
    for (const AllocatorChoice& c : Choices()) {
      if (c.mt_stack_defs != nullptr) safe.push_back(c.name);
    }
    return UsageError(absl::StrCat("--allocator=", allocator, " is not thread-safe, and ",
                                   workload, " shares allocators between threads; one of ",
                                   absl::StrJoin(safe, ", ")));
  }
  const bool global = UsesGlobalHeap(workload);
  const std::vector<WorkloadDef>& defs =
      multi_threaded ? (global ? *choice->mt_single_defs : *choice->mt_stack_defs)
                     : (global ? *choice->single_defs : *choice->stack_defs);
  const WorkloadDef& def = defs[index];
  absl::StatusOr<workloads::WorkloadParams> params =
      workloads::ParseWorkloadParams(def.name, def.params, absl::GetFlag(FLAGS_param));
  if (!params.ok()) return UsageError(std::string(params.status().message()));

  using Clock = std::chrono::steady_clock;
  const clockid_t cpu_clock = multi_threaded ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
  const double cpu0 = ThreadCpuSeconds(cpu_clock);
  const Clock::time_point t0 = Clock::now();
  def.run(*params, absl::GetFlag(FLAGS_seed));
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu_seconds = ThreadCpuSeconds(cpu_clock) - cpu0;

  std::printf(
      "{\"workload\": %s, \"allocator\": %s, \"replay_policy\": %s, \"params\": %s, "
      "\"seconds\": %.9f, \"cpu_seconds\": %.9f, \"malloc\": %s}\n",
      JsonString(workload).c_str(), JsonString(choice->name).c_str(),
      JsonString(global ? choice->replay_single : choice->replay_stack).c_str(),
      JsonString(params->ToString()).c_str(), seconds, cpu_seconds, JsonString(MallocProvider()).c_str());
  return 0;
}

}  // namespace
}  // namespace alloctrace::fidelity

int main(int argc, char** argv) { return alloctrace::fidelity::Main(argc, argv); }
