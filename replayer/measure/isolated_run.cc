#include "alloctrace/replayer/measure/isolated_run.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/run_result_wire.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {
namespace {

// A child to run `argv`, `preload` first in its LD_PRELOAD.
ChildSpec SpecFor(std::vector<std::string> argv, const std::string& preload, int cpu) {
  ChildSpec spec;
  spec.argv = std::move(argv);
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
  return spec;
}

// A child's end as the status RunInFreshChild documents; OK for a clean
// exit.
absl::Status EndStatus(const ChildExit& end, const ChildLimits& limits) {
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
  return absl::OkStatus();
}

// Writes `s` to a pipe whose reader may be gone, without the SIGPIPE that
// would end this process (a write to it then fails, and the pending signal
// is taken).
void WriteToPipe(int fd, const std::string& s) {
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  if (WriteAll(fd, s) != 0) {
    const struct timespec now = {0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

int ReplayCpu() {
  const std::vector<int> cpus = AllowedCpus();
  return cpus.empty() ? -1 : cpus.back();
}

absl::StatusOr<double> ProcessCost(const std::vector<std::string>& probe,
                                   const std::string& preload, int rounds, int on_cpu) {
  const ChildLimits limits{/*wall_seconds=*/30, /*memory_bytes=*/0};
  std::vector<double> differences;
  for (int round = 0; round < rounds; ++round) {
    double cpu[2] = {0, 0};
    for (int turn = 0; turn < 2; ++turn) {
      const int with = (turn + round) % 2;
      ChildSpec spec = SpecFor(probe, with == 1 ? preload : "", on_cpu);
      spec.stdin_null = true;
      absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
      if (!child.ok()) return child.status();
      const ChildExit end = child->Wait(limits);
      if (!end.Succeeded()) {
        return absl::AbortedError(
            absl::StrCat(probe[0], " started ", with == 1 ? "with " + preload : "alone",
                         " to time a process's start and end ", ChildExitWords(end, limits)));
      }
      cpu[with] = end.CpuSeconds();
    }
    differences.push_back(cpu[1] - cpu[0]);
  }
  // Never below 0: a median under it says the library added nothing
  // measurable, or sped up the probe's own start-up allocations, which are
  // the replayer's, not the traced program's. Counted as it was, on a
  // capture of about 300 calls (a cold pass of about 0.1 ms) it could take
  // every cold figure of that malloc below 0, where they are dropped.
  return differences.empty() ? 0.0 : std::max(0.0, Median(std::move(differences)));
}

absl::StatusOr<RunResult> RunInFreshChild(std::vector<std::string> argv, const std::string& preload,
                                          const std::string& result_word, const ChildLimits& limits,
                                          int cpu) {
  absl::StatusOr<Pipe> result = Pipe::Make();
  if (!result.ok()) return result.status();
  argv.push_back(absl::StrCat(result_word, result->write.get()));
  ChildSpec spec = SpecFor(std::move(argv), preload, cpu);
  spec.inherit_fds = {result->write.get()};
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  result->write.Reset();  // the child's copy is the only writer: its end is EOF
  if (!child.ok()) return absl::NotFoundError(child.status().message());
  std::string line;
  const ChildExit end = child->Wait(limits, result->read.get(), &line);
  if (absl::Status status = EndStatus(end, limits); !status.ok()) return status;
  return ParseRunResult(line);
}

absl::StatusOr<std::unique_ptr<ServingChild>> ServingChild::Start(std::vector<std::string> argv,
                                                                  const std::string& preload,
                                                                  const std::string& command_word,
                                                                  const std::string& result_word,
                                                                  int cpu) {
  absl::StatusOr<Pipe> commands = Pipe::Make();
  if (!commands.ok()) return commands.status();
  absl::StatusOr<Pipe> results = Pipe::Make();
  if (!results.ok()) return results.status();
  argv.push_back(absl::StrCat(command_word, commands->read.get()));
  argv.push_back(absl::StrCat(result_word, results->write.get()));
  ChildSpec spec = SpecFor(std::move(argv), preload, cpu);
  spec.inherit_fds = {commands->read.get(), results->write.get()};
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  commands->read.Reset();
  results->write.Reset();
  if (!child.ok()) return absl::NotFoundError(child.status().message());
  return std::unique_ptr<ServingChild>(
      new ServingChild(*std::move(child), std::move(commands->write), std::move(results->read)));
}

absl::StatusOr<RunResult> ServingChild::Serve(const std::string& request,
                                              const ChildLimits& limits) {
  if (ended_) return absl::FailedPreconditionError("the serving child has ended");
  std::string words;
  size_t used = 0;
  auto answered = [&] { return TakeFramedWords(received_, &words, &used); };
  // A child that ended before reading the request is seen by WaitFor.
  WriteToPipe(command_fd_.get(), absl::StrCat(request, "\n"));
  std::optional<ChildExit> end;
  if (!answered()) end = child_.WaitFor(limits, result_fd_.get(), &received_, answered);
  if (end) {
    ended_ = true;
    absl::Status status = EndStatus(*end, limits);
    if (!answered()) {
      return status.ok() ? absl::AbortedError("the serving child ended without an answer") : status;
    }
    if (!status.ok()) return status;
  }
  received_.erase(0, used);
  absl::StatusOr<RunResult> r = ParseRunResult(words);
  if (!r.ok() || r->error.failed()) ended_ = true;  // a child that erred ends
  return r;
}

}  // namespace alloctrace
