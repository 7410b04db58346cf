#include "alloctrace/replayer/in_situ_cli.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>

#include "alloctrace/base/child_process.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {

absl::Status CheckInSituUsage(int confirm, bool in_situ_only, size_t traces,
                              std::vector<std::string>& program) {
  if (confirm < 0 || confirm > 100 || (confirm > 0) == in_situ_only || program.empty() ||
      (confirm > 0 && traces != 1) || (in_situ_only && traces != 0)) {
    return absl::InvalidArgumentError(
        "usage: replayer --confirm=N TRACE -- PROGRAM [ARGS...] (N 1 to 100), or replayer "
        "--in_situ --policies=LIST -- PROGRAM [ARGS...]");
  }
  absl::StatusOr<std::string> path = FindProgram(program[0]);
  if (!path.ok()) return path.status();
  program[0] = *path;
  return absl::OkStatus();
}

std::string HelperPath(const std::string& name) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  dir = dir.substr(0, dir.rfind('/') + 1);
  const std::string beside = dir + name;
#ifdef ALLOCTRACE_HELPER_DIR_FROM_BIN
  // Installed (CMake): bin/alloctrace_replayer, helpers in libexec/alloctrace/.
  if (access(beside.c_str(), F_OK) != 0) {
    const std::string installed = dir + ALLOCTRACE_HELPER_DIR_FROM_BIN "/" + name;
    if (access(installed.c_str(), F_OK) == 0) return installed;
  }
#endif
  return beside;
}

InSituSettings InSituFromConfig(const ReplayerConfig& c, bool progress) {
  const RoundsSettings& r = c.measure.rounds;
  InSituSettings in;
  in.min_runs = r.min_runs;
  in.max_runs = r.max_runs;
  in.precision = r.precision;
  in.budget_seconds = r.budget_seconds;
  in.timeout_seconds = c.run_timeout_seconds;
  in.rss_slack = ReportContext().rss_slack;
  // --clock=auto is CPU time here: an in-situ run's cpu_s is the whole
  // process's, every thread's (auto's wall time is for the per-thread replay).
  in.clock = ResolveClock(c.measure.clock, /*replay_threads=*/1, /*cores=*/1);
  in.seed = r.seed;
  in.progress = progress;
  in.log_path = c.in_situ_log.empty() ? "" : ResolveUserPath(c.in_situ_log);
  const std::string probe = HelperPath("libmalloc_probe.so");
  if (access(probe.c_str(), R_OK) == 0) in.probe_library = probe;
  in.launcher = HelperPath("in_situ_launcher");
  return in;
}

absl::StatusOr<InSituSummary> MeasureInSituOnly(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& names,
                                                const InSituSettings& settings,
                                                bool drop_unrunnable) {
  std::vector<InSituCandidate> candidates;
  for (const std::string& name : names) {
    InSituCandidate c = CandidateFor(name);
    if (c.skipped.empty() || !drop_unrunnable) candidates.push_back(std::move(c));
  }
  absl::StatusOr<InSituSummary> r = MeasureInSitu(argv, std::move(candidates), settings);
  if (r.ok()) DecideInSitu(*r, "", settings.rss_slack);
  return r;
}

namespace {

// The per-container mix as an in-situ candidate: the assignment through
// ALLOCTRACE_POLICY, the heap's malloc preloaded.
InSituCandidate MixCandidate(const PerContainerVerdict& v) {
  InSituCandidate c;
  c.name = kMixCandidate;
  c.policy = v.assignment;
  c.pool_policy = true;
  c.family = allocators::Family::kOurs;
  if (v.heap != "malloc") c.preload = CandidateFor(v.heap).preload;
  return c;
}

// The mix's in-situ runs against the best single choice's and the
// reference's, paired by round, into a copy of `v`.
std::shared_ptr<const PerContainerVerdict> WithInSitu(const PerContainerVerdict& v,
                                                      const InSituSummary& s) {
  auto out = std::make_shared<PerContainerVerdict>(v);
  out->confirmed = true;
  const InSituPolicy* mix = FindInSitu(s, kMixCandidate);
  const InSituPolicy* single = FindInSitu(s, InSituNameOf(v.best_single, s.reference));
  const InSituPolicy* reference = FindInSitu(s, s.reference);
  if (mix == nullptr) return out;
  if (!mix->ok()) {
    // The switch says on stderr why it refused the assignment (a class the
    // program never used, an unknown policy): its last line is the reason.
    out->in_situ_failure = mix->stderr_tail.empty()
                               ? mix->failure
                               : absl::StrCat(mix->failure, ": ", mix->stderr_tail.back());
  }
  if (single != nullptr) out->in_situ_vs_single = PairedSlowdown(*mix, *single, s.clock);
  if (reference != nullptr) out->in_situ_vs_std = PairedSlowdown(*mix, *reference, s.clock);
  return out;
}

}  // namespace

absl::Status Confirm(TraceReport& replay, int n, const std::vector<std::string>& argv,
                     const InSituSettings& settings) {
  std::vector<InSituCandidate> candidates;
  for (const std::string& name : ConfirmCandidates(replay, n)) {
    candidates.push_back(CandidateFor(name));
  }
  // With a per-container verdict whose mix is not the single choice, the
  // mix runs in the same rounds; it is not one of the single verdict's
  // candidates, so it leaves the summary before the decision and joins it
  // after, for its row.
  const PerContainerVerdict* per_container = replay.per_container.get();
  const bool with_mix =
      per_container != nullptr && per_container->why_not.empty() && !per_container->mix_is_single;
  if (with_mix) candidates.push_back(MixCandidate(*per_container));
  absl::StatusOr<InSituSummary> r = MeasureInSitu(argv, std::move(candidates), settings);
  if (!r.ok()) return r.status();
  std::vector<InSituPolicy> mix;
  for (auto it = r->policies.begin(); it != r->policies.end();) {
    if (with_mix && it->name == kMixCandidate) {
      mix.push_back(std::move(*it));
      it = r->policies.erase(it);
    } else {
      ++it;
    }
  }
  DecideInSitu(*r, replay.verdict.recommended, settings.rss_slack);
  for (InSituPolicy& p : mix) r->policies.push_back(std::move(p));
  if (with_mix) replay.per_container = WithInSitu(*per_container, *r);
  ApplyInSitu(replay, std::make_shared<const InSituSummary>(*std::move(r)));
  return absl::OkStatus();
}

}  // namespace alloctrace
