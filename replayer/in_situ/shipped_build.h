// ShippedBuilds: the build the user would ship, made for each candidate of
// the search in the program (replayer --shipped_build=COMMAND TRACE --
// PROGRAM). Under the policy switch the program runs its pools through a
// table of functions, sized at run time; the build a user ships has the
// alias lines pasted and every pool call inlined for its type, and can be
// faster than the switch by more than the margins the search decides by
// (docs/results.md). With this, every run of the search is of a shipped
// build, so the program's verdict is the one the user would adopt.
//
// The command is the user's (a shell command line, run with /bin/sh -c in
// the directory the replayer was started from, BUILD_WORKING_DIRECTORY
// under `bazel run`), with, in its environment:
//   ALLOCTRACE_ALIASES       the alias lines, one per class of the trace,
//                            on one line (each ends with ';'):
//                            "template <class T> using WorkerIndexAlloc =
//                            alloctrace::pool::SlabAllocator<T, ...>; ..."
//                            (std::allocator<T> for a class on the heap)
//   ALLOCTRACE_ALIASES_FILE  the same lines, one per line, in a file
//   ALLOCTRACE_SHIPPED       where the command must leave the executable
// It pastes the lines where the program's aliases are (a source that
// reads them from the macro ALLOCTRACE_ALIASES, as the examples do, built
// with -DALLOCTRACE_ALIASES="$ALLOCTRACE_ALIASES"; or sed over a copy of
// the source), builds, and copies the executable to $ALLOCTRACE_SHIPPED.
// A malloc candidate is the build with every class on std::allocator and
// that malloc preloaded, as a user would ship it. Each distinct set of
// lines is built once (cached for the search); the build's output goes to
// the in-situ log; a build that fails, or leaves no executable, is that
// candidate's "not run" row with the build's last line, and the search goes
// on. At the end (Restore) the command runs once more without
// ALLOCTRACE_ALIASES, to leave the user's tree built as it was.
//
// Thread-safety: single-threaded; runs the command as a child process.
#ifndef ALLOCTRACE_REPLAYER_IN_SITU_SHIPPED_BUILD_H_
#define ALLOCTRACE_REPLAYER_IN_SITU_SHIPPED_BUILD_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/format/trace_format.h"

namespace alloctrace {

inline constexpr char kEnvAliases[] = "ALLOCTRACE_ALIASES";
inline constexpr char kEnvAliasesFile[] = "ALLOCTRACE_ALIASES_FILE";
inline constexpr char kEnvShipped[] = "ALLOCTRACE_SHIPPED";

// The alias lines of `policy` (a policy name, "std", or an
// ALLOCTRACE_POLICY assignment "Class=policy;...;*=policy") for the
// trace's classes (those with an id), one per class, in `classes` order.
// InvalidArgument for a policy with no adoptable type.
absl::StatusOr<std::vector<std::string>> ShippedAliasLines(const std::vector<ClassDef>& classes,
                                                           const std::string& policy);

class ShippedBuilds {
 public:
  // `command`: the user's build command; `classes`: the trace's class
  // table; `log_path`: where the builds' output is appended; `dir`: where
  // the executables are kept ("": a new directory under $TMPDIR).
  ShippedBuilds(std::string command, std::vector<ClassDef> classes, std::string log_path,
                std::string dir = "");
  ShippedBuilds(const ShippedBuilds&) = delete;
  ShippedBuilds& operator=(const ShippedBuilds&) = delete;
  ~ShippedBuilds();

  // The executable built for `policy` (as ShippedAliasLines takes it),
  // built now unless built before. Errors name the build's failure and its
  // last line of output.
  absl::StatusOr<std::string> For(const std::string& policy);

  // Runs the command without ALLOCTRACE_ALIASES (see above); once.
  void Restore();

  // A line on stderr per build ("shipped build 3 of slab/st/stack: 2.8 s").
  void set_progress(bool progress) { progress_ = progress; }

  const std::string& command() const { return command_; }
  const std::string& log_path() const { return log_path_; }
  int builds() const { return builds_; }
  int failed_builds() const;
  double seconds() const { return seconds_; }

 private:
  absl::StatusOr<std::string> Build(const std::vector<std::string>& lines, const std::string& out);
  // Runs the command with `set` added to the environment, its output into
  // *text; what went wrong ("" if it exited 0).
  std::string RunCommand(const std::vector<std::pair<const char*, std::string>>& set,
                         std::string* text) const;

  const std::string command_;
  const std::vector<ClassDef> classes_;
  const std::string log_path_;
  std::string dir_;
  bool own_dir_ = false;
  bool restored_ = false;
  bool progress_ = false;
  std::map<std::string, absl::StatusOr<std::string>> built_;  // by the lines, joined
  int builds_ = 0;
  double seconds_ = 0;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_IN_SITU_SHIPPED_BUILD_H_
