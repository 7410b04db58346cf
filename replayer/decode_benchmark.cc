// Measures decoding a trace into a replay program, the replayer's work
// before any run: events/s from file to program and the process's peak
// memory per event.
//   bazel run -c opt //replayer:decode_benchmark -- /tmp/big.trace
// (prints one line; the figures of issue 9's closing note come from it).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "replayer/replay_program.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: decode_benchmark TRACE\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<alloctrace::ReplayProgram> p = alloctrace::LoadReplayProgram(argv[1]);
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
  const double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                     ru.ru_stime.tv_usec / 1e6;
  std::printf(
      "%s: %.0f ops in %.2f s wall, %.2f s CPU: %.1f M ops/s wall, %.1f M ops/s CPU "
      "decode+build; peak RSS %.0f MiB, %.1f bytes/op (program %.1f bytes/op)\n",
      argv[1], events, seconds, cpu, events / seconds / 1e6, events / cpu / 1e6, peak / (1 << 20),
      events > 0 ? peak / events : 0.0,
      events > 0 ? (p->ops.capacity() * sizeof(alloctrace::ReplayOp)) / events : 0.0);
  return 0;
}
