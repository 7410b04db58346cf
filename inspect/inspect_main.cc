// inspect: prints what a trace file holds.
//   bazel run //inspect -- [--json | --html | --sites=N] [--out=FILE] FILE
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/output_file.h"
#include "alloctrace/inspect/call_site_stats.h"
#include "alloctrace/inspect/site_classes.h"
#include "alloctrace/inspect/trace_html.h"
#include "alloctrace/inspect/trace_stats.h"

ABSL_FLAG(bool, json, false, "print machine-readable JSON instead of text");
ABSL_FLAG(bool, html, false,
          "write a self-contained HTML page with charts (live bytes and objects, sizes, arena "
          "lifetimes) instead of text");
ABSL_FLAG(std::string, out, "", "write to this file instead of standard output");
ABSL_FLAG(std::string, classes_out, "",
          "with --sites=N: also write this trace, the capture with its N top allocating "
          "functions as classes of containers, for `replayer --per_container`");
ABSL_FLAG(int, sites, 0,
          "print the N allocating functions with the most memory ops (a trace recorded with "
          "call sites: capture --call_sites), symbolized from the recorded files, instead of "
          "the trace's statistics");

// Writes `out` where --out says (standard output by default),
// base/output_file.h's way. Returns the exit code: 1 if it cannot be
// written.
int WriteOut(const std::string& out) {
  const std::string out_path = absl::GetFlag(FLAGS_out);
  const absl::Status st =
      out_path.empty() ? alloctrace::WriteStandardOutput(out)
                       : alloctrace::WriteOutputFile(alloctrace::ResolveUserPath(out_path), out);
  if (st.ok()) return 0;
  std::fprintf(stderr, "inspect: %s\n", std::string(st.message()).c_str());
  return 1;
}

// --out and --classes_out, checked before the trace is read: exit 2 if one
// names the trace itself (the report would destroy it), 1 if it cannot be
// written; 0 to go on.
int CheckOutputs(const std::string& trace) {
  const std::pair<const char*, std::string> outputs[] = {
      {"--out", absl::GetFlag(FLAGS_out)}, {"--classes_out", absl::GetFlag(FLAGS_classes_out)}};
  std::vector<std::string> paths;
  for (const auto& [flag, value] : outputs) {
    paths.push_back(value.empty() ? value : alloctrace::ResolveUserPath(value));
  }
  if (alloctrace::FindRepeatedOutput(paths) != std::string::npos) {
    std::fprintf(stderr, "inspect: --out and --classes_out name one file (%s)\n",
                 outputs[0].second.c_str());
    return 2;
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    const absl::Status st = alloctrace::CheckOutputFile(paths[i], {trace});
    if (st.ok()) continue;
    std::fprintf(stderr, "inspect: %s: %s\n", outputs[i].first, std::string(st.message()).c_str());
    return absl::IsInvalidArgument(st) ? 2 : 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "prints a trace's header, event counts, bytes per event, size histogram, peak live "
      "bytes and objects, and per-arena counts.\n"
      "usage: inspect [--json | --html | --sites=N] [--out=FILE] FILE");
  std::vector<char*> args = alloctrace::ParseCommandLineOrExitUsage(argc, argv, "inspect");
  if (args.size() != 2) {
    std::fprintf(stderr, "inspect: expected exactly one trace file (got %zu); see --help\n",
                 args.size() - 1);
    return 2;
  }
  const std::string path = alloctrace::ResolveUserPath(args[1]);
  if (absl::GetFlag(FLAGS_json) && absl::GetFlag(FLAGS_html)) {
    std::fprintf(stderr, "inspect: --json and --html exclude each other\n");
    return 2;
  }
  const int sites = absl::GetFlag(FLAGS_sites);
  if (sites < 0) {
    std::fprintf(stderr, "inspect: --sites=%d: expected a count of functions to show, 1 or more\n",
                 sites);
    return 2;
  }
  if (sites > 0 && (absl::GetFlag(FLAGS_json) || absl::GetFlag(FLAGS_html))) {
    std::fprintf(stderr, "inspect: --sites prints text: it excludes --json and --html\n");
    return 2;
  }
  if (sites == 0 && !absl::GetFlag(FLAGS_classes_out).empty()) {
    std::fprintf(stderr, "inspect: --classes_out needs --sites=N (how many functions)\n");
    return 2;
  }
  if (const int code = CheckOutputs(path); code != 0) return code;
  if (sites > 0) {
    absl::StatusOr<alloctrace::CallSiteReport> report = alloctrace::ComputeCallSites(path);
    if (!report.ok()) {
      std::fprintf(stderr, "inspect: %s\n", std::string(report.status().message()).c_str());
      return 1;
    }
    // Nothing to list: the trace cannot answer --sites (with --classes_out
    // or without, the same message and status).
    if (!report->has_sites) {
      std::fprintf(stderr,
                   "inspect: %s: the trace has no call sites (capture --call_sites=N records "
                   "them)\n",
                   args[1]);
      return 1;
    }
    if (const std::string classes = absl::GetFlag(FLAGS_classes_out); !classes.empty()) {
      const std::string resolved = alloctrace::ResolveUserPath(classes);
      if (absl::Status s =
              alloctrace::WriteSiteClasses(path, *report, static_cast<size_t>(sites), resolved);
          !s.ok()) {
        std::fprintf(stderr, "inspect: %s\n", std::string(s.message()).c_str());
        return 1;
      }
    }
    return WriteOut(alloctrace::FormatCallSitesText(*report, static_cast<size_t>(sites)));
  }
  absl::StatusOr<alloctrace::TraceStats> stats = alloctrace::ComputeTraceStats(path);
  if (!stats.ok()) {
    std::fprintf(stderr, "inspect: %s\n", std::string(stats.status().message()).c_str());
    return 1;
  }
  const std::string out = absl::GetFlag(FLAGS_json) ? alloctrace::FormatTraceStatsJson(*stats)
                          : absl::GetFlag(FLAGS_html)
                              ? alloctrace::FormatTraceStatsHtml(*stats, args[1])
                              : alloctrace::FormatTraceStatsText(*stats);
  // A trace cut short inside its first chunk holds nothing to show but its
  // header: an error, and no report (nor an --out file replaced by one).
  if (!stats->has_footer && stats->chunks == 0) {
    std::fprintf(stderr, "inspect: %s: truncated: %s; no complete chunk before the cut\n", args[1],
                 stats->cut_short.c_str());
    return 1;
  }
  if (const int code = WriteOut(out); code != 0) return code;
  if (!stats->has_footer) {
    std::fprintf(stderr, "inspect: warning: %s: %s\n", args[1], stats->cut_short.c_str());
  }
  return 0;
}
