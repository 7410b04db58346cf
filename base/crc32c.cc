#include "alloctrace/base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace alloctrace {
namespace crc32c_internal {
namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78;

// Slicing by 8: kTable[0][b] is the CRC of byte b; kTable[k][b] that of
// byte b followed by k zero bytes. Eight bytes then take eight lookups,
// one per byte, that do not depend on one another.
using Table = std::array<std::array<uint32_t, 256>, 8>;

constexpr Table MakeTable() {
  Table t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ ((crc & 1) != 0 ? kReflectedPolynomial : 0);
    t[0][b] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Table kTable = MakeTable();

// Little-endian loads, whatever the machine's order.
inline uint32_t Load32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

// `state` below is the CRC register: the finished CRC is its complement.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t state = ~crc;
  for (; size >= 8; p += 8, size -= 8) {
    const uint32_t lo = Load32(p) ^ state;
    const uint32_t hi = Load32(p + 4);
    state = kTable[7][lo & 0xff] ^ kTable[6][(lo >> 8) & 0xff] ^ kTable[5][(lo >> 16) & 0xff] ^
            kTable[4][lo >> 24] ^ kTable[3][hi & 0xff] ^ kTable[2][(hi >> 8) & 0xff] ^
            kTable[1][(hi >> 16) & 0xff] ^ kTable[0][hi >> 24];
  }
  for (; size > 0; ++p, --size) state = (state >> 8) ^ kTable[0][(state ^ *p) & 0xff];
  return ~state;
}

#if defined(__x86_64__)

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const void* data,
                                                          size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t state = ~crc;
  // Bytes up to an 8-byte boundary, so no 8-byte load crosses a cache line.
  for (; size > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; ++p, --size) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), *p);
  }
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    state = _mm_crc32_u64(state, word);
  }
  for (; size > 0; ++p, --size) state = _mm_crc32_u8(static_cast<uint32_t>(state), *p);
  return ~static_cast<uint32_t>(state);
}

bool HardwareAvailable() {
  // The processor model is read by a constructor of libgcc's; a call
  // before it ran (from another constructor, or in a preloaded library)
  // would see no features without this.
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

#else

uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size) {
  return ExtendPortable(crc, data, size);
}

bool HardwareAvailable() { return false; }

#endif

}  // namespace crc32c_internal

uint32_t ExtendCrc32c(uint32_t crc, const void* data, size_t size) {
  static const bool hardware = crc32c_internal::HardwareAvailable();
  return hardware ? crc32c_internal::ExtendHardware(crc, data, size)
                  : crc32c_internal::ExtendPortable(crc, data, size);
}

uint32_t Crc32c(const void* data, size_t size) { return ExtendCrc32c(0, data, size); }

}  // namespace alloctrace
