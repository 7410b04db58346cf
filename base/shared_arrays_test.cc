#include "alloctrace/base/shared_arrays.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
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
