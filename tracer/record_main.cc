// record: runs one workload through TraceAllocator and writes its trace.
//
//   bazel run //tracer:record -- --workload=simple_map --out=traces/simple_map.trace
//       [--param=entries=1000 ...] [--seed=N] [--timestamps]
//   bazel run //tracer:record -- --list
//
// Exit status: 0 on success, 2 for a usage error (unknown workload, bad
// parameter, missing flag, positional argument), 1 if the trace cannot be
// written.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/did_you_mean.h"
#include "alloctrace/base/output_file.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/workloads/stdlib_name.h"
#include "alloctrace/tracer/workloads/workloads.h"

ABSL_FLAG(std::string, workload, "", "the workload to run (see --list)");
ABSL_FLAG(std::string, out, "",
          "the trace file to write (created or truncated; relative to where `bazel run` "
          "was started)");
ABSL_FLAG(std::vector<std::string>, param, {},
          "workload parameter overrides, name=value; comma-separated and/or repeated");
ABSL_FLAG(uint64_t, seed, 1, "random seed of the workload");
ABSL_FLAG(bool, timestamps, false, "add a steady-clock timestamp to every event");
ABSL_FLAG(bool, list, false, "list the workloads, their sources and parameters, and exit");

namespace alloctrace {
namespace {

using workloads::AllWorkloads;
using workloads::ParamSpec;
using workloads::WorkloadInfo;
using workloads::WorkloadParams;

constexpr int kExitIoError = 1;
constexpr int kExitUsage = 2;

std::string Str(std::string_view s) { return std::string(s); }

int UsageError(const std::string& message) {
  std::fprintf(stderr, "record: %s\n", message.c_str());
  return kExitUsage;
}

// Abseil keeps only the last occurrence of a repeated flag. --param may be
// repeated, so every occurrence (--param=X, -param=X, --param X) is merged
// into one comma-separated --param at the place of the first; arguments
// after "--" are left alone. A --param with no value (at the end, or before
// another flag) is a usage error.
absl::StatusOr<std::vector<std::string>> MergeRepeatedParam(int argc, char** argv) {
  std::vector<std::string> out;
  std::vector<std::string> values;
  int merged_at = -1;
  int i = 0;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    std::string_view name = arg;
    if (i > 0 && name.size() > 1 && name[0] == '-') {
      name.remove_prefix(name[1] == '-' ? 2 : 1);
      const size_t eq = name.find('=');
      if (name.substr(0, eq) == "param") {
        if (eq != std::string_view::npos) {
          values.emplace_back(name.substr(eq + 1));
        } else if (i + 1 < argc && argv[i + 1][0] != '-') {
          values.emplace_back(argv[++i]);
        } else {
          // A parameter's name starts with a letter: a next argument that
          // starts with '-' is another flag (or "--"), not this one's value.
          return absl::InvalidArgumentError(
              absl::StrCat(Str(arg), " needs a value (", Str(arg), "=name=value)"));
        }
        if (merged_at < 0) {
          merged_at = static_cast<int>(out.size());
          out.emplace_back();
        }
        continue;
      }
    }
    out.emplace_back(arg);
  }
  for (; i < argc; ++i) out.emplace_back(argv[i]);
  if (merged_at >= 0) {
    std::vector<std::string> pieces;
    for (const std::string& v : values) {
      if (!v.empty()) pieces.push_back(v);
    }
    out[merged_at] = absl::StrCat("--param=", absl::StrJoin(pieces, ","));
  }
  return out;
}

void PrintWorkloads() {
  for (const WorkloadInfo& info : AllWorkloads()) {
    std::printf("%s\n  %s\n  source: %s\n  seed: %s\n", Str(info.name).c_str(),
                Str(info.description).c_str(), Str(info.source).c_str(),
                info.seeded ? "changes the allocations" : "not used");
    if (info.multi_threaded) {
      std::printf("  threads: several; which thread frees which object varies from run to run\n");
    }
    std::printf("  %-22s %10s  %-22s %s\n", "param", "default", "source's value", "meaning");
    for (const ParamSpec& spec : info.params) {
      std::printf("  %-22s %10lld  %-22s %s\n", Str(spec.name).c_str(),
                  static_cast<long long>(spec.default_value),
                  spec.source_value.empty() ? "(not stated)" : Str(spec.source_value).c_str(),
                  Str(spec.help).c_str());
    }
    std::printf("\n");
  }
}

// "unknown workload 'simple_mapp'; did you mean simple_map?", or the list
// of names where none is near.
std::string UnknownWorkloadWords(const std::string& name) {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : AllWorkloads()) names.push_back(Str(w.name));
  if (const std::string near = NearestName(name, names); !near.empty()) {
    return absl::StrCat("unknown workload '", name, "'; did you mean ", near, "?");
  }
  return absl::StrCat("unknown workload '", name, "' (known: ", absl::StrJoin(names, ", "), ")");
}

// The recording's options: the trace at `path`, the workload `name`, and
// as labels the seed, the standard library and each parameter's value.
RecordingOptions OptionsFor(const std::string& name, const std::string& path,
                            const WorkloadParams& params, uint64_t seed) {
  RecordingOptions options;
  options.path = path;
  options.workload = name;
  options.program = "alloctrace record";
  options.timestamps = absl::GetFlag(FLAGS_timestamps);
  options.labels["seed"] = absl::StrCat(seed);
  // Node and control-block sizes depend on the standard library.
  options.labels["stdlib"] = workloads::StdlibName();
  options.labels["stdlib_version"] = workloads::StdlibVersion();
  for (size_t i = 0; i < params.specs().size(); ++i) {
    options.labels[Str(params.specs()[i].name)] = absl::StrCat(params.values()[i]);
  }
  return options;
}

// "simple_map: 60002 events, 118327 bytes (1.97 bytes/event), 1 chunks ->
// PATH", with what was dropped or unmatched.
std::string SummaryLine(const std::string& name, const RecordingStats& stats,
                        const std::string& path) {
  std::string line = absl::StrFormat(
      "%s: %d events, %d bytes (%.2f bytes/event), %d chunks -> %s", name, stats.events,
      stats.bytes, stats.events == 0 ? 0.0 : static_cast<double>(stats.bytes) / stats.events,
      stats.chunks, path);
  if (stats.dropped_events != 0) absl::StrAppend(&line, ", ", stats.dropped_events, " DROPPED");
  if (stats.unmatched_frees != 0) {
    absl::StrAppend(&line, ", ", stats.unmatched_frees, " unmatched frees");
  }
  return line;
}

// Records `info` with `params` to `path`; the exit status.
int Record(const WorkloadInfo& info, const std::string& name, const WorkloadParams& params,
           const std::string& path) {
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  Recorder& recorder = Recorder::Global();
  if (absl::Status s = recorder.Start(OptionsFor(name, path, params, seed)); !s.ok()) {
    const std::string message(s.message());
    if (message.find(path) != std::string::npos) {
      std::fprintf(stderr, "record: %s\n", message.c_str());
    } else {
      std::fprintf(stderr, "record: cannot record to %s: %s\n", path.c_str(), message.c_str());
    }
    return kExitIoError;
  }
  info.run_traced(params, seed);
  RecordingStats stats;
  if (absl::Status s = recorder.Stop(&stats); !s.ok()) {
    std::fprintf(stderr, "record: writing %s failed: %s\n", path.c_str(),
                 std::string(s.message()).c_str());
    return kExitIoError;
  }
  std::printf("%s\n", SummaryLine(name, stats, path).c_str());
  return 0;
}

int Run(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs one workload through alloctrace::TraceAllocator and writes its trace.\n"
      "usage: record --workload=NAME --out=FILE [--param=name=value ...] [--seed=N] "
      "[--timestamps]\n       record --list");
  absl::StatusOr<std::vector<std::string>> merged_or = MergeRepeatedParam(argc, argv);
  if (!merged_or.ok()) return UsageError(std::string(merged_or.status().message()));
  std::vector<std::string> merged = *std::move(merged_or);
  std::vector<char*> merged_argv;
  for (std::string& arg : merged) merged_argv.push_back(arg.data());
  merged_argv.push_back(nullptr);
  // An unknown flag or a bad value exits 2 with a suggestion, not Abseil's 1.
  const std::vector<char*> positional =
      ParseCommandLineOrExitUsage(static_cast<int>(merged.size()), merged_argv.data(), "record");

  if (positional.size() > 1) {
    return UsageError(absl::StrCat("unexpected argument '", positional[1],
                                   "': every option is a --flag (see --help)"));
  }
  if (absl::GetFlag(FLAGS_list)) {
    PrintWorkloads();
    return 0;
  }

  const std::string name = absl::GetFlag(FLAGS_workload);
  if (name.empty()) return UsageError("missing --workload=NAME (see --list)");
  const WorkloadInfo* info = workloads::FindWorkload(name);
  if (info == nullptr) return UsageError(UnknownWorkloadWords(name));
  const absl::StatusOr<WorkloadParams> params = info->ParseParams(absl::GetFlag(FLAGS_param));
  if (!params.ok()) return UsageError(std::string(params.status().message()));
  if (absl::GetFlag(FLAGS_out).empty()) return UsageError("missing --out=FILE");
  const std::string path = ResolveUserPath(absl::GetFlag(FLAGS_out));
  // Before the workload runs: a large one takes minutes.
  if (absl::Status s = CheckOutputFile(path); !s.ok()) {
    std::fprintf(stderr, "record: %s; nothing recorded\n", std::string(s.message()).c_str());
    return kExitIoError;
  }
  return Record(*info, name, *params, path);
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) { return alloctrace::Run(argc, argv); }
