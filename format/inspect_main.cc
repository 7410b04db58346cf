// inspect: prints what a trace file holds.
//   bazel run //format:inspect -- [--json] FILE
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "format/trace_stats.h"
#include "base/cli_util.h"

ABSL_FLAG(bool, json, false, "print machine-readable JSON instead of text");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "prints a trace's header, event counts, bytes per event, size histogram, peak live "
      "bytes and objects, and per-arena counts.\nusage: inspect [--json] FILE");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "inspect: expected exactly one trace file (got %zu); see --help\n",
                 args.size() - 1);
    return 2;
  }
  const std::string path = alloctrace::ResolveUserPath(args[1]);
  absl::StatusOr<alloctrace::TraceStats> stats = alloctrace::ComputeTraceStats(path);
  if (!stats.ok()) {
    std::fprintf(stderr, "inspect: %s\n", std::string(stats.status().message()).c_str());
    return 1;
  }
  const std::string out = absl::GetFlag(FLAGS_json) ? alloctrace::FormatTraceStatsJson(*stats)
                                                    : alloctrace::FormatTraceStatsText(*stats);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!stats->has_footer) {
    std::fprintf(stderr, "inspect: warning: %s\n", stats->cut_short.c_str());
  }
  return 0;
}
