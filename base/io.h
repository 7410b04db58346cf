// File-descriptor I/O that finishes the job: short writes and reads, and
// calls interrupted by a signal (EINTR), are retried. And the words for a
// file's kind, for the messages about it.
//
// Failure: the functions return 0 on success, else the errno of the call
// that failed; they never print. Callers turn that into an absl::Status with
// what they know (the file's name, the offset).
//
// Thread-safety: each call works on the fds it is given; concurrent calls on
// one fd interleave as write(2) and read(2) do.
#ifndef ALLOCTRACE_BASE_IO_H_
#define ALLOCTRACE_BASE_IO_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace alloctrace {

// Writes all `size` bytes at `data` to `fd`. If `written` is not null it is
// set to the bytes written before a failure (`size` on success). A write(2)
// that returns 0 for a non-empty buffer is an error (EIO).
//
// Never allocates and calls only write(2), so it is async-signal-safe and
// fit for use inside the capture library's malloc.
int WriteAll(int fd, const void* data, size_t size, size_t* written = nullptr);
inline int WriteAll(int fd, std::string_view data, size_t* written = nullptr) {
  return WriteAll(fd, data.data(), data.size(), written);
}

// Reads `fd` to end of file, appending what it reads to `*out` (what was read
// before a failure stays appended).
int ReadAll(int fd, std::string* out);

// The kind of a file that is not a regular file (st_mode's type bits), for
// messages: "a directory", "a character device", "a FIFO", ...; "" for a
// regular file.
std::string FileKind(unsigned mode);

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_IO_H_
