// replayer: replays captured traces through every pool policy and baseline
// allocator, each run in a child process of its own, and reports time,
// working set and page faults per policy.
//
//   bazel run //replayer -- traces/simple_map.trace
//   bazel run //replayer -- --policies='slab/*,malloc,pool/*' --precision=2
//       --format=csv --out=results.csv traces/*.trace
//
// The measurement protocol is in measure/measure.h; this file holds the
// modes of the command line and the writing of the reports. A child run
// (the binary re-executed by the parent) goes to engine/child_main.h.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/replayer/config.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/child_main.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/runnable_policies.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/in_situ_cli.h"
#include "alloctrace/replayer/measure/isolated_run.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/policy_safety.h"
#include "alloctrace/replayer/reports/in_situ_report.h"
#include "alloctrace/replayer/reports/reporters.h"
#include "alloctrace/replayer/verdict/adopt.h"

namespace alloctrace {
namespace {

using allocators::AllAllocators;
using allocators::AllocatorInfo;
using allocators::SelectAllocators;

// Exit statuses (also in --help and docs/usage.md).
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRunFailed = 3;

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "replayer: %s\n", message.c_str());
  return code;
}

std::string Today() {
  char buf[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return buf;
}

// Writes via a temporary file and rename, so a failed run leaves nothing
// half-written.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Writes `text` to `out` ("": standard output).
absl::Status WriteReport(const std::string& text, const std::string& out, bool quiet) {
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return absl::OkStatus();
  }
  absl::Status st = WriteFileAtomically(ResolveUserPath(out), text);
  if (st.ok() && !quiet) std::fprintf(stderr, "replayer: wrote %s\n", out.c_str());
  return st;
}

int Main(int argc, char** argv) {
  // --help lists the replayer's own flags: they are defined in config.cc,
  // not in this file, which is all absl's default --help would show.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "replayer/");
  };
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "replays allocation traces through pool policies and baseline allocators, each run in a\n"
      "fresh process, until the figures reach a stated precision, and says which to use.\n"
      "usage: replayer [flags] TRACE [TRACE...]\n"
      "       replayer [flags] --confirm=N TRACE -- PROGRAM [ARGS...]\n"
      "       replayer [flags] --in_situ --policies=LIST -- PROGRAM [ARGS...]\n"
      "example: bazel run //replayer -- traces/simple_map.trace\n"
      "exit status: 0 every run succeeded; 1 bad input or an I/O error (nothing measured);\n"
      "2 bad usage (an unknown flag or policy, a malformed or out-of-range value); 3 the\n"
      "report was written but a policy FAILED (a run crashed, exited with an error, hit its\n"
      "memory limit or was killed at its time limit).");
  std::string command_line = "replayer";  // as typed, for the HTML report
  for (int i = 1; i < argc; ++i) absl::StrAppend(&command_line, " ", argv[i]);
  std::vector<std::string> program_argv = TakeProgramArgs(argc, argv);  // after "--"
  std::vector<char*> args = ParseCommandLineOrExitUsage(argc, argv, "replayer");
  absl::StatusOr<ReplayerConfig> parsed = ReplayerConfigFromFlags();
  if (!parsed.ok()) return Fail(kExitUsage, std::string(parsed.status().message()));
  const ReplayerConfig& config = *parsed;

  const PolicyInfos policies = allocators::AllocatorInfosByName();

  if (config.list_policies) {
    // --format: table (the default), markdown (the adopt table of the docs)
    // or cc (replayer/verdict/catalog_types.cc, every type compiled); checked by
    // ReplayerConfigFromFlags.
    const std::string& format = config.list_format;
    const std::string text =
        format == "cc" ? CatalogTypesSource(AllAllocators())
                       : FormatPolicyList(AllAllocators(), allocators::DefaultPolicyNames(),
                                          format == "markdown");
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }

  MeasureSettings s = ToMeasureSettings(config);
  const bool use_default = config.policies == "default";
  std::vector<std::string> selected;
  if (use_default) {
    selected = allocators::DefaultPolicyNames();
  } else {
    absl::StatusOr<std::vector<std::string>> sel = SelectAllocators(config.policies);
    if (!sel.ok()) return Fail(kExitUsage, std::string(sel.status().message()));
    selected = *std::move(sel);
  }
  s.progress = !config.quiet && isatty(STDERR_FILENO);

  InSituSettings in_situ;
  if (config.confirm > 0 || config.in_situ || !program_argv.empty()) {
    absl::Status st =
        CheckInSituUsage(config.confirm, config.in_situ, args.size() - 1, program_argv);
    const int code = absl::IsInvalidArgument(st) ? kExitUsage : kExitBadInput;
    if (!st.ok()) return Fail(code, std::string(st.message()));
    in_situ = InSituFromFlags(s, config.in_situ_log, config.run_timeout_seconds);
  }
  if (config.in_situ) {
    absl::StatusOr<InSituSummary> r =
        MeasureInSituOnly(program_argv, selected, in_situ, /*drop_unrunnable=*/use_default);
    if (!r.ok()) return Fail(kExitBadInput, std::string(r.status().message()));
    for (size_t i = 0; i < config.formats.size(); ++i) {
      absl::Status st = WriteReport(WithInSitu(config.formats[i], "", *r, nullptr),
                                    config.outs.empty() ? "" : config.outs[i], config.quiet);
      if (!st.ok()) return Fail(kExitBadInput, std::string(st.message()));
    }
    if (r->failed_policies == 0) return kExitOk;
    return Fail(kExitRunFailed, "a policy FAILED in situ (see the report); exit status 3");
  }

  if (args.size() < 2)
    return Fail(kExitUsage, "no trace file given; usage: replayer [flags] TRACE...");

  // What the machine can give a child, read once before the traces are
  // decoded (the decoded programs take memory too).
  const int64_t machine_cap = MachineMemoryCap();

  // Decode and validate every trace before any timing.
  std::vector<ReplayProgram> programs;
  for (size_t i = 1; i < args.size(); ++i) {
    absl::StatusOr<ReplayProgram> p = LoadReplayProgram(ResolveUserPath(args[i]));
    if (!p.ok()) return Fail(kExitBadInput, std::string(p.status().message()));
    if (!p->cut_short.empty()) {
      std::fprintf(stderr, "replayer: warning: %s: %s; replaying the %llu complete events\n",
                   p->path.c_str(), p->cut_short.c_str(),
                   static_cast<unsigned long long>(p->ops.size()));
    }
    p->path = args[i];  // as the user wrote it, for the report
    programs.push_back(*std::move(p));
  }
  // Split every multi-threaded trace into its threads' streams, also before
  // any timing: a trace with too many threads is refused here.
  std::vector<std::optional<ThreadSchedule>> schedules(programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    const ReplayProgram& program = programs[i];
    if (s.threads == ReplayThreads::kOne || program.threads <= 1 || program.memory_ops() == 0) {
      continue;
    }
    absl::StatusOr<ThreadSchedule> schedule = BuildThreadSchedule(program);
    if (!schedule.ok()) return Fail(kExitBadInput, std::string(schedule.status().message()));
    schedules[i] = *std::move(schedule);
  }

  // Every run is the replayer re-executed: a fresh process whose heap holds
  // nothing of the parent's, mapping the decoded program from a memfd so it
  // decodes and allocates nothing itself. Preloaded mallocs need the exec
  // anyway.
  char self[4096];
  const ssize_t self_len = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string self_path = self_len > 0 ? std::string(self, self_len) : argv[0];

  // Every program is shared before any run: if one cannot be, nothing is
  // measured (an error now, not after the other traces' runs).
  std::vector<int> shared_fds;
  for (const ReplayProgram& program : programs) {
    if (program.memory_ops() == 0) {
      shared_fds.push_back(-1);
      continue;
    }
    absl::StatusOr<int> fd = ShareReplayView(ViewOf(program));
    if (!fd.ok())
      return Fail(kExitBadInput, absl::StrCat(program.path, ": ", fd.status().message()));
    shared_fds.push_back(*fd);
  }
  // And so is every thread schedule (-1: the trace replays serialized).
  std::vector<int> schedule_fds(programs.size(), -1);
  for (size_t i = 0; i < programs.size(); ++i) {
    if (!schedules[i]) continue;
    absl::StatusOr<int> fd = ShareThreadSchedule(*schedules[i]);
    if (!fd.ok()) {
      return Fail(kExitBadInput, absl::StrCat(programs[i].path, ": ", fd.status().message()));
    }
    schedule_fds[i] = *fd;
  }

  std::vector<TraceReport> reports;
  bool any_failed = false;
  for (size_t i = 0; i < programs.size(); ++i) {
    const ReplayProgram& program = programs[i];
    if (program.memory_ops() == 0) {
      // Nothing to time: say so rather than rank zeros.
      reports.push_back(Summarize(program, {}, PolicyRuns{}, s.ctx, 0));
      continue;
    }
    s.limits = ChildLimitsFor(config, program, machine_cap);
    const int64_t claimed = ChildLimitsFor(config, program, 0).memory_bytes;
    if (!config.quiet && s.limits.memory_bytes < claimed) {
      std::fprintf(stderr,
                   "replayer: note: %s: each child's memory limit is %.0f MiB, half the memory "
                   "available, not the %.0f MiB the trace's ideal peak would allow "
                   "(--memory_limit_mb)\n",
                   program.path.c_str(), static_cast<double>(s.limits.memory_bytes) / (1 << 20),
                   static_cast<double>(claimed) / (1 << 20));
    }
    const std::vector<std::string> names =
        use_default ? SafeVariants(selected, program.arena_usage) : selected;
    TraceReport report =
        MeasureTrace(program, names, use_default, policies, self_path, s, shared_fds[i],
                     schedules[i] ? &*schedules[i] : nullptr, schedule_fds[i]);
    close(shared_fds[i]);
    if (schedule_fds[i] >= 0) close(schedule_fds[i]);
    any_failed |= report.failed_policies > 0;
    reports.push_back(std::move(report));
  }

  if (config.confirm > 0 && !reports[0].no_memory_ops) {
    absl::Status st = Confirm(reports[0], config.confirm, program_argv, in_situ);
    if (!st.ok()) return Fail(kExitBadInput, std::string(st.message()));
    any_failed |= reports[0].in_situ->failed_policies > 0;
  }

  s.ctx.machine = DescribeMachine();
  s.ctx.date = Today();
  const ReportInput input{reports, programs, s.ctx, command_line};
  for (size_t i = 0; i < config.formats.size(); ++i) {
    std::string text = FindReportFormat(config.formats[i])->render(input);
    if (config.confirm > 0 && reports[0].in_situ != nullptr) {
      text = WithInSitu(config.formats[i], text, *reports[0].in_situ, &reports[0]);
    }
    absl::Status st = WriteReport(text, config.outs.empty() ? "" : config.outs[i], config.quiet);
    if (!st.ok()) return Fail(kExitBadInput, std::string(st.message()));
  }
  if (any_failed) {
    std::fprintf(stderr, "replayer: a policy FAILED (see the report); exit status %d\n",
                 kExitRunFailed);
    return kExitRunFailed;
  }
  return kExitOk;
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) {
  // A child run (the measuring parent re-executed this binary): one policy,
  // one run, its result to the parent.
  if (alloctrace::IsChildInvocation(argc, argv)) {
    return alloctrace::ChildMain(argc, argv, alloctrace::RunnablePolicies());
  }
  return alloctrace::Main(argc, argv);
}
