// The malloc libraries the replayer preloads (tcmalloc, jemalloc, mimalloc)
// and the directories it looks for them in, as constants: the entries of
// preloaded_mallocs.inc, the one list, which the fidelity check
// (fidelity/check.py) reads too.
// Thread-safety: constants.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_PRELOADED_MALLOCS_H_
#define ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_PRELOADED_MALLOCS_H_

#include <string_view>

namespace alloctrace::allocators {

struct PreloadedMalloc {
  std::string_view policy;          // "jemalloc"
  std::string_view file;            // "libjemalloc.so.2": LD_PRELOAD=<file>
  std::string_view link_name;       // "jemalloc": -l<link_name>
  std::string_view debian_package;  // "libjemalloc-dev"
};

// In the order of the list.
inline constexpr PreloadedMalloc kPreloadedMallocs[] = {
#define ALLOCTRACE_PRELOADED_MALLOC(policy, file, link_name, debian_package) \
  {policy, file, link_name, debian_package},
#define ALLOCTRACE_LIBRARY_DIR(dir)
#include "alloctrace/replayer/engine/allocators/preloaded_mallocs.inc"
#undef ALLOCTRACE_PRELOADED_MALLOC
#undef ALLOCTRACE_LIBRARY_DIR
};

// Where a preloaded malloc's file is looked for, in this order. In a
// directory, kMultiarchPlaceholder stands for kMultiarchTriplet; where that is
// empty, the directory is skipped.
inline constexpr std::string_view kPreloadLibraryDirs[] = {
#define ALLOCTRACE_PRELOADED_MALLOC(policy, file, link_name, debian_package)
#define ALLOCTRACE_LIBRARY_DIR(dir) dir,
#include "alloctrace/replayer/engine/allocators/preloaded_mallocs.inc"
#undef ALLOCTRACE_PRELOADED_MALLOC
#undef ALLOCTRACE_LIBRARY_DIR
};

inline constexpr std::string_view kMultiarchPlaceholder = "<multiarch>";

// The machine's multiarch triplet; empty where the project knows none.
#if defined(__x86_64__)
inline constexpr std::string_view kMultiarchTriplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
inline constexpr std::string_view kMultiarchTriplet = "aarch64-linux-gnu";
#else
inline constexpr std::string_view kMultiarchTriplet = "";
#endif

}  // namespace alloctrace::allocators

#endif  // ALLOCTRACE_REPLAYER_ENGINE_ALLOCATORS_PRELOADED_MALLOCS_H_
