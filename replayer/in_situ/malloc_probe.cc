// libmalloc_probe.so: the preload check of in-situ runs (in_situ.h).
// Preloaded after the malloc under test; at load it names the file that
// serves malloc for the whole process on the fd in ALLOCTRACE_POLICY_ACK_FD,
// as "alloctrace-malloc <file>\n". Allocates nothing and changes nothing
// else.
//
// Which file serves malloc: symbol interposition is global, so the first
// loaded object, in load order (the program, the preloaded libraries, then
// the others), that defines malloc. The program itself is passed over
// unless no shared object defines it: a program built without PIE that
// takes malloc's address (Debian's python3.11) holds a canonical PLT entry
// for it, which dlsym(RTLD_DEFAULT) returns though its calls go to the
// preloaded malloc.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct Search {
  const char* file = nullptr;  // the first shared object that defines malloc
  bool first = true;           // the next object is the program
};

int DefinesMalloc(dl_phdr_info* info, size_t, void* data) {
  Search& s = *static_cast<Search*>(data);
  if (s.first) {  // the program
    s.first = false;
    return 0;
  }
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;  // the vDSO
  void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return 0;
  void* m = dlsym(h, "malloc");
  Dl_info where;
  const bool own = m != nullptr && dladdr(m, &where) != 0 &&
                   reinterpret_cast<ElfW(Addr)>(where.dli_fbase) == info->dlpi_addr;
  dlclose(h);
  if (!own) return 0;
  s.file = info->dlpi_name;
  return 1;  // found: stop
}

__attribute__((constructor)) void ReportMallocProvider() {
  const char* fd_text = std::getenv("ALLOCTRACE_POLICY_ACK_FD");
  if (fd_text == nullptr) return;
  char* end = nullptr;
  const long fd = std::strtol(fd_text, &end, 10);
  if (end == fd_text || *end != '\0' || fd < 0) return;
  Search s;
  dl_iterate_phdr(&DefinesMalloc, &s);
  const char* file = s.file;
  if (file == nullptr) {  // only the program defines it (or nothing does)
    Dl_info info;
    void* m = dlsym(RTLD_DEFAULT, "malloc");
    file =
        m != nullptr && dladdr(m, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?";
  }
  char line[4200];
  const int n = std::snprintf(line, sizeof line, "alloctrace-malloc %s\n", file);
  if (n > 0 && n < static_cast<int>(sizeof line)) {
    ssize_t ignored = write(static_cast<int>(fd), line, static_cast<size_t>(n));
    (void)ignored;
  }
}

}  // namespace
