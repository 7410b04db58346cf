// A program of your own that uses alloctrace two ways: it records the
// allocations of one std::map into a trace file (TraceAllocator), and keeps
// another std::map in alloctrace's slab pool (SlabAllocator). Then it reads
// its trace back with TraceReader.
//
//   app [TRACE]     writes TRACE (default app.trace); exits 1 on an error
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "alloctrace/format/trace_reader.h"
#include "alloctrace/pool/pool_allocator.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/trace_allocator.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "app: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "app.trace";

  // 1. Record: start a recording, use a traced map, stop (writes the footer).
  alloctrace::RecordingOptions options;
  options.path = path;
  options.workload = "example_map";
  options.program = argv[0];
  absl::Status status = alloctrace::Recorder::Global().Start(options);
  if (!status.ok()) return Fail(status);
  {
    std::map<int, int, std::less<int>, alloctrace::TraceAllocator<std::pair<const int, int>>>
        traced;
    for (int i = 0; i < 10000; ++i) traced[i * 7919 % 10007] = i;
    for (int i = 0; i < 10007; i += 2) traced.erase(i);
  }
  alloctrace::RecordingStats stats;
  status = alloctrace::Recorder::Global().Stop(&stats);
  if (!status.ok()) return Fail(status);
  std::printf("app: wrote %s: %llu events, %llu bytes\n", path.c_str(),
              static_cast<unsigned long long>(stats.events),
              static_cast<unsigned long long>(stats.bytes));

  // 2. Read it back: every event, validated.
  auto reader = alloctrace::TraceReader::Open(path);
  if (!reader.ok()) return Fail(reader.status());
  std::vector<alloctrace::Event> events;
  unsigned long long allocs = 0, total = 0;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&events);
    if (!more.ok()) return Fail(more.status());
    if (!*more) break;
    for (const alloctrace::Event& e : events) {
      ++total;
      if (e.kind == alloctrace::OpKind::kAlloc) ++allocs;
    }
  }
  std::printf("app: read back %llu events, %llu allocations\n", total, allocs);

  // 3. Adopt: the same map in the slab pool, one pool per container.
  std::map<int, int, std::less<int>, alloctrace::pool::SlabAllocator<std::pair<const int, int>>>
      pooled;
  for (int i = 0; i < 10000; ++i) pooled[i] = i;
  long long sum = 0;
  for (const auto& [key, value] : pooled) sum += value;
  std::printf("app: slab-pooled map: %zu entries, sum %lld\n", pooled.size(), sum);
  return total == stats.events && sum == 10000LL * 9999 / 2 ? 0 : 1;
}
