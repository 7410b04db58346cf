// Writes the crafted traces of format/test_util.h into a directory:
//   bazel run //format:write_crafted_traces -- $PWD/format/testdata
// (format/testdata/ holds the result, as seeds for the fuzzers).
#include <cstdio>
#include <string>

#include "format/test_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_crafted_traces DIR\n");
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
