// libmalloc_probe.so: the preload check of in-situ runs (in_situ.h).
// Preloaded after the malloc under test; at load it names the file that
// serves malloc for the whole process (symbol interposition is global, so
// dladdr of the default `malloc` is what the program calls) on the fd in
// ALLOCTRACE_POLICY_ACK_FD, as "alloctrace-malloc <file>\n". Allocates
// nothing and changes nothing else.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

__attribute__((constructor)) void ReportMallocProvider() {
  const char* fd_text = std::getenv("ALLOCTRACE_POLICY_ACK_FD");
  if (fd_text == nullptr) return;
  char* end = nullptr;
  const long fd = std::strtol(fd_text, &end, 10);
  if (end == fd_text || *end != '\0' || fd < 0) return;
  Dl_info info;
  void* m = dlsym(RTLD_DEFAULT, "malloc");
  const char* file =
      m != nullptr && dladdr(m, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?";
  char line[4200];
  const int n = std::snprintf(line, sizeof line, "alloctrace-malloc %s\n", file);
  if (n > 0 && n < static_cast<int>(sizeof line)) {
    ssize_t ignored = write(static_cast<int>(fd), line, static_cast<size_t>(n));
    (void)ignored;
  }
}

}  // namespace
