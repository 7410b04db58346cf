// replayer: replays captured traces through every pool policy and baseline
// allocator, each run in a child process of its own, and reports time,
// working set and page faults per policy.
//
//   bazel run //replayer -- traces/simple_map.trace
//   bazel run //replayer -- --policies='slab,malloc,pool/*' --precision=2
//       --format=csv --out=results.csv traces/*.trace
//
// The measurement protocol is in measure.h; this file holds the flags, the
// re-executed child's entry and the writing of the reports.
#include <dlfcn.h>
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
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "replayer/adopt.h"
#include "replayer/allocators/registry.h"
#include "replayer/in_situ_cli.h"
#include "replayer/in_situ_report.h"
#include "replayer/isolated_run.h"
#include "replayer/measure.h"
#include "replayer/os_stats.h"
#include "replayer/policy_safety.h"
#include "replayer/replay_loop.h"
#include "replayer/replay_program.h"
#include "replayer/report.h"
#include "replayer/report_html.h"
#include "base/cli_util.h"

ABSL_FLAG(std::string, policies, "default",
          "comma-separated policy names or globs (* and ?) to run, or 'default': every "
          "baseline but bump, tcmalloc, jemalloc, mimalloc, slab, and the fastest article "
          "policy of each storage kind (picked per trace in a short screen); '*' runs all. "
          "glibc malloc always runs: it is the reference of every ratio. See --list-policies");
ABSL_FLAG(bool, list_policies, false, "list every policy with its family and description, then exit");
ABSL_FLAG(double, precision, 3,
          "target: runs continue until the 95% CI of each policy's median ns/op, and of its "
          "ratio to malloc, is within +- this many percent (or its budget is spent)");
ABSL_FLAG(double, budget, 3, "seconds of runs per policy and trace before it stops short of the precision");
ABSL_FLAG(int, min_runs, 10, "runs per policy at least");
ABSL_FLAG(int, max_runs, 500, "runs per policy at most");
ABSL_FLAG(int, passes, 50,
          "passes over the trace in each run at most: the first is cold (fresh process, fresh "
          "pages), the rest warm (the allocator's memory reused), reported apart; 1: cold only");
ABSL_FLAG(double, warm_ms, 5,
          "warm passes continue until they add up to this many milliseconds (at least one)");
// The defaults (cold, program) are the replay model whose predictions came
// closest to the programs run for real (//fidelity:check; README, "How far
// the replay can be trusted"); warm and first remain for comparison.
ABSL_FLAG(std::string, rank_by, "cold",
          "which passes rank the policies and make the verdict: cold (the first pass over the "
          "trace, as a program that runs its work once pays it) or warm (the later passes)");
ABSL_FLAG(std::string, clock, "cpu",
          "what times a pass: cpu (the thread's CPU time, user + system) or wall (steady clock)");
ABSL_FLAG(int, max_reruns, 2,
          "times a run disturbed by an involuntary context switch or a CPU migration is run "
          "again before it is kept as it is");
ABSL_FLAG(int, screen_runs, 3, "with --policies=default: runs of each article policy in the screen");
ABSL_FLAG(double, run_timeout, 0,
          "seconds a child may run before it is killed (a FAILED run); 0: 60 s + 100 us per "
          "memory op (two passes)");
ABSL_FLAG(double, memory_limit_mb, 0,
          "the child's data limit (RLIMIT_DATA) in MiB; exceeding it fails the run; 0: the "
          "trace's ideal peak live bytes times --memory_limit_factor plus "
          "--memory_limit_floor_mb; -1: none");
ABSL_FLAG(double, memory_limit_factor, 16, "see --memory_limit_mb");
ABSL_FLAG(double, memory_limit_floor_mb, 512, "see --memory_limit_mb");
ABSL_FLAG(uint64_t, seed, 1, "seed of the run order shuffled in each round");
ABSL_FLAG(std::string, touch, "program",
          "what the replay writes into each new block, as a constructor would: none, first "
          "(the first 8 bytes), whole, or program (as programs do: construct, read before free)");
ABSL_FLAG(std::string, format, "table",
          "report format: table, markdown, csv (one row per policy), csv-runs (one row per "
          "run and pass), json or html (one self-contained page with charts); several, "
          "comma-separated, with as many --out files, write one measurement in each");
ABSL_FLAG(std::string, out, "",
          "write the report to this file instead of standard output (comma-separated: one per "
          "--format)");
ABSL_FLAG(int, rss_samples, 200, "RSS readings taken over each run's cold pass (its course)");
ABSL_FLAG(bool, quiet, false, "no progress lines on standard error");
// In situ (replayer/in_situ_cli.h; README: "Confirm in situ").
ABSL_FLAG(int, confirm, 0, "with TRACE -- PROGRAM [ARGS...]: after the replay, run the program "
          "under the replay's N fastest and the reference; those runs decide");
ABSL_FLAG(bool, in_situ, false, "with -- PROGRAM [ARGS...], no trace: run it under --policies");
ABSL_FLAG(std::string, in_situ_log, "", "the program's stdout and stderr in situ (default "
          "alloctrace-insitu.PID.log)");
// Internal: how the replayer re-executes itself for one run. Not for people.
ABSL_FLAG(std::string, internal_run_policy, "", "internal: run one policy, report to a pipe");
ABSL_FLAG(int, internal_result_fd, -1, "internal: the pipe for --internal_run_policy");
ABSL_FLAG(int, internal_program_fd, -1, "internal: the shared replay program to run");
ABSL_FLAG(int, internal_attempt, 0, "internal: the run's number for its policy (from 1)");

namespace alloctrace {
namespace {

using allocators::AllAllocators;
using allocators::AllocatorInfo;
using allocators::ForEachAllocatorType;
using allocators::SelectAllocators;

// Exit statuses (also in --help and the README).
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRunFailed = 3;

struct CollectPolicies {
  std::map<std::string, RunnablePolicy>* out;
  template <typename A>
  void operator()(const AllocatorInfo& info) {
    (*out)[info.name] = RunnablePolicy{info, &ReplayWith<A>};
  }
};

// Which library serves malloc in this process (the file dladdr names).
std::string MallocProvider() {
  Dl_info info;
  void* (*m)(size_t) = &malloc;
  if (dladdr(reinterpret_cast<void*>(m), &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

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
  if (f == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// The child's data limit as a phrase, "" if none.
std::string MemoryLimitWords() {
  struct rlimit lim;
  if (getrlimit(RLIMIT_DATA, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return "";
  return absl::StrFormat("the child's memory limit of %.0f MiB (--memory_limit_mb)",
                         static_cast<double>(lim.rlim_cur) / (1 << 20));
}

// Testing only: ALLOCTRACE_TEST_FAULT=POLICY:ATTEMPT:KIND makes the child
// of that policy's run number ATTEMPT (from 1) really fail: KIND segv
// raises SIGSEGV, hang sleeps until killed, exit exits with status 7.
void MaybeInjectFault(const std::string& policy, int attempt) {
  const char* spec = std::getenv("ALLOCTRACE_TEST_FAULT");
  if (spec == nullptr) return;
  const std::vector<std::string> parts = absl::StrSplit(spec, ':');
  if (parts.size() != 3 || parts[0] != policy || parts[1] != std::to_string(attempt)) return;
  if (parts[2] == "segv") raise(SIGSEGV);
  if (parts[2] == "hang") {
    while (true) pause();
  }
  if (parts[2] == "exit") _exit(7);
}

// A re-executed child: one run of one policy, its result to the pipe.
int ChildMain(const RunnablePolicy& policy, const RunOptions& options) {
  const int fd = absl::GetFlag(FLAGS_internal_result_fd);
  if (fd < 0) return Fail(kExitUsage, "bad internal run");
  // The parent decoded the trace; this process maps the result and so
  // allocates nothing before the run but what the runtime does.
  absl::StatusOr<ReplayView> p = MapSharedReplayView(absl::GetFlag(FLAGS_internal_program_fd));
  if (!p.ok()) return Fail(kExitBadInput, std::string(p.status().message()));
  MaybeInjectFault(policy.info.name, absl::GetFlag(FLAGS_internal_attempt));
  RunResult r;
  const std::string& preload = policy.info.preload;
  const std::string provider = MallocProvider();
  if (!preload.empty() && provider.find(preload) == std::string::npos) {
    r.error = absl::StrCat("LD_PRELOAD of ", preload, " did not take effect (malloc is from ",
                           provider, ")");
  } else {
    try {
      r = policy.run(*p, options);
      if (!r.error.empty()) {
        const std::string limit = MemoryLimitWords();
        if (!limit.empty()) absl::StrAppend(&r.error, ", under ", limit);
      }
    } catch (const std::bad_alloc&) {
      r = RunResult();
      const std::string limit = MemoryLimitWords();
      r.error = absl::StrCat("out of memory (std::bad_alloc)",
                             limit.empty() ? "" : absl::StrCat(" under ", limit));
    }
  }
  return WriteRunResult(fd, r) ? 0 : 1;
}

// Writes `text` to `out` ("" : standard output).
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
  absl::SetProgramUsageMessage(
      "replays allocation traces through pool policies and baseline allocators, each run in a\n"
      "fresh process, until the figures reach a stated precision, and says which to use.\n"
      "usage: replayer [flags] TRACE [TRACE...]\n"
      "       replayer [flags] --confirm=N TRACE -- PROGRAM [ARGS...]\n"
      "       replayer [flags] --in_situ --policies=LIST -- PROGRAM [ARGS...]\n"
      "example: bazel run //replayer -- traces/simple_map.trace\n"
      "exit status: 0 every run succeeded; 1 bad input or an I/O error (nothing measured);\n"
      "2 bad usage; 3 the report was written but a policy FAILED (a run crashed, exited\n"
      "with an error, hit its memory limit or was killed at its time limit).");
  std::string command_line = "replayer";  // as typed, for the HTML report
  for (int i = 1; i < argc; ++i) absl::StrAppend(&command_line, " ", argv[i]);
  AcceptDashedFlags(argc, argv);
  std::vector<std::string> program_argv = TakeProgramArgs(argc, argv);  // after "--"
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);

  std::map<std::string, RunnablePolicy> policies;
  ForEachAllocatorType(CollectPolicies{&policies});

  if (absl::GetFlag(FLAGS_list_policies)) {
    // --format: table (the default), markdown (the adopt table of the docs)
    // or cc (replayer/catalog_types.cc, every type compiled).
    const std::string format = absl::GetFlag(FLAGS_format);
    if (format != "table" && format != "markdown" && format != "cc") {
      return Fail(kExitUsage, absl::StrCat("--list-policies --format=", format,
                                           ": must be table, markdown or cc"));
    }
    const std::string text =
        format == "cc" ? CatalogTypesSource(AllAllocators())
                       : FormatPolicyList(AllAllocators(), allocators::DefaultPolicyNames(),
                                          format == "markdown");
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }

  MeasureSettings s;
  const int samples = absl::GetFlag(FLAGS_rss_samples);
  if (samples < 1 || samples > 100000) {
    return Fail(kExitUsage, absl::StrCat("--rss_samples=", samples, ": must be 1 to 100000"));
  }
  s.run_options.rss_samples = samples;
  const int passes = absl::GetFlag(FLAGS_passes);
  if (passes < 1 || passes > 1000) {
    return Fail(kExitUsage, absl::StrCat("--passes=", passes, ": must be 1 to 1000"));
  }
  s.run_options.max_passes = passes;
  const double warm_ms = absl::GetFlag(FLAGS_warm_ms);
  if (!(warm_ms >= 0 && warm_ms <= 1e6)) {
    return Fail(kExitUsage, absl::StrCat("--warm_ms=", warm_ms, ": must be 0 to 1000000"));
  }
  s.run_options.min_warm_seconds = warm_ms / 1e3;
  s.touch = absl::GetFlag(FLAGS_touch);
  if (s.touch == "none") {
    s.run_options.touch = Touch::kNone;
  } else if (s.touch == "first") {
    s.run_options.touch = Touch::kFirst;
  } else if (s.touch == "whole") {
    s.run_options.touch = Touch::kWhole;
  } else if (s.touch == "program") {
    s.run_options.touch = Touch::kProgram;
  } else {
    return Fail(kExitUsage,
                absl::StrCat("--touch=", s.touch, ": must be none, first, whole or program"));
  }
  const std::vector<std::string> formats = absl::StrSplit(absl::GetFlag(FLAGS_format), ',');
  for (const std::string& format : formats) {
    if (format != "table" && format != "markdown" && format != "csv" && format != "csv-runs" &&
        format != "json" && format != "html") {
      return Fail(kExitUsage, absl::StrCat("--format=", format,
                                           ": must be table, markdown, csv, csv-runs, json or html"));
    }
  }
  const std::string out_flag = absl::GetFlag(FLAGS_out);
  std::vector<std::string> outs;
  if (formats.size() == 1 && !out_flag.empty()) {
    outs.push_back(out_flag);
  } else if (!out_flag.empty()) {
    outs = absl::StrSplit(out_flag, ',');
  }
  if (formats.size() > 1 && outs.size() != formats.size()) {
    return Fail(kExitUsage, absl::StrCat("--format=", absl::GetFlag(FLAGS_format), " needs ",
                                         formats.size(), " comma-separated --out files"));
  }
  const double precision = absl::GetFlag(FLAGS_precision);
  if (!(precision > 0 && precision <= 100)) {
    return Fail(kExitUsage, absl::StrCat("--precision=", precision, ": must be above 0, at most 100"));
  }
  const double budget = absl::GetFlag(FLAGS_budget);
  if (!(budget >= 0 && budget <= 86400)) {
    return Fail(kExitUsage, absl::StrCat("--budget=", budget, ": must be 0 to 86400 seconds"));
  }
  s.ctx.min_runs = absl::GetFlag(FLAGS_min_runs);
  s.max_runs = absl::GetFlag(FLAGS_max_runs);
  if (s.ctx.min_runs < 1 || s.ctx.min_runs > 100000 || s.max_runs < s.ctx.min_runs ||
      s.max_runs > 100000) {
    return Fail(kExitUsage, absl::StrCat("--min_runs=", s.ctx.min_runs, ", --max_runs=", s.max_runs,
                                         ": need 1 <= min_runs <= max_runs <= 100000"));
  }
  s.seed = absl::GetFlag(FLAGS_seed);
  s.max_reruns = absl::GetFlag(FLAGS_max_reruns);
  if (s.max_reruns < 0 || s.max_reruns > 100) {
    return Fail(kExitUsage, absl::StrCat("--max_reruns=", s.max_reruns, ": must be 0 to 100"));
  }
  s.screen_runs = absl::GetFlag(FLAGS_screen_runs);
  if (s.screen_runs < 1 || s.screen_runs > 1000) {
    return Fail(kExitUsage, absl::StrCat("--screen_runs=", s.screen_runs, ": must be 1 to 1000"));
  }
  s.ctx.rank_by = absl::GetFlag(FLAGS_rank_by);
  if (s.ctx.rank_by != "warm" && s.ctx.rank_by != "cold") {
    return Fail(kExitUsage, absl::StrCat("--rank_by=", s.ctx.rank_by, ": must be warm or cold"));
  }
  if (s.ctx.rank_by == "warm" && passes < 2) s.ctx.rank_by = "cold";  // no warm pass to rank by
  s.ctx.clock = absl::GetFlag(FLAGS_clock);
  if (s.ctx.clock != "cpu" && s.ctx.clock != "wall") {
    return Fail(kExitUsage, absl::StrCat("--clock=", s.ctx.clock, ": must be cpu or wall"));
  }
  const double run_timeout = absl::GetFlag(FLAGS_run_timeout);
  const double memory_limit_mb = absl::GetFlag(FLAGS_memory_limit_mb);
  const double memory_factor = absl::GetFlag(FLAGS_memory_limit_factor);
  const double memory_floor_mb = absl::GetFlag(FLAGS_memory_limit_floor_mb);
  if (!(run_timeout >= 0) || !(memory_limit_mb >= -1) || !(memory_factor >= 0) ||
      !(memory_floor_mb >= 0)) {
    return Fail(kExitUsage,
                "--run_timeout, --memory_limit_factor and --memory_limit_floor_mb must be >= 0, "
                "--memory_limit_mb >= -1");
  }
  s.ctx.precision = precision / 100;
  s.ctx.budget_seconds = budget;
  s.ctx.passes = passes;
  s.ctx.warm_ms = warm_ms;
  s.ctx.touch = s.touch;

  const std::string policy_flag = absl::GetFlag(FLAGS_policies);
  const bool use_default = policy_flag == "default";
  std::vector<std::string> selected;
  if (use_default) {
    selected = allocators::DefaultPolicyNames();
  } else {
    absl::StatusOr<std::vector<std::string>> sel = SelectAllocators(policy_flag);
    if (!sel.ok()) return Fail(kExitUsage, std::string(sel.status().message()));
    selected = *std::move(sel);
  }
  const bool quiet = absl::GetFlag(FLAGS_quiet);
  s.progress = !quiet && isatty(STDERR_FILENO);

  const std::string child_policy = absl::GetFlag(FLAGS_internal_run_policy);
  if (!child_policy.empty()) {
    auto it = policies.find(child_policy);
    if (it == policies.end()) return Fail(kExitUsage, "bad internal run");
    return ChildMain(it->second, s.run_options);
  }

  const int confirm = absl::GetFlag(FLAGS_confirm);
  const bool in_situ_only = absl::GetFlag(FLAGS_in_situ);
  InSituSettings in_situ;
  if (confirm > 0 || in_situ_only || !program_argv.empty()) {
    absl::Status st = CheckInSituUsage(confirm, in_situ_only, args.size() - 1, program_argv);
    const int code = absl::IsInvalidArgument(st) ? kExitUsage : kExitBadInput;
    if (!st.ok()) return Fail(code, std::string(st.message()));
    in_situ = InSituFromFlags(s, absl::GetFlag(FLAGS_in_situ_log), run_timeout);
  }
  if (in_situ_only) {
    absl::StatusOr<InSituSummary> r =
        MeasureInSituOnly(program_argv, selected, in_situ, /*drop_unrunnable=*/use_default);
    if (!r.ok()) return Fail(kExitBadInput, std::string(r.status().message()));
    for (size_t i = 0; i < formats.size(); ++i) {
      absl::Status st =
          WriteReport(WithInSitu(formats[i], "", *r, nullptr), outs.empty() ? "" : outs[i], quiet);
      if (!st.ok()) return Fail(kExitBadInput, std::string(st.message()));
    }
    if (r->failed_policies == 0) return kExitOk;
    return Fail(kExitRunFailed, "a policy FAILED in situ (see the report); exit status 3");
  }
  if (args.size() < 2) return Fail(kExitUsage, "no trace file given; usage: replayer [flags] TRACE...");

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

  // Every run is the replayer re-executed: a fresh process whose heap holds
  // nothing of the parent's, mapping the decoded program from a memfd so it
  // decodes and allocates nothing itself. Preloaded mallocs need the exec
  // anyway.
  char self[4096];
  const ssize_t self_len = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string self_path = self_len > 0 ? std::string(self, self_len) : argv[0];

  std::vector<TraceReport> reports;
  bool any_failed = false;
  for (ReplayProgram& program : programs) {
    if (program.memory_ops() == 0) {
      // Nothing to time: say so rather than rank zeros.
      reports.push_back(Summarize(program, {}, PolicyRuns{}, s.ctx, 0));
      continue;
    }
    s.limits.wall_seconds =
        run_timeout > 0 ? run_timeout : 60 + 1e-4 * static_cast<double>(program.memory_ops());
#if defined(__SANITIZE_ADDRESS__)
    // ASan reserves terabytes of shadow address space: no data limit fits.
    s.limits.memory_bytes = 0;
#else
    const double table_bytes = 32.0 * (program.object_limit + 1);
    s.limits.memory_bytes =
        memory_limit_mb < 0 ? 0
        : memory_limit_mb > 0
            ? static_cast<int64_t>(memory_limit_mb * (1 << 20))
            : static_cast<int64_t>(static_cast<double>(program.peak_live_bytes) * memory_factor +
                                   memory_floor_mb * (1 << 20) + table_bytes);
#endif
    int shared_fd = -1;
    const std::vector<std::string> names =
        use_default ? SafeVariants(selected, program.arena_usage) : selected;
    TraceReport report =
        MeasureTrace(program, names, use_default, policies, self_path, s, &shared_fd);
    if (shared_fd < 0) {
      return Fail(kExitBadInput, absl::StrCat("cannot share the replay program: ", std::strerror(errno)));
    }
    close(shared_fd);
    any_failed |= report.failed_policies > 0;
    reports.push_back(std::move(report));
  }

  if (confirm > 0 && !reports[0].no_memory_ops) {
    absl::Status st = Confirm(reports[0], confirm, program_argv, in_situ);
    if (!st.ok()) return Fail(kExitBadInput, std::string(st.message()));
    any_failed |= reports[0].in_situ->failed_policies > 0;
  }
  s.ctx.machine = DescribeMachine();
  s.ctx.date = Today();
  for (size_t i = 0; i < formats.size(); ++i) {
    const std::string& format = formats[i];
    std::string text;
    if (format == "table") text = FormatTable(reports, s.ctx);
    if (format == "markdown") text = FormatMarkdown(reports, s.ctx);
    if (format == "csv") text = FormatCsv(reports, s.ctx);
    if (format == "csv-runs") text = FormatCsvRuns(reports, s.ctx);
    if (format == "json") text = FormatJson(reports, s.ctx);
    if (format == "html") text = FormatHtml(reports, programs, s.ctx, command_line);
    if (confirm > 0 && reports[0].in_situ != nullptr) {
      text = WithInSitu(format, text, *reports[0].in_situ, &reports[0]);
    }
    absl::Status st = WriteReport(text, outs.empty() ? "" : outs[i], quiet);
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

int main(int argc, char** argv) { return alloctrace::Main(argc, argv); }
