#include "alloctrace/pool/page_map.h"

#include <sys/mman.h>

#include <atomic>

#include "alloctrace/base/check.h"

namespace alloctrace::pool {
namespace {

std::atomic<size_t> mapped_bytes{0};

}  // namespace

void* MapPages(size_t bytes) {
  ALLOCTRACE_CHECK(bytes > 0 && bytes % kPageSize == 0,
                   "MapPages wants a positive multiple of kPageSize");
  void* region = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return nullptr;
  mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return region;
}

void UnmapPages(void* region, size_t bytes) {
  if (region == nullptr) return;
  ALLOCTRACE_CHECK(munmap(region, bytes) == 0, "munmap failed");
  mapped_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

size_t MappedPageBytes() { return mapped_bytes.load(std::memory_order_relaxed); }

}  // namespace alloctrace::pool
