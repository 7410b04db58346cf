// Recording cost, trace size and decode speed.
//
//   bazel run //tracer:tracer_benchmark
//
// BM_MapChurnPlain vs BM_MapChurnTraced: the same std::map insert/erase
//   churn (map capped at 4096 or 131072 entries) with std::allocator and with
//   TraceAllocator. thread_ns/event is the recording thread's CPU time per
//   event: traced minus plain is what recording adds in that thread (it
//   includes waiting for room in its ring when the writer falls behind).
//   writer_ns/event is the writer thread's CPU per event; the two added
//   together are the total CPU recording adds.
// BM_HotPath: RecordAlloc + RecordFree alone, nothing else: the bare cost of
//   storing an event when the writer keeps up (it runs on the other core).
// BM_WorkloadSize/<workload>: bytes per event of each seed workload's trace.
// BM_Decode: events per second through TraceReader (decode + validate).
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/trace_allocator.h"
#include "alloctrace/tracer/workloads/workloads.h"
#include "benchmark/benchmark.h"

namespace alloctrace {
namespace {

std::string TempTrace(const std::string& name) {
  return absl::StrCat("/tmp/alloctrace_bench_", getpid(), "_", name, ".trace");
}

// Inserts n random keys into a map capped at `cap` entries (erasing the
// smallest when full); returns the allocation events this makes.
template <template <typename> class Alloc>
uint64_t MapChurn(int n, size_t cap) {
  std::map<int, int, std::less<int>, Alloc<std::pair<const int, int>>> m;
  uint64_t events = 0;
  uint32_t x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const int k = static_cast<int>(x >> 1);
    if (m.emplace(k, i).second) ++events;
    if (m.size() > cap) {
      m.erase(m.begin());
      ++events;
    }
  }
  events += m.size();  // freed at scope exit
  return events;
}

double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// Counters: ns/event of wall time; thread_ns/event, the CPU time of the
// benchmark's own (the recording) thread per event.
void BM_MapChurnPlain(benchmark::State& state) {
  uint64_t events = 0;
  const double cpu0 = ThreadCpuNs();
  for (auto _ : state) {
    events += MapChurn<std::allocator>(200000, static_cast<size_t>(state.range(0)));
  }
  state.counters["thread_ns/event"] = (ThreadCpuNs() - cpu0) / events;
  state.counters["ns/event"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MapChurnPlain)->Arg(4096)->Arg(1 << 17)->Unit(benchmark::kMillisecond);

void BM_MapChurnTraced(benchmark::State& state) {
  RecordingOptions o;
  o.path = TempTrace("churn");
  if (!Recorder::Global().Start(o).ok()) {
    state.SkipWithError("cannot start recording");
    return;
  }
  uint64_t events = 0;
  const double cpu0 = ThreadCpuNs();
  for (auto _ : state) {
    events += MapChurn<TraceAllocator>(200000, static_cast<size_t>(state.range(0)));
  }
  const double thread_ns = ThreadCpuNs() - cpu0;
  RecordingStats stats;
  (void)Recorder::Global().Stop(&stats);
  std::remove(o.path.c_str());
  state.counters["thread_ns/event"] = thread_ns / events;
  state.counters["ns/event"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["writer_ns/event"] = stats.writer_cpu_seconds * 1e9 / stats.events;
  state.counters["bytes/event"] = static_cast<double>(stats.bytes) / stats.events;
}
BENCHMARK(BM_MapChurnTraced)->Arg(4096)->Arg(1 << 17)->Unit(benchmark::kMillisecond);

void BM_HotPath(benchmark::State& state) {
  RecordingOptions o;
  o.path = TempTrace("hot");
  if (!Recorder::Global().Start(o).ok()) {
    state.SkipWithError("cannot start recording");
    return;
  }
  Recorder& r = Recorder::Global();
  const uint32_t arena = r.CreateArena();
  uintptr_t addr = 0x100000;
  // Two events per iteration: a small working set of 64 live blocks.
  for (auto _ : state) {
    addr = 0x100000 + ((addr + 64) & 0xfff);
    r.RecordAlloc(reinterpret_cast<void*>(addr + 0x100000), arena, 48, 1, 3);
    r.RecordFree(reinterpret_cast<void*>(addr + 0x100000), arena);
  }
  RecordingStats stats;
  (void)r.Stop(&stats);
  std::remove(o.path.c_str());
  state.counters["ns/event"] = benchmark::Counter(
      2.0 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["writer_ns/event"] = stats.writer_cpu_seconds * 1e9 / stats.events;
}
BENCHMARK(BM_HotPath);

// The writer thread's share: encoding alone, one thread, no rings. The
// argument is how many node shapes the allocations take in turn (count 1,
// 48, 32, 64 and 72 bytes), as a program's containers of several kinds do.
void BM_EncodeOnly(benchmark::State& state) {
  static constexpr uint64_t kNodeBytes[] = {48, 32, 64, 72};
  const size_t shapes = static_cast<size_t>(state.range(0));
  const std::string path = TempTrace("encode");
  auto writer = TraceWriter::Create(path, proto::Header());
  if (!writer.ok()) {
    state.SkipWithError("cannot create");
    return;
  }
  // 4096 live blocks among 8192 addresses: a free, then an allocation at a
  // random free address, as an allocator reusing its memory would.
  std::vector<uint64_t> live(4096), spare(4096);
  for (size_t i = 0; i < live.size(); ++i) live[i] = 0x100000 + i * 64;
  for (size_t i = 0; i < spare.size(); ++i) spare[i] = 0x100000 + (live.size() + i) * 64;
  for (uint64_t a : live) (*writer)->Alloc(0, 1, a, Shape{48, 1, 8});
  uint32_t x = 1;
  size_t turn = 0;
  for (auto _ : state) {
    x = x * 1664525u + 1013904223u;
    const size_t k = (x >> 8) % live.size();
    const size_t j = (x >> 20) % spare.size();
    (*writer)->Free(0, 1, live[k]);
    std::swap(live[k], spare[j]);
    (*writer)->Alloc(0, 1, live[k], Shape{kNodeBytes[turn], 1, 8});
    if (++turn == shapes) turn = 0;
  }
  (void)(*writer)->Finish();
  std::remove(path.c_str());
  state.counters["ns/event"] = benchmark::Counter(
      2.0 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeOnly)->Arg(1)->Arg(4);

void BM_WorkloadSize(benchmark::State& state) {
  const workloads::WorkloadInfo& w = workloads::AllWorkloads()[state.range(0)];
  state.SetLabel(std::string(w.name));
  RecordingStats stats;
  for (auto _ : state) {
    RecordingOptions o;
    o.path = TempTrace("size");
    if (!Recorder::Global().Start(o).ok()) {
      state.SkipWithError("cannot start recording");
      return;
    }
    w.run_traced(w.DefaultParams(), 1);
    (void)Recorder::Global().Stop(&stats);
    std::remove(o.path.c_str());
  }
  state.counters["events"] = static_cast<double>(stats.events);
  state.counters["bytes/event"] = static_cast<double>(stats.bytes) / stats.events;
}
BENCHMARK(BM_WorkloadSize)
    ->DenseRange(0, static_cast<int64_t>(workloads::AllWorkloads().size()) - 1)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& state) {
  const std::string path = TempTrace("decode");
  {
    RecordingOptions o;
    o.path = path;
    if (!Recorder::Global().Start(o).ok()) {
      state.SkipWithError("cannot start recording");
      return;
    }
    MapChurn<TraceAllocator>(1000000, 4096);
    (void)Recorder::Global().Stop();
  }
  uint64_t events = 0;
  std::vector<Event> chunk;
  for (auto _ : state) {
    auto reader = TraceReader::Open(path);
    if (!reader.ok()) {
      state.SkipWithError("cannot read");
      break;
    }
    while (true) {
      auto more = (*reader)->NextChunk(&chunk);
      if (!more.ok() || !*more) break;
      events += chunk.size();
      benchmark::DoNotOptimize(chunk.data());
    }
  }
  std::remove(path.c_str());
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace alloctrace

BENCHMARK_MAIN();
