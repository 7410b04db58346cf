#include "alloctrace/base/shared_arrays.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

constexpr uint64_t kKind = 42;

TEST(SharedArraysTest, WhatIsWrittenIsMappedBack) {
  const std::vector<uint32_t> small = {1, 2, 3};  // 12 bytes: padded to 16
  const std::vector<uint64_t> wide = {10, 20};
  const std::vector<char> none;
  absl::StatusOr<int> fd = WriteSharedArrays(
      "test", "test arrays", kKind, {7, 8},
      {SharedSection::Of(small.data(), small.size()), SharedSection::Of(none.data(), 0),
       SharedSection::Of(wide.data(), wide.size())});
  ASSERT_TRUE(fd.ok()) << fd.status();
  absl::StatusOr<MappedArrays> m = MapSharedArrays(*fd, "test arrays", kKind);
  close(*fd);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->Has(2, {sizeof(uint32_t), sizeof(char), sizeof(uint64_t)}));
  EXPECT_FALSE(m->Has(2, {sizeof(uint64_t), sizeof(char), sizeof(uint64_t)}));
  EXPECT_FALSE(m->Has(1, {sizeof(uint32_t), sizeof(char), sizeof(uint64_t)}));
  EXPECT_EQ(m->scalars, (std::vector<uint64_t>{7, 8}));
  ASSERT_EQ(m->sections[0].count, 3u);
  EXPECT_EQ(m->As<uint32_t>(0)[2], 3u);
  EXPECT_EQ(m->sections[1].count, 0u);
  ASSERT_EQ(m->sections[2].count, 2u);
  EXPECT_EQ(m->As<uint64_t>(2)[1], 20u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m->sections[2].data) % 8, 0u);  // aligned
}

// The resident bytes of the mapping holding `p`, from /proc/self/smaps.
int64_t ResidentBytesOfMapping(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &start, &end) == 2 && line.find(':') > 16) {
      inside = a >= start && a < end;
    } else if (inside && absl::StartsWith(line, "Rss:")) {
      return 1024 * std::strtoll(line.c_str() + 4, nullptr, 10);
    }
  }
  return -1;
}

TEST(SharedArraysTest, AMappingWithoutPopulatingMapsInOnlyWhatIsAskedFor) {
  const std::vector<uint64_t> big(1 << 19, 5);  // 4 MiB
  const std::vector<uint64_t> small = {1, 2};
  absl::StatusOr<int> fd = WriteSharedArrays(
      "test", "test arrays", kKind, {},
      {SharedSection::Of(small.data(), small.size()), SharedSection::Of(big.data(), big.size())});
  ASSERT_TRUE(fd.ok()) << fd.status();
  absl::StatusOr<MappedArrays> lazy = MapSharedArrays(*fd, "test arrays", kKind, false);
  absl::StatusOr<MappedArrays> whole = MapSharedArrays(*fd, "test arrays", kKind);
  close(*fd);
  ASSERT_TRUE(lazy.ok()) << lazy.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  const int64_t bytes = static_cast<int64_t>(big.size() * sizeof(uint64_t));
  EXPECT_GE(ResidentBytesOfMapping(whole->sections[1].data), bytes);
  // Reading the header and the table faults in a few pages around them.
  EXPECT_LT(ResidentBytesOfMapping(lazy->sections[1].data), bytes / 4);
  lazy->Populate(0);
  EXPECT_LT(ResidentBytesOfMapping(lazy->sections[1].data), bytes / 4);
  lazy->Populate(1);
  EXPECT_GE(ResidentBytesOfMapping(lazy->sections[1].data), bytes);
  EXPECT_EQ(lazy->As<uint64_t>(1)[big.size() - 1], 5u);
  EXPECT_EQ(lazy->As<uint64_t>(0)[1], 2u);
}

TEST(SharedArraysTest, AnotherKindOrAWrongFdIsAClearError) {
  const std::vector<uint64_t> wide = {1};
  absl::StatusOr<int> fd = WriteSharedArrays("test", "test arrays", kKind, {},
                                             {SharedSection::Of(wide.data(), wide.size())});
  ASSERT_TRUE(fd.ok());
  absl::StatusOr<MappedArrays> other = MapSharedArrays(*fd, "thread schedule", kKind + 1);
  EXPECT_EQ(other.status().message(), "shared thread schedule is malformed");
  close(*fd);
  const int empty = static_cast<int>(syscall(SYS_memfd_create, "empty", 0));
  EXPECT_EQ(MapSharedArrays(empty, "replay program", kKind).status().message(),
            "no shared replay program on the given fd");
  close(empty);
}

TEST(SharedArraysTest, ACorruptTableIsMalformedNotARead) {
  const std::vector<uint64_t> wide = {1, 2, 3};
  absl::StatusOr<int> fd = WriteSharedArrays("test", "test arrays", kKind, {5},
                                             {SharedSection::Of(wide.data(), wide.size())});
  ASSERT_TRUE(fd.ok());
  // The section's count, after the 32-byte header and one scalar: claim more.
  const uint64_t huge = uint64_t{1} << 40;
  ASSERT_EQ(pwrite(*fd, &huge, sizeof huge, 32 + 8 + 8), static_cast<ssize_t>(sizeof huge));
  EXPECT_EQ(MapSharedArrays(*fd, "test arrays", kKind).status().message(),
            "shared test arrays is malformed");
  // Truncated: the file no longer holds its sections.
  ASSERT_EQ(ftruncate(*fd, 40), 0);
  EXPECT_FALSE(MapSharedArrays(*fd, "test arrays", kKind).ok());
  close(*fd);
}

}  // namespace
}  // namespace alloctrace
