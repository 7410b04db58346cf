// String checks and file reads shared by tests (testonly: //base:string_test_util).
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_BASE_STRING_TEST_UTIL_H_
#define ALLOCTRACE_BASE_STRING_TEST_UTIL_H_

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
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

// The text of `path` (relative to the workspace root) from a test's
// runfiles (a data dependency of the test); "" if it cannot be read.
inline std::string ReadRunfile(const std::string& path) {
  const char* dir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  std::ifstream in(std::string(dir ? dir : ".") + "/" + (ws ? ws : "") + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_STRING_TEST_UTIL_H_
