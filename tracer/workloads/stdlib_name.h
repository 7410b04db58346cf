// Which C++ standard library this translation unit is built against, for the
// trace header's labels (stdlib=libstdc++ or stdlib=libc++): node and
// control-block sizes, and so the allocation pattern, differ between them.
// Header-only and free of other project code, so programs built against
// either library can use it.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_STDLIB_NAME_H_
#define ALLOCTRACE_TRACER_WORKLOADS_STDLIB_NAME_H_

#include <cstddef>  // defines _LIBCPP_VERSION or __GLIBCXX__
#include <string>

namespace alloctrace::workloads {

// "libc++", "libstdc++" or "unknown".
inline const char* StdlibName() {
#if defined(_LIBCPP_VERSION)
  return "libc++";
#elif defined(__GLIBCXX__)
  return "libstdc++";
#else
  return "unknown";
#endif
}

// The library's own version macro (_LIBCPP_VERSION, e.g. 14000; __GLIBCXX__,
// a release date such as 20230528), or "" if unknown.
inline std::string StdlibVersion() {
#if defined(_LIBCPP_VERSION)
  return std::to_string(_LIBCPP_VERSION);
#elif defined(__GLIBCXX__)
  return std::to_string(__GLIBCXX__);
#else
  return "";
#endif
}

// The compiler that built this translation unit, e.g. "clang 14.0.6" or
// "gcc 12.2.0".
inline std::string CompilerName() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_STDLIB_NAME_H_
