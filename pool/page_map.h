// Page-granular memory straight from the kernel (mmap/munmap), for allocators
// that grow by large slabs and want them page-aligned, header-free, and
// resident only where touched.
//
// Thread-safety: all functions are thread-safe.
// Failure: MapPages returns nullptr when the kernel refuses the mapping.
#ifndef ALLOCTRACE_POOL_PAGE_MAP_H_
#define ALLOCTRACE_POOL_PAGE_MAP_H_

#include <cstddef>

namespace alloctrace::pool {

inline constexpr size_t kPageSize = 4096;

// Maps `bytes` (a multiple of kPageSize) of zeroed, read-write, private
// memory aligned to kPageSize; nullptr if the system is out of memory.
void* MapPages(size_t bytes);

// Unmaps a region returned by MapPages, with the same size.
void UnmapPages(void* region, size_t bytes);

// Bytes currently mapped through MapPages by the whole process. Tests use it
// to prove that an allocator gave back everything it mapped.
size_t MappedPageBytes();

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_PAGE_MAP_H_
