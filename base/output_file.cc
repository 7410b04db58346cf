#include "alloctrace/base/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"

namespace alloctrace {

namespace {

// The directory part of `path` ("." for a bare name), for the checks of a
// file that does not exist yet.
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The path a regular file is written at: a symbolic link's target, so the
// rename replaces the file the link names, not the link.
std::string WrittenPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
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

}  // namespace

absl::Status CheckOutputFile(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return absl::FailedPreconditionError("an empty output path");
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
  // A new or replaced regular file: its directory takes the temporary file
  // and the rename.
  const std::string dir = DirectoryOf(WrittenPath(path));
  struct stat d;
  if (::stat(dir.c_str(), &d) != 0) {
    return Unfit("cannot write ", path, ": its directory ", dir, ": ", std::strerror(errno));
  }
  if (!S_ISDIR(d.st_mode)) {
    return Unfit("cannot write ", path, ": ", dir, " is not a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Unfit("cannot write ", path, ": its directory ", dir, ": ", std::strerror(errno));
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFile(const std::string& path, std::string_view text) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return WriteError(path, EISDIR);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return WriteError(path, errno);
    int err = WriteAll(fd, text);
    if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    return err == 0 ? absl::OkStatus() : WriteError(path, err);
  }
  const std::string target = WrittenPath(path);
  const std::string tmp = absl::StrCat(target, ".tmp.", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError(path, errno);
  int err = WriteAll(fd, text);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return WriteError(path, err);
  }
  return absl::OkStatus();
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
