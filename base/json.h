// JSON text helpers for the programs' --format=json outputs.
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_BASE_JSON_H_
#define ALLOCTRACE_BASE_JSON_H_

#include <string>
#include <string_view>
#include <vector>

namespace alloctrace {

// `s` as a JSON string literal, quotes included (RFC 8259): `"` and `\` are
// escaped with a backslash, control characters (below 0x20) as \u00XX, and
// bytes that are not well-formed UTF-8 become U+FFFD, so the result is
// valid JSON whatever `s` holds (a path on Linux may be any bytes).
std::string JsonString(std::string_view s);

// `strings` as a JSON array of such literals: ["a", "b"].
std::string JsonStrings(const std::vector<std::string>& strings);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_JSON_H_
