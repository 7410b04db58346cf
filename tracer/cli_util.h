// Small helpers shared by the command-line programs.
#ifndef ALLOCTRACE_TRACER_CLI_UTIL_H_
#define ALLOCTRACE_TRACER_CLI_UTIL_H_

#include <cstdlib>
#include <string>

namespace alloctrace {

// `bazel run` starts programs in their runfiles tree; a relative path the
// user typed is relative to BUILD_WORKING_DIRECTORY, where they typed it.
inline std::string ResolveUserPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (cwd == nullptr || *cwd == '\0') return path;
  return std::string(cwd) + "/" + path;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_CLI_UTIL_H_
