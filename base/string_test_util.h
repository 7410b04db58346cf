// String checks shared by tests (testonly: //base:string_test_util).
#ifndef ALLOCTRACE_BASE_STRING_TEST_UTIL_H_
#define ALLOCTRACE_BASE_STRING_TEST_UTIL_H_

#include <cstddef>
#include <string>

namespace alloctrace {

// How many times `needle` (not empty) occurs in `haystack`, not overlapping.
inline size_t CountSubstrings(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_STRING_TEST_UTIL_H_
