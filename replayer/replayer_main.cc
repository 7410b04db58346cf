// replayer: replays captured traces through every pool policy and baseline
// allocator, each run in a child process of its own, and reports time,
// working set and page faults per policy.
//
//   bazel run //replayer -- traces/simple_map.trace
//   bazel run //replayer -- --policies='slab/*,malloc,pool/*' --precision=2
//       --format=csv --out=results.csv traces/*.trace
//
// This file is the command line's modes: --list-policies, --in_situ, and the
// replay (with --confirm). The measurement is measure/measure.h, the verdict
// verdict/summary.h, the formats reports/reporters.h; a child run (the
// binary re-executed by the parent) goes to engine/child_main.h.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/output_file.h"
#include "alloctrace/base/scoped_fd.h"
#include "alloctrace/replayer/config.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/child_main.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/runnable_policies.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/in_situ_cli.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/policy_safety.h"
#include "alloctrace/replayer/per_container/search.h"
#include "alloctrace/replayer/reports/reporters.h"
#include "alloctrace/replayer/verdict/adopt.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {
namespace {

// Exit statuses (also in --help and docs/usage.md).
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRunFailed = 3;

constexpr char kUsage[] =
    "replays allocation traces through pool policies and baseline allocators, each run in a\n"
    "fresh process, until the figures reach a stated precision, and says which to use.\n"
    "usage: replayer [flags] TRACE [TRACE...]\n"
    "       replayer [flags] [--confirm=N] TRACE -- PROGRAM [ARGS...]\n"
    "       replayer [flags] --in_situ [--policies=LIST] -- PROGRAM [ARGS...]\n"
    "example: bazel run //replayer -- traces/simple_map.trace\n"
    "exit status: 0 a verdict was made (a policy past its memory or time limit is a row\n"
    "that says so, an outcome, not a failure); 1 bad input or an I/O error (nothing\n"
    "measured); 2 bad usage (an unknown flag or policy, a malformed or out-of-range\n"
    "value); 3 the report was written but a policy FAILED (a run crashed or exited with\n"
    "an error; in situ, any failed run) or no policy could be recommended.";

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

// Writes `text` to `out` ("": standard output), base/output_file.h's way.
absl::Status WriteReport(const std::string& text, const std::string& out, bool quiet) {
  if (out.empty()) return WriteStandardOutput(text);
  absl::Status st = WriteOutputFile(ResolveUserPath(out), text);
  if (st.ok() && !quiet) std::fprintf(stderr, "replayer: wrote %s\n", out.c_str());
  return st;
}

// The command line, parsed.
struct Command {
  ReplayerConfig config;
  std::vector<std::string> traces;    // as typed
  std::vector<std::string> program;   // after "--": the program to run in situ
  std::string command_line;           // as typed, for the HTML report
  std::vector<std::string> selected;  // --policies, selected
  bool use_default = false;           // --policies=default
  bool progress = false;              // progress on stderr (a terminal, not --quiet)
};

// The --out files checked before anything is measured: each a place a
// report can go, none named twice, none a trace being read. Returns an
// exit status, or -1 to go on.
int CheckOutputs(const Command& cmd) {
  std::vector<std::string> inputs;
  for (const std::string& t : cmd.traces) inputs.push_back(ResolveUserPath(t));
  const std::vector<std::string>& outs = cmd.config.outs;
  std::vector<std::string> paths;  // "": standard output
  for (const std::string& out : outs) paths.push_back(out.empty() ? out : ResolveUserPath(out));
  if (const size_t twice = FindRepeatedOutput(paths); twice != std::string::npos) {
    return Fail(kExitUsage, absl::StrCat("--out names ", outs[twice],
                                         " twice: each --format needs a file of its own"));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].empty()) continue;  // standard output
    const absl::Status st = CheckOutputFile(paths[i], inputs);
    if (st.ok()) continue;
    std::string why(st.message());
    if (outs.size() == 1 && absl::StrContains(outs[i], ",")) {
      absl::StrAppend(&why, " (one --format takes one --out file; the comma is part of its name)");
    }
    return Fail(absl::IsInvalidArgument(st) ? kExitUsage : kExitBadInput,
                why + "; nothing measured");
  }
  // The program's log is appended to, never replaced, but not over a trace.
  if (!cmd.config.in_situ_log.empty()) {
    const absl::Status st = CheckOutputFile(ResolveUserPath(cmd.config.in_situ_log), inputs);
    if (!st.ok()) {
      return Fail(absl::IsInvalidArgument(st) ? kExitUsage : kExitBadInput,
                  absl::StrCat("--in_situ_log: ", st.message(), "; nothing measured"));
    }
  }
  return -1;
}

// Parses argv into `cmd`; returns an exit status, or -1 to go on.
int ParseCommand(int argc, char** argv, Command& cmd) {
  cmd.command_line = "replayer";
  for (int i = 1; i < argc; ++i) absl::StrAppend(&cmd.command_line, " ", argv[i]);
  // A "--" with nothing after it still asks for the search in a program.
  const bool program_asked =
      std::any_of(argv + 1, argv + argc, [](const char* a) { return std::strcmp(a, "--") == 0; });
  cmd.program = TakeProgramArgs(argc, argv);  // after "--"
  std::vector<char*> args = ParseCommandLineOrExitUsage(argc, argv, "replayer");
  cmd.traces.assign(args.begin() + 1, args.end());
  absl::StatusOr<ReplayerConfig> parsed = ReplayerConfigFromFlags();
  if (!parsed.ok()) return Fail(kExitUsage, std::string(parsed.status().message()));
  cmd.config = *std::move(parsed);
  if (cmd.config.list_policies) return CheckOutputs(cmd);
  cmd.use_default = cmd.config.policies == "default";
  if (cmd.use_default) {
    cmd.selected = allocators::DefaultPolicyNames();
  } else {
    absl::StatusOr<std::vector<std::string>> sel =
        allocators::SelectAllocators(cmd.config.policies);
    if (!sel.ok()) return Fail(kExitUsage, std::string(sel.status().message()));
    cmd.selected = *std::move(sel);
  }
  cmd.progress = !cmd.config.quiet && isatty(STDERR_FILENO);
  cmd.config.measure.progress = cmd.progress;
  if (cmd.config.confirm > 0 || cmd.config.in_situ || program_asked) {
    // A program after "--" with a trace: the search in it.
    absl::Status st =
        CheckInSituUsage(cmd.config.confirm, cmd.config.in_situ, cmd.traces.size(), cmd.program);
    if (!st.ok())
      return Fail(absl::IsInvalidArgument(st) ? kExitUsage : kExitBadInput,
                  std::string(st.message()));
  }
  if (cmd.config.per_container && cmd.config.in_situ) {
    return Fail(kExitUsage, "--per_container needs a trace (its class table); not with --in_situ");
  }
  if (!cmd.config.shipped_build.empty() && (cmd.program.empty() || cmd.config.in_situ)) {
    return Fail(kExitUsage,
                "--shipped_build needs a trace (its class table names the aliases) and the "
                "program: replayer --shipped_build=COMMAND TRACE -- PROGRAM [ARGS...]");
  }
  if (!cmd.config.in_situ && cmd.traces.empty()) {
    return Fail(kExitUsage, "no trace file given; usage: replayer [flags] TRACE...");
  }
  return CheckOutputs(cmd);
}

// --list-policies: the table, the adopt table (markdown) or the C++ file
// that compiles every type (cc).
int ListPolicies(const ReplayerConfig& c) {
  using allocators::AllAllocators;
  const std::string text = c.list_format == ListFormat::kCc
                               ? CatalogTypesSource(AllAllocators())
                               : FormatPolicyList(AllAllocators(), allocators::DefaultPolicyNames(),
                                                  c.list_format == ListFormat::kMarkdown);
  if (absl::Status st = WriteReport(text, c.outs.empty() ? "" : c.outs[0], c.quiet); !st.ok()) {
    return Fail(kExitBadInput, std::string(st.message()));
  }
  return kExitOk;
}

// Writes every --format; an I/O error is the exit status.
int WriteReports(const Command& cmd, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) {
    absl::Status st =
        WriteReport(texts[i], cmd.config.outs.empty() ? "" : cmd.config.outs[i], cmd.config.quiet);
    if (!st.ok()) return Fail(kExitBadInput, std::string(st.message()));
  }
  return kExitOk;
}

// --in_situ: the program under --policies, no replay.
int InSituOnly(const Command& cmd) {
  absl::StatusOr<InSituSummary> r = MeasureInSituOnly(
      cmd.program, cmd.use_default ? std::vector<std::string>() : cmd.selected,
      InSituFromConfig(cmd.config, cmd.progress), /*drop_unrunnable=*/cmd.use_default);
  if (!r.ok()) return Fail(kExitBadInput, std::string(r.status().message()));
  const std::vector<TraceReport> no_reports;
  const std::vector<ReplayProgram> no_programs;
  const ReportInput input{no_reports, no_programs, ReportContextFor(cmd.config), cmd.command_line,
                          &*r};
  std::vector<std::string> texts;
  for (const std::string& format : cmd.config.formats) {
    texts.push_back(FindReportFormat(format)->render(input));
  }
  if (const int code = WriteReports(cmd, texts); code != kExitOk) return code;
  if (r->failed_policies == 0) return kExitOk;
  return Fail(kExitRunFailed, "a policy FAILED in situ (see the report); exit status 3");
}

// Decodes and validates `path`, splits it per thread where
// ReplaysPerThread says so, and shares both (memfds the children map).
// Errors name the file.
absl::StatusOr<SharedProgram> LoadAndShare(const std::string& path, const ReplayerConfig& c) {
  SharedProgram t;
  absl::StatusOr<ReplayProgram> p = LoadReplayProgram(ResolveUserPath(path));
  if (!p.ok()) return p.status();
  t.program = *std::move(p);
  if (!t.program.cut_short.empty() && t.program.ops.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": truncated: ", t.program.cut_short,
                     "; no complete chunk before the cut, nothing to replay"));
  }
  if (!t.program.cut_short.empty()) {
    std::fprintf(stderr, "replayer: warning: %s: %s; replaying the %llu complete events\n",
                 t.program.path.c_str(), t.program.cut_short.c_str(),
                 static_cast<unsigned long long>(t.program.ops.size()));
  }
  t.program.path = path;  // as the user wrote it, for the report
  if (t.program.memory_ops() == 0) return t;
  if (t.program.threads > 1) {
    // Built however the trace replays: how many frees cross threads is the
    // program's, and the verdict's caution reads it. Replayed on one
    // thread, a trace the per-thread replay would refuse (over 1024
    // threads) goes without the count.
    absl::StatusOr<ThreadSchedule> schedule = BuildThreadSchedule(t.program);
    const bool per_thread = ReplaysPerThread(c.threads, t.program.threads, t.program.arena_events);
    if (!schedule.ok() && per_thread) return schedule.status();
    if (schedule.ok()) {
      t.cross_thread_frees = schedule->cross_thread_frees;
      if (per_thread) t.schedule = *std::move(schedule);
    }
  }
  absl::StatusOr<int> fd = ShareReplayView(ViewOf(t.program));
  if (!fd.ok())
    return absl::Status(fd.status().code(), absl::StrCat(path, ": ", fd.status().message()));
  ScopedFd program_fd(*fd);  // closed if the schedule cannot be shared
  if (t.schedule) {
    absl::StatusOr<int> sfd = ShareThreadSchedule(*t.schedule);
    if (!sfd.ok())
      return absl::Status(sfd.status().code(), absl::StrCat(path, ": ", sfd.status().message()));
    t.schedule_fd = *sfd;
  }
  t.program_fd = program_fd.Release();
  return t;
}

// The path of this binary, which every child run re-executes.
std::string SelfPath(const char* argv0) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : argv0;
}

// Every policy's runs on one trace, then the verdict.
TraceReport MeasureOne(const Command& cmd, const SharedProgram& t, const std::string& self,
                       int64_t machine_cap) {
  const ReplayProgram& program = t.program;
  ReportContext ctx = ReportContextFor(cmd.config);
  MeasuredTrace measured;
  if (t.program_fd < 0) {  // nothing to time: say so rather than rank zeros
    measured.trace = TraceFactsOf(program);
    return Summarize(measured, ctx);
  }
  MeasureSettings s = cmd.config.measure;
  // --touch=auto walks a collector's live blocks, in whole runs.
  s.run_options.touch = ctx.touch = TouchFor(s, t);
  if (s.run_options.touch == Touch::kWalk) s.windows = WindowsMode::kNever;
  s.rounds.limits = ChildLimitsFor(cmd.config, program, machine_cap);
  s.served_memory_bytes = machine_cap;
  const int64_t claimed = ChildLimitsFor(cmd.config, program, 0).memory_bytes;
  if (!cmd.config.quiet && s.rounds.limits.memory_bytes < claimed) {
    std::fprintf(stderr,
                 "replayer: note: %s: each child's memory limit is %.0f MiB, half the memory "
                 "available, not the %.0f MiB the trace's ideal peak would allow "
                 "(--memory_limit_mb)\n",
                 program.path.c_str(),
                 static_cast<double>(s.rounds.limits.memory_bytes) / (1 << 20),
                 static_cast<double>(claimed) / (1 << 20));
  }
  const std::vector<std::string> names =
      cmd.use_default ? SafeVariants(cmd.selected, program.arena_usage) : cmd.selected;
  const PolicyInfos infos = allocators::AllocatorInfosByName();
  const auto t0 = std::chrono::steady_clock::now();
  measured = MeasureTrace(t, names, cmd.use_default, infos, self, s);
  TraceReport report = Summarize(measured, ctx);
  // With the program at hand, the program decides per container too
  // (Replay: SearchPerContainer in the program), not the replay.
  if (cmd.config.per_container && cmd.program.empty()) {
    SearchSettings search;
    search.min_share = cmd.config.min_share;
    search.single_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report.per_container = std::make_shared<const PerContainerVerdict>(
        SearchPerContainer(t, report, infos, self, s, ctx, search));
  }
  return report;
}

// The replay of every trace (and with --confirm, the program in situ).
int Replay(const Command& cmd, const char* argv0) {
  // What the machine can give a child, read once before the traces are
  // decoded (the decoded programs take memory too).
  const int64_t machine_cap = MachineMemoryCap();
  // Every trace is decoded, validated and shared before any run: a bad one
  // is an error now, not after the other traces' runs.
  std::vector<SharedProgram> traces;
  for (const std::string& path : cmd.traces) {
    absl::StatusOr<SharedProgram> t = LoadAndShare(path, cmd.config);
    if (!t.ok()) return Fail(kExitBadInput, std::string(t.status().message()));
    traces.push_back(*std::move(t));
  }
  // The shipped build pastes one alias line per class of containers: a
  // trace that names none (a whole-program capture) has nothing to build,
  // which is said now, not after the replay.
  if (!cmd.config.shipped_build.empty() &&
      std::none_of(traces[0].program.classes.begin(), traces[0].program.classes.end(),
                   [](const auto& c) { return c.first != 0; })) {
    return Fail(kExitBadInput,
                absl::StrCat(cmd.traces[0],
                             ": --shipped_build pastes an alias line per class of containers, and "
                             "the trace names none (a whole program's capture: its malloc is "
                             "adopted by preloading it); nothing measured"));
  }
  const std::string self = SelfPath(argv0);
  std::vector<TraceReport> reports;
  std::vector<ReplayProgram> programs;
  bool any_failed = false;
  for (SharedProgram& t : traces) {
    // The trace's memfds, closed once its runs are done.
    const ScopedFd program_fd(t.program_fd), schedule_fd(t.schedule_fd);
    reports.push_back(MeasureOne(cmd, t, self, machine_cap));
    // A crash or an error of a policy's run, or no verdict at all (every
    // contender failed or passed a limit, or the trace holds no memory op
    // to time), makes exit status 3; a policy stopped at a limit is a
    // measured outcome (its row says so).
    const TraceReport& r = reports.back();
    any_failed |= r.failed_policies > 0 || r.verdict.recommended.empty();
    programs.push_back(std::move(t.program));
  }
  if (!cmd.program.empty() && !reports[0].no_memory_ops()) {
    const InSituSettings settings = InSituFromConfig(cmd.config, cmd.progress, &programs[0]);
    absl::Status st = Search(reports[0], cmd.config.confirm, cmd.program, settings);
    if (!st.ok()) {
      if (settings.shipped != nullptr) settings.shipped->Restore();
      return Fail(kExitBadInput, std::string(st.message()));
    }
    any_failed |= reports[0].in_situ->failed_policies > 0;
    if (cmd.config.per_container) {
      SearchPerContainer(reports[0], programs[0], cmd.program, settings, cmd.config.min_share);
    }
    if (settings.shipped != nullptr) settings.shipped->Restore();
  }
  ReportContext ctx = ReportContextFor(cmd.config);
  ctx.machine = DescribeMachine();
  ctx.date = Today();
  const ReportInput input{reports, programs, ctx, cmd.command_line};
  std::vector<std::string> texts;
  for (const std::string& format : cmd.config.formats) {
    texts.push_back(FindReportFormat(format)->render(input));
  }
  if (const int code = WriteReports(cmd, texts); code != kExitOk) return code;
  if (!any_failed) return kExitOk;
  std::fprintf(
      stderr,
      "replayer: a policy FAILED, or none could be recommended (see the report); exit status %d\n",
      kExitRunFailed);
  return kExitRunFailed;
}

int Main(int argc, char** argv) {
  // --help lists the replayer's own flags: they are defined in config.cc,
  // not in this file, which is all absl's default --help would show.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "replayer/");
  };
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(kUsage);
  Command cmd;
  if (const int code = ParseCommand(argc, argv, cmd); code >= 0) return code;
  if (cmd.config.list_policies) return ListPolicies(cmd.config);
  if (cmd.config.in_situ) return InSituOnly(cmd);
  return Replay(cmd, argv[0]);
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) {
  // A child run (the measuring parent re-executed this binary): one policy,
  // one run, its result to the parent.
  if (alloctrace::IsChildInvocation(argc, argv)) {
    return alloctrace::ChildMain(argc, argv, alloctrace::RunnablePolicies());
  }
  // A probe (measure/isolated_run.h: ProcessCost): a process that starts
  // and ends, under a malloc's preload or without.
  if (alloctrace::IsProbeInvocation(argc, argv)) return 0;
  return alloctrace::Main(argc, argv);
}
