// The serving children of served windows (served_children.h).
#include "alloctrace/replayer/measure/served_children.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "alloctrace/replayer/engine/child_request.h"

namespace alloctrace::measure_internal {

void ServedChildren::EndIdle(int round) {
  for (auto it = servers_.begin(); it != servers_.end();) {
    it = it->second.round < round - 1 ? servers_.erase(it) : std::next(it);
  }
}

absl::StatusOr<RunResult> ServedChildren::Serve(size_t i, int round, const ReplayWindow& window,
                                                const std::string& word, const ChildLimits& limits,
                                                std::vector<std::string> argv,
                                                const std::string& preload) {
  Server& server = servers_[i];
  server.round = round;
  if (server.child && (server.child->ended() || server.position > window.begin)) {
    server.child.reset();
  }
  absl::StatusOr<RunResult> r = absl::UnknownError("no serving child");
  if (!server.child) {
    absl::StatusOr<std::unique_ptr<ServingChild>> child = ServingChild::Start(
        std::move(argv), preload, kChildCommandFdWord, kChildResultFdWord, cpu_);
    if (child.ok()) {
      server.child = *std::move(child);
      server.position = 0;
    } else {
      r = child.status();
    }
  }
  if (server.child) {
    BoundMemory(i);
    r = server.child->Serve(word, limits);
    server.position = window.end;
    if (server.child->ended()) server.child.reset();
  }
  return r;
}

void ServedChildren::BoundMemory(size_t serving) {
  if (memory_bytes_ <= 0) return;
  while (true) {
    int64_t total = 0, largest_bytes = -1;
    auto largest = servers_.end();
    for (auto it = servers_.begin(); it != servers_.end(); ++it) {
      if (!it->second.child) continue;
      const int64_t bytes = std::max<int64_t>(0, ResidentAnonBytes(it->second.child->pid()));
      total += bytes;
      if (it->first != serving && bytes > largest_bytes) {
        largest_bytes = bytes;
        largest = it;
      }
    }
    if (total <= memory_bytes_ || largest == servers_.end()) return;
    servers_.erase(largest);
  }
}

}  // namespace alloctrace::measure_internal
