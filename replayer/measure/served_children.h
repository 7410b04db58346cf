// The serving children of served windows (engine/window_server.h): a
// process per contender, alive through the rounds, asked for each round's
// window, started anew where it has none or has replayed past the window
// (a new cycle of rounds: a new replay from the trace's first op). The
// replay's runner (replay_runner.h) keeps the runs' records; this keeps
// the processes, and their resident memory within a bound.
//
// Thread-safety: single-threaded; ending a child kills and waits for it.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_SERVED_CHILDREN_H_
#define ALLOCTRACE_REPLAYER_MEASURE_SERVED_CHILDREN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/windows.h"
#include "alloctrace/replayer/measure/isolated_run.h"

namespace alloctrace::measure_internal {

class ServedChildren {
 public:
  // `memory_bytes`: what the children may hold resident together (0: no
  // bound; MeasureSettings::served_memory_bytes); `cpu`: the CPU they run
  // on (-1: where the scheduler puts them).
  ServedChildren(int64_t memory_bytes, int cpu) : memory_bytes_(memory_bytes), cpu_(cpu) {}

  // Ends the serving children of contenders that did not run in the round
  // before `round` (done: the rounds run every contender not done), so
  // their heaps do not stay resident through the rest of the rounds.
  void EndIdle(int round);

  // Contender i's window `window` of round `round` (`word`: the round's
  // windows word), served by its child under `limits`; the child is
  // started, as `argv` with `preload`, where it has none or is past the
  // window. A child that ended or failed is dropped.
  absl::StatusOr<RunResult> Serve(size_t i, int round, const ReplayWindow& window,
                                  const std::string& word, const ChildLimits& limits,
                                  std::vector<std::string> argv, const std::string& preload);

  // Ends every serving child (their memory back before the whole runs).
  void EndAll() { servers_.clear(); }

 private:
  // A serving child, and where its replay stands.
  struct Server {
    std::unique_ptr<ServingChild> child;
    uint64_t position = 0;  // the op its replay has reached
    int round = 0;          // the last round it served
  };

  // Holds the children's resident memory together within memory_bytes_:
  // the largest ends (not contender `serving`'s) until they fit.
  void BoundMemory(size_t serving);

  int64_t memory_bytes_;
  int cpu_;
  std::map<size_t, Server> servers_;  // by contender
};

}  // namespace alloctrace::measure_internal

#endif  // ALLOCTRACE_REPLAYER_MEASURE_SERVED_CHILDREN_H_
