// Bit helpers for sizes and alignments.
//
// Thread-safety: pure constexpr functions.
#ifndef ALLOCTRACE_BASE_BITS_H_
#define ALLOCTRACE_BASE_BITS_H_

#include <cstdint>

namespace alloctrace {

// floor(log2(v)); 0 for v <= 1. For a power of two (an alignment), its
// exponent: Log2(16) == 4.
constexpr uint8_t Log2(uint64_t v) {
  return v <= 1 ? 0 : static_cast<uint8_t>(63 - __builtin_clzll(v));
}

// ceil(log2(v)); 0 for v <= 1: the exponent of the smallest power of two
// >= v, as glibc rounds an alignment up. Log2Ceil(24) == 5.
constexpr uint8_t Log2Ceil(uint64_t v) {
  return v <= 1 ? 0 : static_cast<uint8_t>(Log2(v - 1) + 1);
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_BITS_H_
