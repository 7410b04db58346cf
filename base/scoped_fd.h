// ScopedFd: one file descriptor, closed when its owner goes; and Pipe, a
// pipe's two ends as two of them. Every descriptor the project opens and
// keeps past one statement is held by one, so no error path leaks one and
// no path closes one twice.
//
//   absl::StatusOr<Pipe> p = Pipe::Make();
//   if (!p.ok()) return p.status();
//   spec.inherit_fds = {p->write.get()};
//   ... start the child ...
//   p->write.Reset();  // the child has its copy: the reader sees EOF when it ends
//
// Thread-safety: as an int: one owner at a time.
#ifndef ALLOCTRACE_BASE_SCOPED_FD_H_
#define ALLOCTRACE_BASE_SCOPED_FD_H_

#include <fcntl.h>

#include "absl/status/statusor.h"

namespace alloctrace {

class ScopedFd {
 public:
  ScopedFd() = default;
  // Takes `fd` (-1: none).
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor held, if any, and takes `fd`.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Pipe {
  ScopedFd read;
  ScopedFd write;
  // pipe2(2) with `flags` (close-on-exec unless told otherwise). Errors:
  // Internal naming errno ("pipe: Too many open files").
  static absl::StatusOr<Pipe> Make(int flags = O_CLOEXEC);
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_SCOPED_FD_H_
