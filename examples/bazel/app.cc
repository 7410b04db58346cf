// A program of your own that uses alloctrace two ways: it records the
// allocations of one std::map into a trace file (TraceAllocator), and keeps
// another std::map in alloctrace's slab pool (SlabAllocator).
//
//   app [TRACE]     writes TRACE (default app.trace); exits 1 on an error
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/trace_allocator.h"

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "app.trace";
  // Under `bazel run` a relative path means where the command was typed.
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (cwd != nullptr && path[0] != '/') path = std::string(cwd) + "/" + path;

  // 1. Record: start a recording, use a traced map, stop (writes the footer).
  alloctrace::RecordingOptions options;
  options.path = path;
  options.workload = "example_map";
  options.program = argv[0];
  absl::Status status = alloctrace::Recorder::Global().Start(options);
  if (!status.ok()) {
    std::fprintf(stderr, "app: %s\n", status.ToString().c_str());
    return 1;
  }
  {
    std::map<int, int, std::less<int>, alloctrace::TraceAllocator<std::pair<const int, int>>>
        traced;
    for (int i = 0; i < 10000; ++i) traced[i * 7919 % 10007] = i;
    for (int i = 0; i < 10007; i += 2) traced.erase(i);
  }
  alloctrace::RecordingStats stats;
  status = alloctrace::Recorder::Global().Stop(&stats);
  if (!status.ok()) {
    std::fprintf(stderr, "app: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("app: wrote %s: %llu events, %llu bytes\n", path.c_str(),
              static_cast<unsigned long long>(stats.events),
              static_cast<unsigned long long>(stats.bytes));

  // 2. Adopt: the same map in the slab pool, one pool per container.
  std::map<int, int, std::less<int>, alloctrace::pool::SlabAllocator<std::pair<const int, int>>>
      pooled;
  for (int i = 0; i < 10000; ++i) pooled[i] = i;
  long long sum = 0;
  for (const auto& [key, value] : pooled) sum += value;
  std::printf("app: slab-pooled map: %zu entries, sum %lld\n", pooled.size(), sum);
  return sum == 10000LL * 9999 / 2 ? 0 : 1;
}
