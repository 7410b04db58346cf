// Writes the crafted traces of format/test_util.h into a directory:
//   bazel run //format:write_crafted_traces -- $PWD/format/testdata
// (format/testdata/ holds the result, as seeds for the fuzzers), or one
// large crafted trace of N arenas each holding one 1 KiB block never freed:
//   bazel run //format:write_crafted_traces -- --many_arenas=1000000 $PWD/x.trace
// or one block of the heap reallocated N times, 4 KiB larger each time:
//   bazel run //format:write_crafted_traces -- --realloc_chain=200000 $PWD/x.trace
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "alloctrace/format/test_util.h"

namespace {

// One large crafted trace of N of something, written by `write`.
struct LargeTrace {
  const char* flag;  // "--many_arenas="
  absl::Status (*write)(const std::string& path, uint32_t n);
};

constexpr LargeTrace kLargeTraces[] = {
    {"--many_arenas=",
     [](const std::string& path, uint32_t n) {
       return alloctrace::testing_util::WriteManyArenasTrace(path, n, 1024);
     }},
    {"--realloc_chain=",
     [](const std::string& path, uint32_t n) {
       return alloctrace::testing_util::WriteReallocChainTrace(path, n, 4096);
     }},
};

// Writes `t` for the flag's value `value` to `path`; the exit status.
int WriteLarge(const LargeTrace& t, const char* value, const char* path) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(value, &end, 10);
  if (end == value || *end != '\0' || n == 0 || n >= (1ul << 31)) {
    std::fprintf(stderr, "write_crafted_traces: %sN: N from 1 to 2^31 - 1, not '%s'\n", t.flag,
                 value);
    return 2;
  }
  const absl::Status s = t.write(path, static_cast<uint32_t>(n));
  if (!s.ok()) {
    std::fprintf(stderr, "write_crafted_traces: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%s\n", path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (const LargeTrace& t : kLargeTraces) {
    const size_t len = std::strlen(t.flag);
    if (argc == 3 && std::strncmp(argv[1], t.flag, len) == 0) {
      return WriteLarge(t, argv[1] + len, argv[2]);
    }
  }
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: write_crafted_traces DIR | write_crafted_traces --many_arenas=N FILE | "
                 "write_crafted_traces --realloc_chain=N FILE\n");
    return 2;
  }
  for (const auto& t : alloctrace::testing_util::CraftedTraces()) {
    const std::string path = std::string(argv[1]) + "/" + t.name;
    alloctrace::testing_util::WriteFile(
        path, alloctrace::testing_util::TraceBytes(t.chunks, t.footer_events));
    std::printf("%s\n", path.c_str());
  }
  return 0;
}
