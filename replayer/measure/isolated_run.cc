#include "alloctrace/replayer/measure/isolated_run.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/run_result_wire.h"

namespace alloctrace {

absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv, const std::string& preload,
                                          const std::string& result_word, const ChildLimits& limits,
                                          int cpu) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  ChildSpec spec;
  spec.argv = std::move(argv);
  spec.argv.push_back(absl::StrCat(result_word, fds[1]));
  spec.inherit_fds = {fds[1]};
  spec.cpu = cpu;
  if (!preload.empty()) {
    std::vector<std::string> env;
    std::string ld_preload = preload;
    for (std::string& e : CurrentEnvironment()) {
      if (!absl::StartsWith(e, "LD_PRELOAD=")) {
        env.push_back(std::move(e));
      } else if (e.size() > 11) {
        absl::StrAppend(&ld_preload, ":", e.substr(11));
      }
    }
    env.push_back("LD_PRELOAD=" + ld_preload);
    spec.env = std::move(env);
  }
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  close(fds[1]);
  if (!child.ok()) {
    close(fds[0]);
    return absl::NotFoundError(child.status().message());
  }
  std::string line;
  const ChildExit end = child->Wait(limits, fds[0], &line);
  close(fds[0]);
  const std::string words = ChildExitWords(end, limits);
  switch (end.how) {
    case ChildExit::How::kTimedOut:
      return absl::DeadlineExceededError(words);
    case ChildExit::How::kOverMemory:
      return absl::ResourceExhaustedError(absl::StrCat(words, " (--memory_limit_mb)"));
    case ChildExit::How::kSignaled:
      return absl::AbortedError(words);
    case ChildExit::How::kExited:
      if (end.code != 0) return absl::AbortedError(words);
      break;
  }
  return ParseRunResult(line);
}

}  // namespace alloctrace
