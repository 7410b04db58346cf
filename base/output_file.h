// Where a command's output goes (--out=FILE, or standard output): checked
// before the work that fills it, and written so that neither a failure nor
// the kind of file named does harm. The one rule for every program here.
//
// A regular file (new, or existing and replaced, keeping its permissions;
// through a symbolic link, even one whose target is not made yet, the
// link's target) is written through a temporary file beside it (a new
// name, O_EXCL) and a rename, so a failed write leaves the file as it was
// and no reader sees half a report. Anything else that exists (/dev/null,
// a terminal, a FIFO) is written in place, as a shell's `>` would: a
// rename over it would put a regular file where the device was (as root,
// /dev/null for the whole machine). /dev/stdout, /dev/stderr and
// /dev/fd/N are their descriptors, written as they are (a shell's `>>`
// keeps what it holds).
//
// Thread-safety: the functions work on the paths they are given.
#ifndef ALLOCTRACE_BASE_OUTPUT_FILE_H_
#define ALLOCTRACE_BASE_OUTPUT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace alloctrace {

// OK if `path` can take an output, else an error naming the path and what
// is wrong: InvalidArgument if it is one of `inputs` (the same file, by
// device and inode, however spelled: a report written there would destroy
// what it reports on), a usage error; FailedPrecondition if it is a
// directory, its directory does not exist or cannot be written (where the
// output would be a new or replaced regular file; a temporary file is made
// there and removed, which also finds a name too long), or it exists and
// cannot be written. Checked before the work, so a long measurement is
// never thrown away for want of a place to put it. /dev/stdout and its
// kin: their descriptor open for writing.
absl::Status CheckOutputFile(const std::string& path, const std::vector<std::string>& inputs = {});

// The descriptor /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N
// names, or -1.
int OutputDescriptor(const std::string& path);

// The file a regular output at `path` is written to: symbolic links
// followed, even to a target not made yet, and the directory resolved.
std::string ResolveOutputPath(const std::string& path);

// The index of the first of `paths` that lands where an earlier one does
// (OutputDescriptor's name, else ResolveOutputPath: however spelled, through
// links), or std::string::npos. Empty paths (standard output) are skipped.
size_t FindRepeatedOutput(const std::vector<std::string>& paths);

// Writes `text` to `path` as the header says. The error names the path and
// the system's reason.
absl::Status WriteOutputFile(const std::string& path, std::string_view text);

// Writes `text` to standard output and flushes it: a write error (a full
// disk, a closed descriptor) is returned, not lost.
absl::Status WriteStandardOutput(std::string_view text);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_OUTPUT_FILE_H_
