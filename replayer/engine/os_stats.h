// Readings from the operating system for one process: resident memory,
// its high-water mark, page faults, and a description of the machine.
// Linux only (/proc and getrusage).
//
// Thread-safety: readings of the calling process (some of its calling thread,
// as named); an RssReader is used by one thread at a time.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_OS_STATS_H_
#define ALLOCTRACE_REPLAYER_ENGINE_OS_STATS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "alloctrace/base/scoped_fd.h"

namespace alloctrace {

// Reads the current resident set size from /proc/self/statm, keeping the
// file open so each reading is one pread (a few microseconds).
class RssReader {
 public:
  RssReader();
  RssReader(const RssReader&) = delete;
  RssReader& operator=(const RssReader&) = delete;
  int64_t ResidentBytes() const;  // -1 if /proc is unavailable

 private:
  ScopedFd fd_;
  int64_t page_size_;
};

// Maps in, before a measurement, the pages a forked child has not mapped
// yet: the program's and libraries' code and data, which Linux faults in
// lazily after fork, so their first touch is not charged to the allocator
// under test, neither as time nor as RSS. Uses MADV_POPULATE_READ/WRITE
// (Linux 5.14); a no-op where the kernel lacks them. Returns the number of
// mappings populated. `memfds` false leaves out the anonymous files a
// parent shares (the program, its schedule): a windowed run reads a small
// part of them, which it populates itself (base/shared_arrays.h:
// PopulateRange), where
// populating all of a 10 M-op trace's cost more than replaying a window.
int PrefaultSharedMappings(bool memfds = true);

// Reads every resident page of this process's private writable memory
// (its heap, the allocator's mappings, the replay's pointer table), a
// cache line at a time, in the order /proc/self/maps lists them, up to
// `max_bytes`; pages not resident are left alone (mincore), so the walk
// maps in nothing, and regions over 64 GiB of address space (a sanitizer's
// shadow) are passed over. Allocates nothing. Returns the bytes read. A served
// window (window_server.h) starts with it: between its turns the other
// contenders' replays evicted its heap from the caches, where a whole
// run's stays.
uint64_t WarmPrivateMemory(uint64_t max_bytes);

// Asks whichever malloc serves this process (glibc, tcmalloc, jemalloc,
// mimalloc: found by their C entry points) to return its free memory to the
// system, so a run starts without resident memory left over from decoding
// the trace.
void ReleaseFreeMallocMemory();

// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS, so a child
// process measures its own peak rather than its parent's. Returns false if
// the kernel does not allow it.
bool ResetPeakRss();
// VmHWM from /proc/self/status, in bytes; -1 if unavailable.
int64_t PeakRssBytes();

// The CPUs this process may run on (its affinity mask; the online CPUs if
// that cannot be read), at least 1.
uint32_t UsableCores();

struct FaultCounts {
  int64_t minor = 0;
  int64_t major = 0;
};
FaultCounts ReadFaultCounts();  // getrusage(RUSAGE_SELF)

// The calling thread's page faults and context switches
// (getrusage(RUSAGE_THREAD)).
struct UsageCounts {
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
  int64_t involuntary_switches = 0;  // preempted by the scheduler
  int64_t voluntary_switches = 0;    // blocked (I/O, sleep)
};
UsageCounts ReadUsageCounts();

// How many times the calling thread moved between CPUs so far
// (se.nr_migrations in /proc/thread-self/sched); 0 where the kernel does
// not say.
int64_t ReadMigrations();

// "Intel(R) Xeon(R) Processor @ 2.50GHz, 2 cores, Linux 6.1 x86_64, glibc 2.36"
std::string DescribeMachine();

// Where the dynamic loader would find a preload library (a file name such as
// "libjemalloc.so.2") in the system's library directories (the list's,
// allocators/preloaded_mallocs.h); "" if nowhere.
std::string FindPreloadLibrary(const std::string& name);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_OS_STATS_H_
