#include "alloctrace/replayer/in_situ_cli.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/replayer/in_situ/per_container_search.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {

absl::Status CheckInSituUsage(int confirm, bool in_situ_only, size_t traces,
                              std::vector<std::string>& program) {
  // What is wrong first, then the two forms.
  std::string what;
  if (confirm < 0 || confirm > 100) {
    what = absl::StrCat("--confirm=", confirm, ": must be 1 to 100");
  } else if (confirm > 0 && in_situ_only) {
    what = "--confirm goes with a trace; --in_situ runs the program without one";
  } else if (program.empty()) {
    what = in_situ_only || confirm > 0
               ? absl::StrCat(in_situ_only ? "--in_situ" : "--confirm",
                              " needs the program to run: -- PROGRAM [ARGS...]")
               : "-- is followed by no program";
  } else if (in_situ_only && traces != 0) {
    what = absl::StrCat("--in_situ takes no trace (got ", traces, ")");
  } else if (!in_situ_only && traces != 1) {
    what = absl::StrCat("the search in the program takes one trace (got ", traces, ")");
  }
  if (!what.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        "; usage: replayer [--confirm=N] TRACE -- PROGRAM [ARGS...] (one trace; N 1 to 100), or "
        "replayer --in_situ [--policies=LIST] -- PROGRAM [ARGS...] (no trace)"));
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

InSituSettings InSituFromConfig(const ReplayerConfig& c, bool progress,
                                const ReplayProgram* program) {
  const RoundsSettings& r = c.measure.rounds;
  InSituSettings in;
  in.min_runs = r.min_runs;
  in.max_runs = r.max_runs;
  in.precision = r.precision;
  in.budget_seconds = r.budget_seconds;
  in.timeout_seconds = c.run_timeout_seconds;
  in.rss_slack = ReportContextFor(c).rss_slack;
  // --clock=auto is CPU time here: an in-situ run's cpu_s is the whole
  // process's, every thread's (auto's wall time is for the per-thread replay).
  in.clock = ResolveClock(c.measure.clock, /*replay_threads=*/1, /*cores=*/1);
  in.seed = r.seed;
  in.race = r.race;
  in.total_budget_seconds = c.in_situ_budget_seconds;
  in.max_total_runs = c.in_situ_runs;
  in.progress = progress;
  in.progress_lines = c.measure.progress_lines;
  in.log_path = c.in_situ_log.empty() ? "" : ResolveUserPath(c.in_situ_log);
  const std::string probe = HelperPath("libmalloc_probe.so");
  if (access(probe.c_str(), R_OK) == 0) in.probe_library = probe;
  in.launcher = HelperPath("in_situ_launcher");
  if (!c.shipped_build.empty() && program != nullptr) {
    std::vector<ClassDef> classes;
    for (const auto& [id, def] : program->classes) classes.push_back(def);
    in.shipped = std::make_shared<ShippedBuilds>(
        c.shipped_build, std::move(classes),
        ResolveUserPath(absl::StrCat("alloctrace-builds.", getpid(), ".log")));
    in.shipped->set_progress(progress || in.progress_lines);
  }
  return in;
}

absl::StatusOr<InSituSummary> MeasureInSituOnly(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& names,
                                                const InSituSettings& settings,
                                                bool drop_unrunnable) {
  std::vector<InSituCandidate> candidates;
  for (const std::string& name : names.empty() ? FamilyCandidates() : names) {
    InSituCandidate c = CandidateFor(name);
    if (c.skipped.empty() || !drop_unrunnable) candidates.push_back(std::move(c));
  }
  absl::StatusOr<InSituSummary> r = MeasureInSitu(argv, std::move(candidates), settings);
  if (r.ok()) DecideInSitu(*r, "", settings.rss_slack);
  return r;
}

absl::Status Search(TraceReport& replay, int leaders, const std::vector<std::string>& argv,
                    const InSituSettings& settings) {
  std::vector<InSituCandidate> candidates;
  for (const std::string& name :
       SearchCandidates(replay, leaders > 0 ? leaders : kDefaultLeaders)) {
    candidates.push_back(CandidateFor(name));
  }
  absl::StatusOr<InSituSummary> r = MeasureInSitu(argv, std::move(candidates), settings);
  if (!r.ok()) return r.status();
  DecideInSitu(*r, replay.verdict.recommended, settings.rss_slack);
  ApplyInSitu(replay, std::make_shared<const InSituSummary>(*std::move(r)));
  return absl::OkStatus();
}

void SearchPerContainer(TraceReport& replay, const ReplayProgram& program,
                        const std::vector<std::string>& argv, const InSituSettings& settings,
                        double min_share) {
  if (replay.in_situ == nullptr) return;
  replay.per_container = std::make_shared<const PerContainerVerdict>(
      SearchPerContainerInProgram(program, *replay.in_situ, argv, settings, min_share));
}

}  // namespace alloctrace
