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

int main(int argc, char** argv) {
  if (argc == 3 && std::strncmp(argv[1], "--many_arenas=", 14) == 0) {
    const unsigned long n = std::strtoul(argv[1] + 14, nullptr, 10);
    if (n == 0 || n >= (1ul << 31)) {
      std::fprintf(stderr, "write_crafted_traces: --many_arenas=N: N from 1 to 2^31 - 1\n");
      return 2;
    }
    const absl::Status s =
        alloctrace::testing_util::WriteManyArenasTrace(argv[2], static_cast<uint32_t>(n), 1024);
    if (!s.ok()) {
      std::fprintf(stderr, "write_crafted_traces: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s\n", argv[2]);
    return 0;
  }
  if (argc == 3 && std::strncmp(argv[1], "--realloc_chain=", 16) == 0) {
    const unsigned long n = std::strtoul(argv[1] + 16, nullptr, 10);
    if (n == 0 || n >= (1ul << 31)) {
      std::fprintf(stderr, "write_crafted_traces: --realloc_chain=N: N from 1 to 2^31 - 1\n");
      return 2;
    }
    const absl::Status s =
        alloctrace::testing_util::WriteReallocChainTrace(argv[2], static_cast<uint32_t>(n), 4096);
    if (!s.ok()) {
      std::fprintf(stderr, "write_crafted_traces: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s\n", argv[2]);
    return 0;
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
