#include "alloctrace/base/shared_arrays.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"
#include "alloctrace/base/scoped_fd.h"

namespace alloctrace {
namespace {

constexpr uint64_t kMagic = 0x415374636f6c6c61;  // "alloctSA", little-endian

struct Header {
  uint64_t magic;
  uint64_t kind;
  uint64_t num_scalars;
  uint64_t num_sections;
};

size_t Padded(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

}  // namespace

bool MappedArrays::Has(size_t num_scalars, const std::vector<size_t>& element_sizes) const {
  if (scalars.size() != num_scalars || sections.size() != element_sizes.size()) return false;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].element_size != element_sizes[i]) return false;
  }
  return true;
}

absl::StatusOr<int> WriteSharedArrays(const char* name, const std::string& what, uint64_t kind,
                                      const std::vector<uint64_t>& scalars,
                                      const std::vector<SharedSection>& sections) {
  auto failed = [&](const char* call, int error) {
    return absl::InternalError(
        absl::StrCat("cannot share the ", what, ": ", call, ": ", std::strerror(error)));
  };
  // Not close-on-exec: the re-executed child maps it.
  ScopedFd fd(static_cast<int>(syscall(SYS_memfd_create, name, 0)));
  if (!fd.valid()) return failed("memfd_create", errno);
  const Header h{kMagic, kind, scalars.size(), sections.size()};
  std::vector<uint64_t> table;
  for (const SharedSection& s : sections) {
    table.push_back(s.element_size);
    table.push_back(s.count);
  }
  static const char kZeros[8] = {};
  bool ok = WriteAll(fd.get(), &h, sizeof h) == 0 &&
            WriteAll(fd.get(), scalars.data(), scalars.size() * sizeof(uint64_t)) == 0 &&
            WriteAll(fd.get(), table.data(), table.size() * sizeof(uint64_t)) == 0;
  for (const SharedSection& s : sections) {
    const size_t bytes = s.element_size * s.count;
    ok = ok && WriteAll(fd.get(), s.data, bytes) == 0 &&
         WriteAll(fd.get(), kZeros, Padded(bytes) - bytes) == 0;
  }
  if (!ok) return failed("write", errno);  // errno read before fd closes
  return fd.Release();
}

void PopulateRange(const void* data, size_t bytes) {
#ifndef MADV_POPULATE_READ
  constexpr int kPopulateRead = 22;  // Linux 5.14; older kernels refuse it (EINVAL)
#else
  constexpr int kPopulateRead = MADV_POPULATE_READ;
#endif
  if (bytes == 0) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(data) + bytes + page - 1) & ~(page - 1);
  madvise(reinterpret_cast<void*>(from), to - from, kPopulateRead);
}

void MappedArrays::Populate(size_t i) const {
  PopulateRange(sections[i].data, sections[i].element_size * sections[i].count);
}

absl::StatusOr<MappedArrays> MapSharedArrays(int fd, const std::string& what, uint64_t kind,
                                             bool populate) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Header))) {
    return absl::InvalidArgumentError(absl::StrCat("no shared ", what, " on the given fd"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  if (m == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap: ", std::strerror(errno)));
  const char* base = static_cast<const char*>(m);
  const auto* h = reinterpret_cast<const Header*>(base);
  const absl::Status malformed =
      absl::InvalidArgumentError(absl::StrCat("shared ", what, " is malformed"));
  const size_t words = size / sizeof(uint64_t);
  if (h->magic != kMagic || h->kind != kind || h->num_scalars > words ||
      h->num_sections > words / 2 ||
      sizeof *h + (h->num_scalars + 2 * h->num_sections) * sizeof(uint64_t) > size) {
    return malformed;
  }
  const uint64_t* scalars = reinterpret_cast<const uint64_t*>(base + sizeof *h);
  const uint64_t* table = scalars + h->num_scalars;
  MappedArrays out;
  out.scalars.assign(scalars, scalars + h->num_scalars);
  size_t offset = sizeof *h + (h->num_scalars + 2 * h->num_sections) * sizeof(uint64_t);
  for (uint64_t i = 0; i < h->num_sections; ++i) {
    const uint64_t element_size = table[2 * i], count = table[2 * i + 1];
    if (element_size == 0 || element_size > size || count > size / element_size ||
        Padded(element_size * count) > size - offset) {
      return malformed;
    }
    out.sections.push_back({base + offset, element_size, count});
    offset += Padded(element_size * count);
  }
  if (offset != size) return malformed;
  return out;
}

}  // namespace alloctrace
