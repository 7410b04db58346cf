// write_hostile_trace FILE: writes the trace of format/hostile_trace.h, for
// the browser test of the HTML reports.
#include <cstdio>
#include <string>

#include "alloctrace/format/hostile_trace.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_hostile_trace FILE\n");
    return 2;
  }
  const absl::Status s = alloctrace::WriteHostileTrace(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "write_hostile_trace: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
