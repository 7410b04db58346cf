#include "alloctrace/base/scoped_fd.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace alloctrace {

void ScopedFd::Reset(int fd) {
  // A close that fails (EINTR, EIO) has released the descriptor all the
  // same on Linux: never retried, since the number may be reused already.
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

absl::StatusOr<Pipe> Pipe::Make(int flags) {
  int fds[2];
  if (pipe2(fds, flags) != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  Pipe p;
  p.read.Reset(fds[0]);
  p.write.Reset(fds[1]);
  return p;
}

}  // namespace alloctrace
