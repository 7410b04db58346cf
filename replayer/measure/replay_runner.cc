// The replay's runs for the rounds (replay_runner.h): a child per run,
// re-runs of disturbed runs, served windows, whole runs.
#include "alloctrace/replayer/measure/replay_runner.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/measure/isolated_run.h"

namespace alloctrace::measure_internal {
namespace {

// Whether a failed run was stopped at the time or memory limit, or ran
// out of memory (under the child's data limit, too): what the limits are
// for, not a fault.
bool OverLimit(const absl::StatusOr<RunResult>& r) {
  if (!r.ok()) return absl::IsDeadlineExceeded(r.status()) || absl::IsResourceExhausted(r.status());
  return r->error.Kind() == RunErrorKind::kOutOfMemory;
}

}  // namespace

ReplayRunner::ReplayRunner(std::vector<Entry>& entries, const std::string& self,
                           const SharedProgram& shared, const MeasureSettings& s,
                           const Ranking& ranking, Disturbance& disturbance, Sampling* sampling)
    : entries_(entries),
      self_(self),
      shared_fd_(shared.program_fd),
      schedule_fd_(shared.schedule ? shared.schedule_fd : -1),
      s_(s),
      ranking_(ranking),
      disturbance_(disturbance),
      sampling_(sampling),
      cpu_(schedule_fd_ < 0 ? ReplayCpu() : -1),
      served_(s.served_memory_bytes, cpu_) {}

RunOutcome ReplayRunner::Run(size_t i, int round, const ChildLimits& limits, bool race_limited) {
  if (sampling_ != nullptr && sampling_->served() && !s_.run_child) {
    return RunServed(i, round, limits, race_limited);
  }
  Entry& e = entries_[i];
  RunOutcome o;
  ChildLimits left = limits;
  std::optional<RunRecord> disturbed_before;  // the last attempt, re-run
  double disturbed_seconds = 0;
  for (int attempt = 0;; ++attempt) {
    ++e.runs.attempts;
    ChildRun child =
        RunChild(e, left, sampling_ != nullptr ? sampling_->WordFor(round) : "",
                 sampling_ != nullptr ? sampling_->StatesFdFor(round) : -1, s_.run_options, cpu_);
    o.seconds += child.seconds;
    absl::StatusOr<RunResult>& r = child.result;
    if (disturbed_before && absl::IsDeadlineExceeded(r.status())) {
      ++disturbance_.kept;
      return Keep(e, *std::move(disturbed_before), o, disturbed_seconds);
    }
    if (std::optional<RunOutcome> end = NotKept(e, r, o, race_limited)) return *end;
    RunRecord record = Record(r, round, attempt);
    const bool disturbed = record.disturbed;
    const bool rerun_fits =
        limits.wall_seconds <= 0 || o.seconds + child.seconds <= limits.wall_seconds;
    if (disturbed && attempt < s_.max_reruns && !disturbance_.Busy() && rerun_fits) {
      if (limits.wall_seconds > 0) left.wall_seconds = limits.wall_seconds - o.seconds;
      disturbed_before = std::move(record);
      disturbed_seconds = child.seconds;
      continue;
    }
    disturbance_.kept += disturbed;
    return Keep(e, std::move(record), o, child.seconds);
  }
}

RunOutcome ReplayRunner::RunServed(size_t i, int round, const ChildLimits& limits,
                                   bool race_limited) {
  served_.EndIdle(round);
  Entry& e = entries_[i];
  const ReplayWindow& window = sampling_->WindowsOf(round).front();
  RunOutcome o;
  ++e.runs.attempts;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> argv = ChildArgs(RequestFor(e, "", -1, s_.run_options));
  argv.insert(argv.begin(), self_);
  absl::StatusOr<RunResult> r = served_.Serve(i, round, window, sampling_->WordFor(round), limits,
                                              std::move(argv), e.preload_path);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::optional<RunOutcome> end = NotKept(e, r, o, race_limited)) return *end;
  RunRecord record = Record(r, round, 0);
  disturbance_.kept += record.disturbed;
  return Keep(e, std::move(record), o, o.seconds);
}

double ReplayRunner::WholeRun(size_t i, const ChildLimits& limits) {
  Entry& e = entries_[i];
  RunOptions one_pass = s_.run_options;
  one_pass.max_passes = 1;
  ChildRun child = RunChild(e, limits, "", -1, one_pass, /*cpu=*/-1);
  absl::StatusOr<RunResult>& r = child.result;
  if (!r.ok() || r->error.failed()) {
    e.runs.whole_run_error = r.ok() ? r->error.words : std::string(r.status().message());
    e.runs.whole_run_over_limit = OverLimit(r);
    return child.seconds;
  }
  RunRecord record;
  record.round = -1;
  record.result = *std::move(r);
  e.runs.whole_runs.push_back(std::move(record));
  return child.seconds;
}

std::optional<RunOutcome> ReplayRunner::NotKept(Entry& e, const absl::StatusOr<RunResult>& r,
                                                RunOutcome o, bool race_limited) {
  if (race_limited && absl::IsDeadlineExceeded(r.status())) {
    o.end = RunOutcome::End::kStopped;
    return o;
  }
  if (!r.ok() || r->error.failed()) return Failed(e, r, o);
  return std::nullopt;
}

RunRecord ReplayRunner::Record(absl::StatusOr<RunResult>& r, int round, int reruns) {
  RunRecord record;
  record.round = round;
  record.reruns = reruns;
  record.disturbed = Disturbed(*r);
  ++disturbance_.seen;
  disturbance_.disturbed += record.disturbed;
  record.result = *std::move(r);
  return record;
}

RunOutcome ReplayRunner::Keep(Entry& e, RunRecord record, RunOutcome o, double seconds) const {
  record.result.process_seconds = e.runs.process_seconds;
  o.figure = RunNsPerOp(record.result, ranking_.warm(), ranking_.clock);
  o.run_seconds = seconds;
  e.runs.runs.push_back(std::move(record));
  return o;
}

ChildRequest ReplayRunner::RequestFor(const Entry& e, const std::string& windows, int states_fd,
                                      const RunOptions& options) const {
  ChildRequest request;
  request.policy = e.policy;
  request.program_fd = shared_fd_;
  request.schedule_fd = schedule_fd_;
  request.attempt = e.runs.attempts;
  request.windows = windows;
  request.states_fd = states_fd;
  request.mix = e.mix;
  request.options = options;
  return request;
}

ChildRun ReplayRunner::RunChild(const Entry& e, const ChildLimits& limits,
                                const std::string& windows, int states_fd,
                                const RunOptions& options, int cpu) {
  std::vector<std::string> argv = ChildArgs(RequestFor(e, windows, states_fd, options));
  argv.insert(argv.begin(), self_);
  if (s_.run_child) return s_.run_child(std::move(argv), e.preload_path, limits);
  const auto t0 = std::chrono::steady_clock::now();
  ChildRun c{RunInFreshChild(std::move(argv), e.preload_path, kChildResultFdWord, limits, cpu), 0};
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

RunOutcome ReplayRunner::Failed(Entry& e, const absl::StatusOr<RunResult>& r, RunOutcome o) {
  o.end = RunOutcome::End::kFailed;
  // Past the time or memory limit: another run would be too.
  o.fatal = OverLimit(r);
  if (!r.ok()) {
    o.error = std::string(r.status().message());
  } else {
    o.error = r->error.words;
    // An op the allocator could not serve fails every run.
    o.fatal |= r->error.Kind() == RunErrorKind::kOpFailed;
  }
  ++e.runs.failed;
  e.runs.over_limit += OverLimit(r);
  if (e.runs.first_error.empty()) {
    e.runs.first_error = absl::StrCat("run ", e.runs.attempts, ": ", o.error);
  }
  return o;
}

// Only the passes that rank count: measured on simple_map and
// list_churn, a run disturbed in its other passes reads its ranking
// figure as undisturbed runs do (docs/results.md, "Disturbed runs"). A
// per-thread replay is never counted disturbed: its threads, more than
// the cores on every multi-threaded sample trace, preempt and migrate one
// another, so every run had a switch (2026-11-25: 2223 of 2223 runs of the
// five per-thread traces) and re-runs were waste.
bool ReplayRunner::Disturbed(const RunResult& r) const {
  if (schedule_fd_ >= 0) return false;
  const size_t first = ranking_.warm() ? 1 : 0;
  const size_t last = ranking_.warm() ? r.passes.size() : std::min<size_t>(1, r.passes.size());
  bool disturbed = r.migrations > 0;
  for (size_t i = first; i < last; ++i) disturbed |= r.passes[i].involuntary_switches > 0;
  return disturbed;
}

}  // namespace alloctrace::measure_internal
