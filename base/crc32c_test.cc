#include "alloctrace/base/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using crc32c_internal::ExtendHardware;
using crc32c_internal::ExtendPortable;
using crc32c_internal::HardwareAvailable;

// Published check values (RFC 3720, appendix B.4, and the CRC catalogue's
// "check" of CRC-32C).
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(ExtendPortable(0, "123456789", 9), 0xE3069283u);
  if (HardwareAvailable()) {
    EXPECT_EQ(ExtendHardware(0, "123456789", 9), 0xE3069283u);
  }
}

// Both paths, every length 0..300, every start 0..7 bytes past an 8-byte
// boundary (the hardware path steps to one first), random bytes.
TEST(Crc32cTest, HardwareAndPortableAgree) {
  if (!HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this processor";
  std::mt19937_64 rng(42);
  std::vector<uint64_t> words(320 / 8 + 2);
  for (uint64_t& w : words) w = rng();
  const auto* base = reinterpret_cast<const uint8_t*>(words.data());
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t size = 0; size <= 300; ++size) {
      const uint8_t* p = base + offset;
      const uint32_t seed = static_cast<uint32_t>(rng());
      ASSERT_EQ(ExtendHardware(seed, p, size), ExtendPortable(seed, p, size))
          << "offset " << offset << ", size " << size;
      ASSERT_EQ(Crc32c(p, size), ExtendPortable(0, p, size));
    }
  }
}

// Extending by the second part gives the CRC of the whole, split anywhere.
TEST(Crc32cTest, ExtendIsConcatenation) {
  std::mt19937_64 rng(7);
  std::string bytes(257, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  const uint32_t whole = Crc32c(bytes);
  for (size_t split = 0; split <= bytes.size(); ++split) {
    const uint32_t head = Crc32c(bytes.data(), split);
    ASSERT_EQ(ExtendCrc32c(head, bytes.data() + split, bytes.size() - split), whole) << split;
    ASSERT_EQ(ExtendPortable(head, bytes.data() + split, bytes.size() - split), whole) << split;
  }
}

// Every single changed byte (and every single flipped bit) changes the CRC.
TEST(Crc32cTest, EveryChangedByteIsSeen) {
  std::mt19937_64 rng(3);
  std::string bytes(100, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  const uint32_t good = Crc32c(bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int x = 1; x < 256; ++x) {
      std::string changed = bytes;
      changed[i] = static_cast<char>(changed[i] ^ x);
      ASSERT_NE(Crc32c(changed), good) << "byte " << i << " ^ " << x;
    }
  }
}

}  // namespace
}  // namespace alloctrace
