#include "alloctrace/base/utf8.h"

#include <cstdint>

namespace alloctrace {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = byte(0);
  if (c < 0x80) return 1;
  // The second byte's range depends on the first (RFC 3629, section 4): it
  // is what rules out overlong forms, surrogates and values past U+10FFFF.
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() - i < len) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace alloctrace
