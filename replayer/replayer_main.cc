// replayer: replays captured traces through every pool policy and baseline
// allocator, each run in a child process of its own, and reports time,
// working set and page faults per policy.
//
//   bazel run //replayer -- traces/simple_map.trace
//   bazel run //replayer -- --policies='slab,malloc,pool/*' --repeat=9
//       --format=csv --out=results.csv traces/*.trace
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "replayer/allocators/registry.h"
#include "replayer/isolated_run.h"
#include "replayer/os_stats.h"
#include "replayer/replay_loop.h"
#include "replayer/replay_program.h"
#include "replayer/report.h"
#include "base/cli_util.h"

ABSL_FLAG(std::string, policies, "*",
          "comma-separated policy names or globs (* and ?) to run; see --list-policies");
ABSL_FLAG(bool, list_policies, false, "list every policy with its family and description, then exit");
ABSL_FLAG(int, repeat, 5, "runs per policy, interleaved across policies (A B C A B C ...)");
ABSL_FLAG(std::string, touch, "first",
          "what the replay writes into each new block, as a constructor would: none, first "
          "(the first 8 bytes), whole, or program (as programs do: construct, read before free)");
ABSL_FLAG(std::string, format, "table", "report format: table, markdown, csv or json");
ABSL_FLAG(std::string, out, "", "write the report to this file instead of standard output");
ABSL_FLAG(int, rss_samples, 200, "RSS readings taken over each run (its course)");
ABSL_FLAG(bool, quiet, false, "no progress lines on standard error");
// Internal: how the replayer re-executes itself for a run under a preloaded
// malloc. Not for people.
ABSL_FLAG(std::string, internal_run_policy, "", "internal: run one policy, report to a pipe");
ABSL_FLAG(int, internal_result_fd, -1, "internal: the pipe for --internal_run_policy");
ABSL_FLAG(int, internal_program_fd, -1, "internal: the shared replay program to run");

namespace alloctrace {
namespace {

using allocators::AllAllocators;
using allocators::AllocatorInfo;
using allocators::ForEachAllocatorType;
using allocators::SelectAllocators;
using RunFn = RunResult (*)(const ReplayView&, const RunOptions&);

struct Policy {
  AllocatorInfo info;
  RunFn run;
};

struct CollectPolicies {
  std::map<std::string, Policy>* out;
  template <typename A>
  void operator()(const AllocatorInfo& info) {
    (*out)[info.name] = Policy{info, &ReplayWith<A>};
  }
};

// Where the dynamic loader would find a preload library; empty if nowhere.
std::string FindLibrary(const std::string& name) {
#if defined(__x86_64__)
  const char* const kDirs[] = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                               "/usr/local/lib", "/usr/lib"};
#elif defined(__aarch64__)
  const char* const kDirs[] = {"/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu",
                               "/usr/local/lib", "/usr/lib"};
#else
  const char* const kDirs[] = {"/usr/local/lib", "/usr/lib"};
#endif
  for (const char* dir : kDirs) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (access(path.c_str(), R_OK) == 0) return path;
  }
  return "";
}

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

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "replays allocation traces through every pool policy and baseline allocator.\n"
      "usage: replayer [flags] TRACE [TRACE...]\n"
      "example: bazel run //replayer -- traces/simple_map.trace");
  AcceptDashedFlags(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);

  std::map<std::string, Policy> policies;
  ForEachAllocatorType(CollectPolicies{&policies});

  if (absl::GetFlag(FLAGS_list_policies)) {
    for (const AllocatorInfo& info : AllAllocators()) {
      std::printf("%-40s %-9s %s\n", info.name.c_str(), info.family.c_str(),
                  info.description.c_str());
    }
    return 0;
  }

  const int repeat = absl::GetFlag(FLAGS_repeat);
  if (repeat < 1 || repeat > 1000) return Fail(2, absl::StrCat("--repeat=", repeat, ": must be 1 to 1000"));
  const int samples = absl::GetFlag(FLAGS_rss_samples);
  if (samples < 1 || samples > 100000) {
    return Fail(2, absl::StrCat("--rss_samples=", samples, ": must be 1 to 100000"));
  }
  RunOptions run_options;
  run_options.rss_samples = samples;
  const std::string touch = absl::GetFlag(FLAGS_touch);
  if (touch == "none") {
    run_options.touch = Touch::kNone;
  } else if (touch == "first") {
    run_options.touch = Touch::kFirst;
  } else if (touch == "whole") {
    run_options.touch = Touch::kWhole;
  } else if (touch == "program") {
    run_options.touch = Touch::kProgram;
  } else {
    return Fail(2, absl::StrCat("--touch=", touch, ": must be none, first, whole or program"));
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "markdown" && format != "csv" && format != "json") {
    return Fail(2, absl::StrCat("--format=", format, ": must be table, markdown, csv or json"));
  }
  absl::StatusOr<std::vector<std::string>> selected =
      SelectAllocators(absl::GetFlag(FLAGS_policies));
  if (!selected.ok()) return Fail(2, std::string(selected.status().message()));
  const bool quiet = absl::GetFlag(FLAGS_quiet);

  // A re-executed child: one run of one policy, its result to the pipe.
  const std::string child_policy = absl::GetFlag(FLAGS_internal_run_policy);
  if (!child_policy.empty()) {
    const int fd = absl::GetFlag(FLAGS_internal_result_fd);
    auto it = policies.find(child_policy);
    if (it == policies.end() || fd < 0) return Fail(2, "bad internal run");
    // The parent decoded the trace; this process maps the result and so
    // allocates nothing before the run but what the runtime does.
    absl::StatusOr<ReplayView> p = MapSharedReplayView(absl::GetFlag(FLAGS_internal_program_fd));
    if (!p.ok()) return Fail(1, std::string(p.status().message()));
    RunResult r;
    const std::string& preload = it->second.info.preload;
    const std::string provider = MallocProvider();
    if (!preload.empty() && provider.find(preload) == std::string::npos) {
      r.error = absl::StrCat("LD_PRELOAD of ", it->second.info.preload,
                             " did not take effect (malloc is from ", provider, ")");
    } else {
      r = it->second.run(*p, run_options);
    }
    return WriteRunResult(fd, r) ? 0 : 1;
  }

  if (args.size() < 2) return Fail(2, "no trace file given; usage: replayer [flags] TRACE...");

  // Decode and validate every trace before any timing.
  std::vector<ReplayProgram> programs;
  for (size_t i = 1; i < args.size(); ++i) {
    absl::StatusOr<ReplayProgram> p = LoadReplayProgram(ResolveUserPath(args[i]));
    if (!p.ok()) return Fail(1, std::string(p.status().message()));
    if (!p->cut_short.empty()) {
      std::fprintf(stderr, "replayer: warning: %s: %s; replaying the %llu complete events\n",
                   p->path.c_str(), p->cut_short.c_str(),
                   static_cast<unsigned long long>(p->ops.size()));
    }
    p->path = args[i];  // as the user wrote it, for the report
    programs.push_back(*std::move(p));
  }

  // Every run is the replayer re-executed: a fresh process whose heap holds
  // nothing of the parent's (a forked child would inherit the parent's free
  // but resident heap memory, and malloc-based allocators would reuse it
  // without it ever showing in their RSS), mapping the decoded program from a
  // memfd so it decodes and allocates nothing itself. Preloaded mallocs need
  // the exec anyway.
  char self[4096];
  const ssize_t self_len = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string self_path = self_len > 0 ? std::string(self, self_len) : argv[0];

  std::vector<TraceReport> reports;
  for (size_t t = 0; t < programs.size(); ++t) {
    const ReplayProgram& program = programs[t];
    const ReplayView view = ViewOf(program);
    const int shared_fd = ShareReplayView(view);
    if (shared_fd < 0) {
      return Fail(1, absl::StrCat("cannot share the replay program: ", std::strerror(errno)));
    }
    std::vector<PolicyRuns> runs;
    for (const std::string& name : *selected) {
      const Policy& policy = policies.at(name);
      runs.push_back(PolicyRuns{name, policy.info.family, {}, "", ""});
      if (!policy.info.preload.empty() && FindLibrary(policy.info.preload).empty()) {
        runs.back().skipped = absl::StrCat(policy.info.preload, " is not installed");
      }
    }
    for (int rep = 0; rep < repeat; ++rep) {
      for (PolicyRuns& pr : runs) {
        if (!pr.error.empty() || !pr.skipped.empty()) continue;
        if (!quiet) {
          std::fprintf(stderr, "\r\033[K%s: run %d/%d %s", program.path.c_str(), rep + 1, repeat,
                       pr.name.c_str());
        }
        const Policy& policy = policies.at(pr.name);
        const absl::StatusOr<RunResult> r = RunInFreshChild(
            {self_path, "--quiet", "--internal_run_policy=" + pr.name,
             absl::StrCat("--internal_program_fd=", shared_fd), "--touch=" + touch,
             absl::StrCat("--rss_samples=", samples)},
            policy.info.preload.empty() ? "" : FindLibrary(policy.info.preload),
            "--internal_result_fd=");
        if (!r.ok()) {
          pr.error = std::string(r.status().message());
        } else {
          pr.runs.push_back(*std::move(r));
        }
      }
    }
    if (!quiet) std::fprintf(stderr, "\r\033[K");
    close(shared_fd);
    reports.push_back(Summarize(program, runs));
  }

  ReportContext ctx{DescribeMachine(), Today(), repeat, touch};
  std::string text;
  if (format == "table") text = FormatTable(reports, ctx);
  if (format == "markdown") text = FormatMarkdown(reports, ctx);
  if (format == "csv") text = FormatCsv(reports, ctx);
  if (format == "json") text = FormatJson(reports, ctx);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    absl::Status s = WriteFileAtomically(ResolveUserPath(out), text);
    if (!s.ok()) return Fail(1, std::string(s.message()));
    if (!quiet) std::fprintf(stderr, "replayer: wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) { return alloctrace::Main(argc, argv); }
