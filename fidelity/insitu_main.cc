// insitu: runs one built-in workload once, in this process, through
// TraceAllocator with the policy ALLOCTRACE_POLICY names, and prints how long
// the run took.
//
// The workload is the very function `record` runs (the registry's
// run_traced, tracer/workloads/workloads.h): TraceAllocator in every
// container. With ALLOCTRACE_POLICY set, TraceAllocator's run-time switch
// (tracer/policy_switch.h) serves it from that catalog policy and records
// nothing, exactly as it serves a user's instrumented program under
// `replayer --in_situ` or `--confirm`. So the program timed here is the
// program whose trace the replayer replays, under the mechanism a user's
// program runs under; this file names no allocator of its own.
//
//   ALLOCTRACE_POLICY=slab/st/stack insitu --workload=simple_map --param=entries=100000
//   {"workload": "simple_map", "policy": "slab/st/stack", "replay_policy": "slab/st/stack",
//    "params": "entries=100000", "seconds": 0.012345, "cpu_seconds": 0.012001,
//    "malloc": "/lib/.../libc.so.6"}
//   insitu --list
//
// ALLOCTRACE_POLICY: `std` (also when unset or empty: insitu never records)
// is ::operator new, so whichever malloc the process was started with (the
// fidelity check starts it with LD_PRELOAD for tcmalloc, jemalloc and
// mimalloc; "malloc" in the output names the library that serves malloc, so
// the caller can see that the preload took effect), and its replay policy is
// "malloc". Any other name is a policy of the catalog (pool/catalog.h), held
// as the switch holds it: a `stack` policy gives each container (each
// default-constructed allocator) a pool of its own, a `single` one the
// process-wide pool; what a workload takes from the global heap (arena 0:
// shared_ptr(new T), make_shared, larson's blocks) is one pool that lives as
// long as the process, as the replay of arena 0 has it. "policy" is the name
// the switch resolved.
//
// The multi-threaded workloads (`mt_workload` in --list) share allocator
// instances between threads, so they run only under the thread-safe policies
// (`mt_allocator` in --list: std, and the catalog's thread_safe entries); any
// other is refused as a usage error. "seconds" is then the wall time of the
// whole run, and "cpu_seconds" the process's CPU time (every thread's: the
// calling thread only starts and joins them); otherwise "cpu_seconds" is
// this thread's.
//
// Exit status: 0 and one JSON line on stdout; 2 and a message on stderr for
// bad flags, parameters or policy.
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/type_list.h"
#include "alloctrace/pool/catalog.h"
#include "alloctrace/tracer/policy_switch.h"
#include "alloctrace/tracer/workloads/workloads.h"

ABSL_FLAG(std::string, workload, "", "the built-in workload to run (see --list)");
ABSL_FLAG(std::vector<std::string>, param, {},
          "workload parameter overrides, name=value, comma-separated (given once)");
ABSL_FLAG(uint64_t, seed, 1, "random seed of the workload (as record's --seed)");
ABSL_FLAG(bool, list, false, "list the workloads and policies, then exit");

namespace alloctrace::fidelity {
namespace {

using workloads::AllWorkloads;
using workloads::WorkloadInfo;

template <typename... A>
std::vector<pool::PolicyEntry> EntriesOf(TypeList<A...>) {
  return {pool::EntryOf<A>()...};
}

// Whether the switch's policy `name` may serve allocators shared between
// threads: std (operator new) is; a catalog policy as the catalog says.
bool ThreadSafe(const std::string& name) {
  if (name == policy_switch::kStdName) return true;
  static const std::vector<pool::PolicyEntry>* const kEntries =
      new std::vector<pool::PolicyEntry>(EntriesOf(pool::PoolCatalog{}));
  for (const pool::PolicyEntry& e : *kEntries) {
    if (e.name == name) return e.thread_safe;
  }
  return false;
}

std::string MallocProvider() {
  Dl_info info;
  void* (*m)(size_t) = &malloc;
  if (dladdr(reinterpret_cast<void*>(m), &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

// On a shared machine CPU time leaves out the time the run waited for a
// core, which wall time does not.
double CpuSeconds(clockid_t clock) {
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
      "runs one built-in workload in situ under the policy ALLOCTRACE_POLICY names (std "
      "when unset) and prints its time.\n"
      "usage: ALLOCTRACE_POLICY=NAME insitu --workload=NAME [--param=name=value] [--seed=N]");
  std::vector<char*> args = ParseCommandLineOrExitUsage(argc, argv, "insitu");
  if (args.size() > 1) return UsageError(absl::StrCat("unexpected argument: ", args[1]));
  if (absl::GetFlag(FLAGS_list)) {
    for (const WorkloadInfo& w : AllWorkloads()) {
      std::printf("%s %s\n", w.multi_threaded ? "mt_workload" : "workload",
                  std::string(w.name).c_str());
    }
    for (const std::string& name : policy_switch::Names()) {
      std::printf("allocator %s\n", name.c_str());
    }
    for (const std::string& name : policy_switch::Names()) {
      if (ThreadSafe(name)) std::printf("mt_allocator %s\n", name.c_str());
    }
    return 0;
  }
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const WorkloadInfo* info = workloads::FindWorkload(workload);
  if (info == nullptr) {
    std::vector<std::string> known;
    for (const WorkloadInfo& w : AllWorkloads()) known.emplace_back(w.name);
    return UsageError(absl::StrCat("--workload=", workload, ": no such workload; one of ",
                                   absl::StrJoin(known, ", ")));
  }
  // The policy, checked here for a usage message (the switch itself would
  // exit 2 on an unknown name too); unset means std, never recording.
  const char* env = std::getenv(policy_switch::kEnvPolicy);
  std::string policy = env != nullptr ? env : "";
  if (policy.empty()) {
    policy = policy_switch::kStdName;
    setenv(policy_switch::kEnvPolicy, policy.c_str(), 1);
  }
  if (policy_switch::Find(policy) == nullptr) {
    return UsageError(absl::StrCat(policy_switch::kEnvPolicy, "=", policy,
                                   ": no such policy (see insitu --list)"));
  }
  if (info->multi_threaded && !ThreadSafe(policy)) {
    return UsageError(absl::StrCat(policy_switch::kEnvPolicy, "=", policy,
                                   " is not thread-safe, and ", workload,
                                   " shares allocators between threads; see the mt_allocator "
                                   "lines of insitu --list"));
  }
  absl::StatusOr<workloads::WorkloadParams> params = info->ParseParams(absl::GetFlag(FLAGS_param));
  if (!params.ok()) return UsageError(std::string(params.status().message()));
  // Resolved before the clock starts, as the first TraceAllocator of a
  // program would resolve it.
  policy_switch::Resolve();
  const policy_switch::Ops* ops = policy_switch::Active();
  if (ops == nullptr || policy != ops->name) {
    std::fprintf(stderr, "insitu: the switch did not take %s=%s\n", policy_switch::kEnvPolicy,
                 policy.c_str());
    return 1;
  }

  using Clock = std::chrono::steady_clock;
  const clockid_t cpu_clock =
      info->multi_threaded ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
  const double cpu0 = CpuSeconds(cpu_clock);
  const Clock::time_point t0 = Clock::now();
  info->run_traced(*params, absl::GetFlag(FLAGS_seed));
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu_seconds = CpuSeconds(cpu_clock) - cpu0;

  const std::string replay_policy = policy == policy_switch::kStdName ? "malloc" : policy;
  std::printf(
      "{\"workload\": %s, \"policy\": %s, \"replay_policy\": %s, \"params\": %s, "
      "\"multi_threaded\": %s, \"seconds\": %.9f, \"cpu_seconds\": %.9f, \"malloc\": %s}\n",
      JsonString(workload).c_str(), JsonString(ops->name).c_str(),
      JsonString(replay_policy).c_str(), JsonString(params->ToString()).c_str(),
      info->multi_threaded ? "true" : "false", seconds, cpu_seconds,
      JsonString(MallocProvider()).c_str());
  return 0;
}

}  // namespace
}  // namespace alloctrace::fidelity

int main(int argc, char** argv) { return alloctrace::fidelity::Main(argc, argv); }
