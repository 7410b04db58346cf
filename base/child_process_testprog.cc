// What ChildProcess's test runs: child_process_testprog MODE [ARG].
//   exit N       exits with status N
//   segv         raises SIGSEGV
//   sleep S      sleeps S seconds
//   alloc MIB    allocates and touches MIB MiB, then sleeps until killed
//   write FD N   writes N bytes to FD, then exits 0
//   family       starts a grandchild that sleeps, then sleeps (both to be
//                killed with the process group)
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const std::string mode = argv[1];
  const long arg = argc > 2 ? std::atol(argv[2]) : 0;
  if (mode == "exit") return static_cast<int>(arg);
  if (mode == "segv") {
    // A sanitizer's own SEGV handler would report and abort instead; the
    // test wants the signal itself.
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (mode == "sleep") {
    sleep(static_cast<unsigned>(arg));
    return 0;
  }
  if (mode == "alloc") {
    const size_t bytes = static_cast<size_t>(arg) << 20;
    char* p = static_cast<char*>(std::malloc(bytes));
    if (p == nullptr) return 1;
    std::memset(p, 1, bytes);
    // Kept observable, so the compiler cannot drop the pages' writes.
    asm volatile("" : : "r"(p) : "memory");
    while (true) pause();
  }
  if (mode == "write" && argc > 3) {
    const int fd = static_cast<int>(arg);
    std::string data(static_cast<size_t>(std::atol(argv[3])), 'x');
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(fd, data.data() + done, data.size() - done);
      if (n <= 0) return 1;
      done += static_cast<size_t>(n);
    }
    return 0;
  }
  if (mode == "family") {
    if (fork() == 0) {
      while (true) pause();
    }
    while (true) pause();
  }
  return 64;
}
