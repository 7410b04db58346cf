// SharedArrays: plain-data arrays written once into an anonymous in-memory
// file (memfd) that a re-executed child inherits and maps read-only, so the
// child reads what the parent decoded without decoding or allocating it
// again. The one layout every such file has:
//
//   header   magic "alloctSA", the kind (a tag the caller chooses), the
//            number of scalars and of sections
//   scalars  uint64 each
//   table    per section: element size, element count
//   data     each section's bytes, each starting 8-byte aligned
//
// MapSharedArrays checks the kind and that the sections fill the file
// exactly; the reader checks the shape it expects (MappedArrays::Has): a
// wrong fd or a corrupt file is an error, never a read out of bounds.
//
// Thread-safety: functions of their arguments; a mapping is read-only and
// lives as long as the process.
#ifndef ALLOCTRACE_BASE_SHARED_ARRAYS_H_
#define ALLOCTRACE_BASE_SHARED_ARRAYS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace alloctrace {

// One array to share: `count` elements of `element_size` bytes at `data`.
struct SharedSection {
  const void* data = nullptr;
  size_t element_size = 0;
  size_t count = 0;

  template <typename T>
  static SharedSection Of(const T* data, size_t count) {
    return SharedSection{data, sizeof(T), count};
  }
};

// What a mapping gives back: the scalars, and each section's start and
// count (in the order they were written).
struct MappedArrays {
  std::vector<uint64_t> scalars;
  struct Section {
    const void* data = nullptr;
    size_t element_size = 0;
    size_t count = 0;
  };
  std::vector<Section> sections;

  // Whether there are `num_scalars` scalars and sections of these element
  // sizes, in this order.
  bool Has(size_t num_scalars, const std::vector<size_t>& element_sizes) const;

  template <typename T>
  const T* As(size_t i) const {
    return static_cast<const T*>(sections[i].data);
  }
  // Maps in section i's pages now (MADV_POPULATE_READ), where the mapping
  // was made without populating it: what a run reads in its timed stretch
  // must not fault there.
  void Populate(size_t i) const;
};

// Writes a memfd (not close-on-exec: the child inherits it) named `name`.
// InternalError naming the failed call ("cannot share the replay program:
// write: ...", with `what` as the thing shared); the caller closes the fd.
absl::StatusOr<int> WriteSharedArrays(const char* name, const std::string& what, uint64_t kind,
                                      const std::vector<uint64_t>& scalars,
                                      const std::vector<SharedSection>& sections);

// Maps in the pages of [data, data + bytes) for reading now
// (MADV_POPULATE_READ, Linux 5.14; a no-op where the kernel lacks it).
void PopulateRange(const void* data, size_t bytes);

// Maps `fd` (from WriteSharedArrays) and checks it holds `kind`, its
// sections filling the file exactly. InvalidArgument naming `what` ("no
// shared thread schedule on the given fd", "shared thread schedule is
// malformed") otherwise; Internal if mmap fails. Every page is mapped in at
// once (MAP_POPULATE) unless `populate` is false: a run that reads a small
// part of a large file (a sampled window of a long trace's program) maps in
// only that part (MappedArrays::Populate, or a range of its own), rather
// than paying for the whole file, and for unmapping it, in every child.
absl::StatusOr<MappedArrays> MapSharedArrays(int fd, const std::string& what, uint64_t kind,
                                             bool populate = true);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_SHARED_ARRAYS_H_
