// Small helpers shared by the command-line programs.
//
// Thread-safety: ParseCommandLineOrExitUsage and CheckCommandLineFlags read and
// rewrite the process's argv and flags: call them from main, on one thread. The
// rest are pure.
#ifndef ALLOCTRACE_BASE_CLI_UTIL_H_
#define ALLOCTRACE_BASE_CLI_UTIL_H_

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

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

// The words after the first "--" of argv (a program to run and its
// arguments); argc is cut to before the "--", so that flag parsing never
// sees them. With `from_first_positional`, a first argument that is not a
// flag starts the program as well ("capture --out=x ls -l").
std::vector<std::string> TakeProgramArgs(int& argc, char** argv,
                                         bool from_first_positional = false);

// Checks the flags of a command line against the flags registered with
// Abseil, before absl::ParseCommandLine sees them: returns "" if every
// "--name", "--name=value", "--name value", "--noname" (booleans) names a
// registered flag with a value its type parses, else one line saying what
// is wrong, as "unknown flag --polices; did you mean --policies?" or
// "--budget=abc: not a number", or a flag given twice (Abseil would keep
// the last and drop the first silently). Names may be spelled with dashes (as
// AcceptDashedFlags allows); the message uses the spelling typed. Stops at a
// bare "--"; skips names listed in --undefok. The flags in a --flagfile's
// files, and those --fromenv and --tryfromenv take from the environment
// (FLAGS_name), are checked with the rest, the message saying where each
// came from; reading them (a file missing, a variable unset) is left to
// Abseil.
std::string CheckCommandLineFlags(int argc, char* const* argv);

// absl::ParseCommandLine with the usage contract of this project's programs:
// dashed names are accepted (AcceptDashedFlags, so argv is rewritten in
// place); an unknown flag or a malformed value prints "PROGRAM: MESSAGE"
// (CheckCommandLineFlags) on stderr and exits with status 2, never Abseil's
// 1, also for what only Abseil detects (a bad --flagfile). --help and its
// kin keep Abseil's behaviour. Returns the positional arguments, argv[0]
// first.
std::vector<char*> ParseCommandLineOrExitUsage(int argc, char** argv, const char* program);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_CLI_UTIL_H_
