// UTF-8 validation, for text that must be UTF-8 where it goes (proto3 string
// fields, JSON) but comes from outside (paths, command lines, trace headers).
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_BASE_UTF8_H_
#define ALLOCTRACE_BASE_UTF8_H_

#include <cstddef>
#include <string_view>

namespace alloctrace {

// The length (1 to 4) of the well-formed UTF-8 sequence that starts at
// s[i], or 0 if none does there (a stray continuation byte, a cut-short or
// overlong sequence, a surrogate, a code point above U+10FFFF), as RFC 3629
// defines well-formed. Requires i < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t i);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_UTF8_H_
