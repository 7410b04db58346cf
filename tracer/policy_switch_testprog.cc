// What policy_switch_test runs as a child, under the ALLOCTRACE_POLICY the
// test sets: policy_switch_testprog MODE.
//   print      prints a line to stdout (buffered when stdout is a file),
//              uses a map of class ProgIndex, returns 0
//   ambiguous  prints a line to stdout, then uses maps of classes
//              north::Dup and south::Dup, returns 0
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "alloctrace/tracer/trace_allocator.h"

// Tags naming classes (at global scope, so their names are plain).
struct ProgIndex;
namespace north {
struct Dup;
}  // namespace north
namespace south {
struct Dup;
}  // namespace south

namespace {

template <typename Tag>
using Map =
    std::map<int, int, std::less<int>, alloctrace::TraceAllocator<std::pair<const int, int>, Tag>>;

int Print() {
  std::printf("a line the program wrote\n");
  Map<ProgIndex> m;
  for (int i = 0; i < 100; ++i) m[i] = i;
  return m.size() == 100 ? 0 : 1;
}

int Ambiguous() {
  std::printf("a line the program wrote\n");
  Map<north::Dup> n;
  Map<south::Dup> s;
  n[1] = 1;
  s[1] = 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  const std::string mode = argv[1];
  if (mode == "print") return Print();
  if (mode == "ambiguous") return Ambiguous();
  return 64;
}
