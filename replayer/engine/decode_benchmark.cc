// Measures decoding a trace into a replay program, the replayer's work
// before any run: events/s from file to program and the process's peak
// memory per event.
//   bazel run -c opt //replayer/engine:decode_benchmark -- /tmp/big.trace
// (prints one line: docs/results.md's decoding figures come from it).
//   bazel run -c opt //replayer/engine:decode_benchmark -- --split /tmp/big.trace
// first times the reader alone (every event decoded and validated, nothing
// built) in the same process, so the reader's share of the time is a ratio
// measured in one run: once through ForEachEvent (events gathered per
// chunk) and once through StreamEvents (events handed over one by one, as
// the replay program builder takes them).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "alloctrace/format/trace_reader.h"
#include "alloctrace/replayer/engine/replay_program.h"

namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

// Reads every event and drops it; returns false (after printing why) on error.
bool TimeReaderAlone(const char* path, bool streamed) {
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<alloctrace::TraceReader>> reader =
      alloctrace::TraceReader::Open(path);
  const auto drop = [](const alloctrace::Event&) { return absl::OkStatus(); };
  absl::Status s = !reader.ok() ? reader.status()
                   : streamed   ? (*reader)->StreamEvents([]() {}, drop, [](uint32_t) {})
                                : (*reader)->ForEachEvent([](const auto&) {}, drop);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  if (!s.ok()) {
    std::fprintf(stderr, "decode_benchmark: %s\n", std::string(s.message()).c_str());
    return false;
  }
  const double events = static_cast<double>((*reader)->events_read());
  std::printf(
      "%s: %.0f events in %.2f s wall, %.2f s CPU: %.1f M events/s wall, %.1f M events/s "
      "CPU reader alone%s\n",
      path, events, seconds, cpu, events / seconds / 1e6, events / cpu / 1e6,
      streamed ? ", streamed" : "");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool split = argc == 3 && std::strcmp(argv[1], "--split") == 0;
  if (argc != 2 && !split) {
    std::fprintf(stderr, "usage: decode_benchmark [--split] TRACE\n");
    return 2;
  }
  const char* path = argv[argc - 1];
  if (split && (!TimeReaderAlone(path, false) || !TimeReaderAlone(path, true))) return 1;
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<alloctrace::ReplayProgram> p = alloctrace::LoadReplayProgram(path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!p.ok()) {
    std::fprintf(stderr, "decode_benchmark: %s\n", std::string(p.status().message()).c_str());
    return 1;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double events = static_cast<double>(p->ops.size());
  const double peak = static_cast<double>(ru.ru_maxrss) * 1024;
  // CPU time as well as wall time: on a loaded machine the wall clock counts
  // time spent waiting for a core.
  const double cpu = CpuSeconds() - cpu0;
  std::printf(
      "%s: %.0f ops in %.2f s wall, %.2f s CPU: %.1f M ops/s wall, %.1f M ops/s CPU "
      "decode+build; peak RSS %.0f MiB, %.1f bytes/op (program %.1f bytes/op)\n",
      path, events, seconds, cpu, events / seconds / 1e6, events / cpu / 1e6, peak / (1 << 20),
      events > 0 ? peak / events : 0.0,
      events > 0 ? (p->ops.capacity() * sizeof(alloctrace::ReplayOp)) / events : 0.0);
  return 0;
}
