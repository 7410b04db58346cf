// Small helpers shared by the command-line programs.
#ifndef ALLOCTRACE_BASE_CLI_UTIL_H_
#define ALLOCTRACE_BASE_CLI_UTIL_H_

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

// Lets flags be written with dashes as well as underscores
// (--list-policies as --list_policies): rewrites, in place, the dashes in
// the name part of every "--flag" or "--flag=value" argument before a bare
// "--". Abseil's parser knows only the underscore spelling.
inline void AcceptDashedFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* a = argv[i];
    if (a[0] != '-' || a[1] != '-') continue;
    if (a[2] == '\0') break;  // "--": what follows is not ours
    for (char* c = a + 2; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_CLI_UTIL_H_
