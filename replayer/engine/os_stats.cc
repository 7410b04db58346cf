#include "alloctrace/replayer/engine/os_stats.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "alloctrace/replayer/engine/allocators/preloaded_mallocs.h"

namespace alloctrace {

RssReader::RssReader()
    : fd_(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC)), page_size_(sysconf(_SC_PAGESIZE)) {}

int64_t RssReader::ResidentBytes() const {
  if (!fd_.valid()) return -1;
  char buf[128];
  const ssize_t n = ::pread(fd_.get(), buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // "size resident shared text lib data dt", in pages.
  char* end = nullptr;
  std::strtoll(buf, &end, 10);
  const long long resident = std::strtoll(end, nullptr, 10);
  return static_cast<int64_t>(resident) * page_size_;
}

int PrefaultSharedMappings(bool memfds) {
#ifndef MADV_POPULATE_READ
  constexpr int kPopulateRead = 22;
  constexpr int kPopulateWrite = 23;
#else
  constexpr int kPopulateRead = MADV_POPULATE_READ;
  constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#endif
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int populated = 0;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode   path"
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    // File mappings only: code, read-only data, and the writable data of
    // the program and its libraries (written before the baseline, so their
    // copy-on-write faults happen here too).
    if (perms[0] != 'r' || line.find('/') == std::string::npos) continue;
    if (!memfds && line.find("/memfd:") != std::string::npos) continue;
    const int advice = perms[1] == 'w' ? kPopulateWrite : kPopulateRead;
    if (madvise(reinterpret_cast<void*>(start), end - start, advice) == 0) ++populated;
  }
  return populated;
}

// Not instrumented by AddressSanitizer: its check of a read looks up the
// read's shadow, and the shadow of its own shadow pages (which the walk
// reads too) lies in the protected gap; and the walk means to read
// memory ASan holds poisoned (free blocks, redzones), which is not a bug.
__attribute__((no_sanitize("address"))) uint64_t WarmPrivateMemory(uint64_t max_bytes) {
  const ScopedFd fd(open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return 0;
  static char text[1 << 16];             // /proc/self/maps, a chunk at a time
  static unsigned char resident[65536];  // mincore's answer for 256 MiB
  constexpr uintptr_t kPage = 4096, kLine = 64;
  constexpr uintptr_t kLargestRegion = uintptr_t{64} << 30;
  size_t have = 0;
  bool end_of_maps = false;
  uint64_t warmed = 0, sink = 0;
  while (warmed < max_bytes) {
    if (!end_of_maps && have < sizeof text) {
      const ssize_t n = read(fd.get(), text + have, sizeof text - have);
      if (n > 0) {
        have += static_cast<size_t>(n);
      } else if (n == 0 || errno != EINTR) {
        end_of_maps = true;
      }
    }
    char* nl = static_cast<char*>(std::memchr(text, '\n', have));
    if (nl == nullptr) {
      if (end_of_maps || have == sizeof text) break;
      continue;
    }
    *nl = '\0';
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    const bool parsed = std::sscanf(text, "%lx-%lx %4s", &start, &end, perms) == 3;
    const size_t used = static_cast<size_t>(nl - text) + 1;
    std::memmove(text, text + used, have - used);
    have -= used;
    // A region of terabytes (a sanitizer's shadow) would cost a million
    // mincore calls to scan.
    if (!parsed || std::strcmp(perms, "rw-p") != 0 || end - start > kLargestRegion) continue;
    for (uintptr_t at = start; at < end && warmed < max_bytes;) {
      const uintptr_t length = std::min<uintptr_t>(end - at, sizeof resident * kPage);
      if (mincore(reinterpret_cast<void*>(at), length, resident) != 0) break;
      for (uintptr_t page = 0; page < length / kPage && warmed < max_bytes; ++page) {
        if ((resident[page] & 1) == 0) continue;
        const auto* p = reinterpret_cast<const volatile unsigned char*>(at + page * kPage);
        for (uintptr_t line = 0; line < kPage; line += kLine) sink += p[line];
        warmed += kPage;
      }
      at += length;
    }
  }
  asm volatile("" : : "r"(sink));
  return warmed;
}

void ReleaseFreeMallocMemory() {
  malloc_trim(0);  // glibc (a no-op stub or absent effect under the others)
  if (auto* release =
          reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"))) {
    release();  // gperftools tcmalloc
  }
  if (auto* mallctl = reinterpret_cast<int (*)(const char*, void*, size_t*, void*, size_t)>(
          dlsym(RTLD_DEFAULT, "mallctl"))) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // jemalloc: all arenas
  }
  if (auto* collect = reinterpret_cast<void (*)(bool)>(dlsym(RTLD_DEFAULT, "mi_collect"))) {
    collect(true);  // mimalloc
  }
}

bool ResetPeakRss() {
  const ScopedFd fd(::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC));
  return fd.valid() && ::write(fd.get(), "5", 1) == 1;
}

int64_t PeakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return static_cast<int64_t>(std::strtoll(line.c_str() + 6, nullptr, 10)) * 1024;
    }
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

FaultCounts ReadFaultCounts() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return FaultCounts{ru.ru_minflt, ru.ru_majflt};
}

UsageCounts ReadUsageCounts() {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return UsageCounts{ru.ru_minflt, ru.ru_majflt, ru.ru_nivcsw, ru.ru_nvcsw};
}

int64_t ReadMigrations() {
  const ScopedFd fd(::open("/proc/thread-self/sched", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return 0;
  char buf[8192];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* at = std::strstr(buf, "se.nr_migrations");
  if (at == nullptr) return 0;
  at = std::strchr(at, ':');
  return at == nullptr ? 0 : std::strtoll(at + 1, nullptr, 10);
}

uint32_t UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<uint32_t>(CPU_COUNT(&set));
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<uint32_t>(online) : 1;
}

std::string DescribeMachine() {
  std::string cpu = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos)
        cpu = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
      break;
    }
  }
  struct utsname u;
  std::string os = "unknown OS";
  if (uname(&u) == 0) os = absl::StrCat(u.sysname, " ", u.release, " ", u.machine);
  return absl::StrCat(cpu, ", ", sysconf(_SC_NPROCESSORS_ONLN), " cores, ", os, ", glibc ",
                      gnu_get_libc_version());
}

std::string FindPreloadLibrary(const std::string& name) {
  using allocators::kMultiarchPlaceholder;
  using allocators::kMultiarchTriplet;
  for (std::string_view dir : allocators::kPreloadLibraryDirs) {
    std::string path(dir);
    if (const size_t at = path.find(kMultiarchPlaceholder); at != std::string::npos) {
      if (kMultiarchTriplet.empty()) continue;
      path.replace(at, kMultiarchPlaceholder.size(), kMultiarchTriplet);
    }
    absl::StrAppend(&path, "/", name);
    if (access(path.c_str(), R_OK) == 0) return path;
  }
  return "";
}

}  // namespace alloctrace
