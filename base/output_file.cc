#include "alloctrace/base/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"

namespace alloctrace {

namespace {

// The directory part of `path` ("." for a bare name).
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Realpath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return "";
  std::string out(real);
  std::free(real);
  return out;
}

template <typename... Parts>
absl::Status Unfit(const Parts&... parts) {
  return absl::FailedPreconditionError(absl::StrCat(parts...));
}

absl::Status WriteError(const std::string& path, int err) {
  return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
}

// A temporary file beside `target` that no one else can have made (its
// name is new: O_EXCL), or -1 with errno set. `*name` is its path.
int MakeTemporary(const std::string& target, std::string* name) {
  std::string tmpl = target + ".tmp.XXXXXX";
  const int fd = ::mkostemp(&tmpl[0], O_CLOEXEC);
  if (fd >= 0) *name = tmpl;
  return fd;
}

// Writes `text` over the file at `path` as it is (opened with `flags`
// besides O_WRONLY): 0 or the errno of the call that failed.
int WriteInPlace(const std::string& path, std::string_view text, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags);
  if (fd < 0) return errno;
  int err = WriteAll(fd, text);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  return err;
}

// Where an output at `path` lands: its descriptor's name as it is, else
// the file ResolveOutputPath finds.
std::string OutputPlace(const std::string& path) {
  return OutputDescriptor(path) >= 0 ? path : ResolveOutputPath(path);
}

}  // namespace

int OutputDescriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    int fd = -1;
    if (absl::StartsWith(path, prefix) && absl::SimpleAtoi(path.substr(std::strlen(prefix)), &fd) &&
        fd >= 0) {
      return fd;
    }
  }
  return -1;
}

std::string ResolveOutputPath(const std::string& path) {
  // A dangling link (its target not made yet) is followed by hand: the
  // target is what is written, and the link stays.
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) break;
    if (!S_ISLNK(st.st_mode)) {
      const std::string real = Realpath(p);
      return real.empty() ? p : real;
    }
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return p;
    const std::string to(buf, static_cast<size_t>(n));
    p = to[0] == '/' ? to : DirectoryOf(p) + "/" + to;
  }
  // Not there yet: its directory resolved, its name kept.
  const std::string dir = Realpath(DirectoryOf(p));
  const size_t slash = p.rfind('/');
  return dir.empty() ? p : dir + "/" + (slash == std::string::npos ? p : p.substr(slash + 1));
}

size_t FindRepeatedOutput(const std::vector<std::string>& paths) {
  std::vector<std::string> places;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    const std::string place = OutputPlace(paths[i]);
    for (const std::string& seen : places) {
      if (seen == place) return i;
    }
    places.push_back(place);
  }
  return std::string::npos;
}

absl::Status CheckOutputFile(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return absl::FailedPreconditionError("an empty output path");
  if (const int fd = OutputDescriptor(path); fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
      return Unfit("cannot write ", path, ": descriptor ", fd, " is not open for writing");
    }
    return absl::OkStatus();
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Unfit(path, " is a directory, not a file to write");
    for (const std::string& input : inputs) {
      struct stat in;
      if (::stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, input == path ? "" : absl::StrCat(" is ", input, ", which"),
                         " is being read: writing there would destroy it"));
      }
    }
    // Written in place, or replaced: either way the user may write it (a
    // file made read-only is not replaced behind the user's back).
    if (::access(path.c_str(), W_OK) != 0) {
      return Unfit("cannot write ", path, ": ", std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return absl::OkStatus();
  } else if (errno != ENOENT) {
    return Unfit("cannot write ", path, ": ", std::strerror(errno));
  }
  // A new or replaced regular file: the temporary file it is written
  // through is made and removed now, so that what would stop it (a missing
  // or read-only directory, a name too long) stops the command before its
  // work.
  const std::string target = ResolveOutputPath(path);
  const std::string dir = DirectoryOf(target);
  struct stat d;
  if (::stat(dir.c_str(), &d) != 0) {
    return Unfit("cannot write ", path, ": its directory ", dir, ": ", std::strerror(errno));
  }
  if (!S_ISDIR(d.st_mode)) return Unfit("cannot write ", path, ": ", dir, " is not a directory");
  std::string tmp;
  const int fd = MakeTemporary(target, &tmp);
  if (fd < 0) {
    const int err = errno;
    if (err == ENAMETOOLONG) return Unfit("cannot write ", path, ": ", std::strerror(err));
    return Unfit("cannot write ", path, ": its directory ", dir, ": ", std::strerror(err));
  }
  ::close(fd);
  ::unlink(tmp.c_str());
  return absl::OkStatus();
}

absl::Status WriteOutputFile(const std::string& path, std::string_view text) {
  if (const int fd = OutputDescriptor(path); fd >= 0) {
    // The descriptor as it is (a shell's >>, a pipe): never reopened,
    // truncated or replaced; after what stdio holds for it.
    if (fd == STDOUT_FILENO) std::fflush(stdout);
    if (fd == STDERR_FILENO) std::fflush(stderr);
    const int err = WriteAll(fd, text);
    return err == 0 ? absl::OkStatus() : WriteError(path, err);
  }
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return WriteError(path, EISDIR);
    const int err = WriteInPlace(path, text, 0);
    return err == 0 ? absl::OkStatus() : WriteError(path, err);
  }
  const std::string target = ResolveOutputPath(path);
  std::string tmp;
  const int fd = MakeTemporary(target, &tmp);
  if (fd < 0) return WriteError(path, errno);
  // A replaced file keeps its permissions (mkostemp makes 0600; a new file
  // gets what the umask allows of 0644, as a shell's > gives).
  mode_t mode = exists ? st.st_mode & 07777 : 0;
  if (!exists) {
    // Read by setting it back at once: the programs write their outputs
    // from one thread, with no file being made meanwhile.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0644 & ~mask;
  }
  int err = ::fchmod(fd, mode) != 0 ? errno : 0;
  if (err == 0) err = WriteAll(fd, text);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(tmp.c_str());
  if (exists && (err == EPERM || err == EACCES)) {
    // Another user's file in a sticky directory (/tmp): the rename is not
    // ours to make, the file is ours to write (CheckOutputFile saw to it).
    err = WriteInPlace(target, text, O_TRUNC);
  }
  return err == 0 ? absl::OkStatus() : WriteError(path, err);
}

absl::Status WriteStandardOutput(std::string_view text) {
  const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  if (std::fflush(stdout) != 0 || !written || std::ferror(stdout)) {
    const int err = errno;
    std::clearerr(stdout);
    return absl::DataLossError(
        absl::StrCat("cannot write to standard output: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace alloctrace
