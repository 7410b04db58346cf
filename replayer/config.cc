#include "alloctrace/replayer/config.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/replayer/reports/reporters.h"

namespace {

// The longest time any flag may give (a day): a budget or a timeout beyond
// it is a typing slip, and a figure like 1e300 would print as 300 digits.
constexpr int kMaxSeconds = 86400;

// The flags' defaults, from the one place they are stated.
const alloctrace::ReplayerConfig& Defaults() {
  static const alloctrace::ReplayerConfig* const kDefaults = new alloctrace::ReplayerConfig();
  return *kDefaults;
}
const alloctrace::RoundsSettings& Rounds() { return Defaults().measure.rounds; }

template <typename E, size_t N>
std::string Word(const alloctrace::EnumWord<E> (&table)[N], E value) {
  return alloctrace::WordOf(table, value);
}
}  // namespace

ABSL_FLAG(std::string, policies, Defaults().policies,
          "comma-separated policy names or globs (* and ?) to run, or 'default': every "
          "baseline but bump, tcmalloc, jemalloc, mimalloc, slab and small_node "
          "single-threaded in both holdings, and the article policies (in the race; without "
          "it the fastest of each storage kind from a short screen); on a trace whose arenas "
          "several threads share, the thread-safe variants, and policies that are not "
          "thread-safe are skipped. '*' runs all. glibc malloc always runs: it is the "
          "reference of every ratio. See --list-policies");
ABSL_FLAG(bool, list_policies, Defaults().list_policies,
          "list every policy with its family, description and the C++ type to adopt, then "
          "exit; with --format=markdown the adopt table, --format=cc a file compiling every "
          "type");
ABSL_FLAG(double, precision, 100 * Rounds().precision,
          "target: runs continue until the 95% CI of each policy's median ns/op, and of its "
          "ratio to malloc, is within +- this many percent (or its budget is spent)");
ABSL_FLAG(double, budget, Rounds().budget_seconds,
          "seconds of runs per policy and trace before it stops short of the precision "
          "(with --race=false or --total_budget=0: in a race with a total budget, that "
          "budget decides)");
ABSL_FLAG(int, min_runs, Rounds().min_runs, "runs per policy at least");
ABSL_FLAG(int, max_runs, Rounds().max_runs, "runs per policy at most");
ABSL_FLAG(int, passes, Defaults().measure.run_options.max_passes,
          "passes over the trace in each run at most: the first is cold (fresh process, fresh "
          "pages), the rest warm (the allocator's memory reused), reported apart; 1: cold only");
ABSL_FLAG(double, warm_ms, 1e3 * Defaults().measure.run_options.min_warm_seconds,
          "warm passes continue until they add up to this many milliseconds (at least one)");
// The defaults (cold, program) are the replay model whose predictions came
// closest to the programs run for real (//fidelity:check; docs/fidelity.md);
// warm and first remain for comparison.
ABSL_FLAG(std::string, rank_by, Word(alloctrace::kRankByWords, Defaults().measure.rank_by),
          "which passes rank the policies and make the verdict: cold (the first pass over the "
          "trace, as a program that runs its work once pays it) or warm (the later passes)");
ABSL_FLAG(std::string, clock, Word(alloctrace::kTimingClockWords, Defaults().measure.clock),
          "what times a pass and ranks: cpu (the replay threads' CPU time, user + system, "
          "without waits at sync points), wall (steady clock; per thread: the concurrent "
          "section, what the program would feel) or auto: wall on per-thread replays whose "
          "threads fit the cores (contention and waiting are part of the cost), cpu otherwise");
ABSL_FLAG(std::string, threads, Word(alloctrace::kReplayThreadsWords, Defaults().threads),
          "how a trace recorded on several threads is replayed: each (one OS thread per traced "
          "thread, started together, ordered only where an object or arena passes between "
          "threads; at most 1024 threads, more is refused), one (one thread in the recorded "
          "global order: no contention) or auto (each where the trace has container arenas, "
          "one where it has none: only a malloc can be adopted there). One-thread traces "
          "always replay on one thread");
ABSL_FLAG(std::string, windows, Word(alloctrace::kWindowsModeWords, Defaults().measure.windows),
          "how a run samples the trace: always (sampled windows: each run replays one window "
          "per sixteenth of the trace, from the trace's state there, and estimates the whole "
          "trace's time from them; where rebuilding that state costs half a window or more, and "
          "for every per-thread replay, served windows instead: a process per "
          "policy replays the trace once, timing a window a round; peak RSS and page faults from "
          "one whole run of each policy left at the end), never (whole runs) or auto: windows for "
          "traces of a million memory ops or more. Windows rank by the cold pass; a per-thread "
          "replay's windows are cut at points of the trace's global order");
ABSL_FLAG(int, max_reruns, Defaults().measure.max_reruns,
          "times a run disturbed by an involuntary context switch or a CPU migration is run "
          "again before it is kept as it is");
ABSL_FLAG(bool, process_cost, Defaults().measure.process_cost,
          "count in each malloc's cold figure what its library adds to starting and ending a "
          "process (timed once per invocation: the replayer started with the library preloaded "
          "and without, paired), since a trace is one run of its program and the program pays "
          "it once a run; --process_cost=false for a trace of a part of a longer run");
ABSL_FLAG(int, screen_runs, Defaults().measure.screen_runs,
          "with --policies=default and --race=false: runs of each article policy in the screen");
ABSL_FLAG(bool, race, Rounds().race,
          "race the policies: after each round, a policy whose ratio to the leader's ns/op, "
          "paired by round, shows it slower by more than the noise floor (one-sided paired "
          "t-test on log ratios; Bonferroni over the policies and a union bound over the looks, "
          "look t at level 6*0.05/(pi^2 t^2 K): at most 5% chance of ever eliminating a policy "
          "tied with the leader) runs no more; its row says when and why. A policy 10x "
          "slower than the leader in round 1, or 4x in each of rounds 1 and 2, is out (a gross "
          "loser). With "
          "--policies=default every article policy enters the race (no separate screen). "
          "--race=false: every policy runs until its precision or --budget");
ABSL_FLAG(int, race_min_runs, Rounds().race_min_runs,
          "with --race: paired runs before the test can eliminate a policy (a gross loser "
          "goes sooner)");
ABSL_FLAG(double, total_budget, Rounds().total_budget_seconds,
          "with --race: seconds of runs per trace, all policies together (and the replayer's "
          "own work between them), after which every policy stops where it is; on a long trace it "
          "stretches, up to 47 s, to "
          "5 rounds at the first round's pace, and further, within those 47 s, so that the "
          "policies the race leaves reach 10 rounds (with sampled windows, to all 47 s "
          "once the race has looked, for those short of the precision to run on); "
          "0: no total limit");
ABSL_FLAG(double, run_timeout, Defaults().run_timeout_seconds,
          "seconds a child may run before it is killed (a FAILED run); 0: 60 s + 100 us per "
          "memory op (two passes). With --race, a child past 20x the fastest policy's run "
          "time (at least 5 s) is stopped sooner and its policy eliminated, not failed");
ABSL_FLAG(double, memory_limit_mb, Defaults().memory_limit_mb,
          "the child's limit on resident memory (RssAnon, read every 10 ms) in MiB; a child "
          "past it is killed and its run fails; 0: the "
          "trace's ideal peak live bytes times --memory_limit_factor plus "
          "--memory_limit_floor_mb, at most half the memory available when the replayer "
          "starts; -1: none");
ABSL_FLAG(double, memory_limit_factor, Defaults().memory_limit_factor, "see --memory_limit_mb");
ABSL_FLAG(double, memory_limit_floor_mb, Defaults().memory_limit_floor_mb, "see --memory_limit_mb");
ABSL_FLAG(uint64_t, seed, Rounds().seed, "seed of the run order shuffled in each round");
ABSL_FLAG(std::string, touch, "auto",
          "what the replay writes into each new block, as a constructor would: none, first "
          "(the first 8 bytes), whole, program (as programs do: construct, read before free), "
          "walk (program, and the live blocks read in allocation order a generation at a "
          "time, as a garbage collector such as CPython's does; one thread, whole runs), or "
          "auto (walk on a trace whose header says its program ran such a collector over its "
          "malloc blocks, as capture writes for python3 under PYTHONMALLOC=malloc, unless it "
          "replays per thread or with --windows=always; program otherwise)");
// Its help names the formats from their table (reporters.cc).
ABSL_FLAG(std::string, format, absl::StrJoin(Defaults().formats, ","),
          absl::StrCat("report format: ", alloctrace::ReportFormatHelp(),
                       "; several, comma-separated, with as many --out files, write one "
                       "measurement in each"));
ABSL_FLAG(std::string, out, absl::StrJoin(Defaults().outs, ","),
          "write the report to this file instead of standard output (comma-separated: one per "
          "--format)");
ABSL_FLAG(int, rss_samples, Defaults().measure.run_options.rss_samples,
          "RSS readings taken over each run's cold pass (its course)");
ABSL_FLAG(bool, quiet, Defaults().quiet, "no progress lines on standard error");
ABSL_FLAG(bool, progress_lines, Defaults().measure.progress_lines,
          "one progress line per round on standard error (rounds done, contenders left, "
          "seconds spent and the budget), whatever standard error is: for logs");
ABSL_FLAG(int, confirm, Defaults().confirm,
          "with TRACE -- PROGRAM [ARGS...]: how many of the replay's fastest join the search in "
          "the program (0: 3), beside the best of each family (every malloc; for an "
          "instrumented program each pool kind the safety rule allows, and the article grid's "
          "best); the program's runs decide");
ABSL_FLAG(double, in_situ_budget, Defaults().in_situ_budget_seconds,
          "the search in the program stops after this many seconds of the program's runs (or "
          "--in_situ_runs runs, or when every candidate left is precise); with --per_container "
          "each class's race and the final race get half of it each");
ABSL_FLAG(int, in_situ_runs, Defaults().in_situ_runs,
          "the search in the program stops after this many runs of the program, every run "
          "counted (the first, a warm-up, and the noise floor's too) and never one more; a "
          "candidate whose first turn does not come is skipped (see --in_situ_budget)");
ABSL_FLAG(bool, speed_only, Defaults().speed_only,
          "rank by speed alone: peak RSS never decides between policies the margin of practical "
          "equivalence calls equally fast");
ABSL_FLAG(bool, per_container, Defaults().per_container,
          "after the verdict, a policy per class of containers (the trace's class table): "
          "each class's candidates raced with the others held, then the mix against the best "
          "single choice and std; two to three times the verdict's time");
ABSL_FLAG(double, min_share, 100 * Defaults().min_share,
          "with --per_container: classes with fewer than this percentage of the memory ops "
          "keep the single choice (listed)");
ABSL_FLAG(bool, in_situ, Defaults().in_situ,
          "with -- PROGRAM [ARGS...], no trace: run it under --policies");
ABSL_FLAG(std::string, in_situ_log, Defaults().in_situ_log,
          "the program's stdout and stderr in situ (default alloctrace-insitu.PID.log)");
ABSL_FLAG(std::string, shipped_build, Defaults().shipped_build,
          "with TRACE -- PROGRAM: a shell command that builds PROGRAM with the alias lines in "
          "$ALLOCTRACE_ALIASES pasted and leaves it at $ALLOCTRACE_SHIPPED; the search then "
          "runs every candidate as that shipped build (a malloc preloaded into the "
          "std::allocator build), not under ALLOCTRACE_POLICY");
namespace alloctrace {
namespace {

template <typename... Pieces>
absl::Status Usage(const Pieces&... pieces) {
  return absl::InvalidArgumentError(absl::StrCat(pieces...));
}

// The word of --`flag`=`text` in `table`, or the usage error naming it.
template <typename E, size_t N>
absl::StatusOr<E> ParseFlagWord(const char* flag, const std::string& text,
                                const EnumWord<E> (&table)[N]) {
  std::optional<E> value = ParseWord(table, text);
  if (!value) return Usage("--", flag, "=", text, ": must be ", WordList(table));
  return *value;
}

// --rss_samples, --passes, --warm_ms, --touch: what each run does.
absl::Status ParseRunShape(RunOptions& r, bool& auto_touch) {
  r.rss_samples = absl::GetFlag(FLAGS_rss_samples);
  if (r.rss_samples < 1 || r.rss_samples > 100000) {
    return Usage("--rss_samples=", r.rss_samples, ": must be 1 to 100000");
  }
  r.max_passes = absl::GetFlag(FLAGS_passes);
  if (r.max_passes < 1 || r.max_passes > 1000) {
    return Usage("--passes=", r.max_passes, ": must be 1 to 1000");
  }
  const double warm_ms = absl::GetFlag(FLAGS_warm_ms);
  if (!(warm_ms >= 0 && warm_ms <= 1e6))
    return Usage("--warm_ms=", warm_ms, ": must be 0 to 1000000");
  r.min_warm_seconds = warm_ms / 1e3;
  const std::string touch_word = absl::GetFlag(FLAGS_touch);
  auto_touch = touch_word == "auto";
  if (auto_touch) {
    r.touch = Touch::kProgram;  // what auto gives a trace without a collector (TouchFor)
    return absl::OkStatus();
  }
  std::optional<Touch> touch = ParseWord(kTouchWords, touch_word);
  if (!touch) {
    return Usage("--touch=", touch_word, ": must be auto, ", WordList(kTouchWords));
  }
  r.touch = *touch;
  return absl::OkStatus();
}

// --format and --out.
absl::Status ParseOutput(ReplayerConfig& c) {
  const std::string format_flag = absl::GetFlag(FLAGS_format);
  c.formats = absl::StrSplit(format_flag, ',');
  for (const std::string& format : c.formats) {
    if (FindReportFormat(format) == nullptr) {
      return Usage("--format=", format, ": must be ", ReportFormatList());
    }
  }
  const std::string out_flag = absl::GetFlag(FLAGS_out);
  c.outs.clear();
  if (c.formats.size() == 1 && !out_flag.empty()) {
    c.outs.push_back(out_flag);
  } else if (!out_flag.empty()) {
    c.outs = absl::StrSplit(out_flag, ',');
  }
  if (c.formats.size() > 1 && c.outs.size() != c.formats.size()) {
    return Usage("--format=", format_flag, " needs ", c.formats.size(),
                 " comma-separated --out files");
  }
  return absl::OkStatus();
}

// --precision, --budget, --min_runs, --max_runs, --seed, --race,
// --race_min_runs, --total_budget: when the runs stop.
absl::Status ParseStopping(RoundsSettings& r) {
  const double precision = absl::GetFlag(FLAGS_precision);
  if (!(precision > 0 && precision <= 100)) {
    return Usage("--precision=", precision, ": must be above 0, at most 100");
  }
  r.precision = precision / 100;
  r.budget_seconds = absl::GetFlag(FLAGS_budget);
  if (!(r.budget_seconds >= 0 && r.budget_seconds <= kMaxSeconds)) {
    return Usage("--budget=", r.budget_seconds, ": must be 0 to ", kMaxSeconds, " seconds");
  }
  r.min_runs = absl::GetFlag(FLAGS_min_runs);
  r.max_runs = absl::GetFlag(FLAGS_max_runs);
  if (r.min_runs < 1 || r.min_runs > 100000 || r.max_runs < r.min_runs || r.max_runs > 100000) {
    return Usage("--min_runs=", r.min_runs, ", --max_runs=", r.max_runs,
                 ": need 1 <= min_runs <= max_runs <= 100000");
  }
  r.seed = absl::GetFlag(FLAGS_seed);
  r.race = absl::GetFlag(FLAGS_race);
  r.race_min_runs = absl::GetFlag(FLAGS_race_min_runs);
  if (r.race_min_runs < 2 || r.race_min_runs > 100000) {
    return Usage("--race_min_runs=", r.race_min_runs, ": must be 2 to 100000");
  }
  r.total_budget_seconds = absl::GetFlag(FLAGS_total_budget);
  if (!(r.total_budget_seconds >= 0 && r.total_budget_seconds <= kMaxSeconds)) {
    return Usage("--total_budget=", r.total_budget_seconds, ": must be 0 to ", kMaxSeconds,
                 " seconds");
  }
  return absl::OkStatus();
}

// --max_reruns, --screen_runs, --rank_by, --clock, --threads, --windows.
absl::Status ParseMeasurement(ReplayerConfig& c) {
  MeasureSettings& m = c.measure;
  m.max_reruns = absl::GetFlag(FLAGS_max_reruns);
  if (m.max_reruns < 0 || m.max_reruns > 100) {
    return Usage("--max_reruns=", m.max_reruns, ": must be 0 to 100");
  }
  m.process_cost = absl::GetFlag(FLAGS_process_cost);
  m.screen_runs = absl::GetFlag(FLAGS_screen_runs);
  if (m.screen_runs < 1 || m.screen_runs > 1000) {
    return Usage("--screen_runs=", m.screen_runs, ": must be 1 to 1000");
  }
  absl::StatusOr<RankBy> rank_by =
      ParseFlagWord("rank_by", absl::GetFlag(FLAGS_rank_by), kRankByWords);
  if (!rank_by.ok()) return rank_by.status();
  m.rank_by = *rank_by;
  absl::StatusOr<TimingClock> clock =
      ParseFlagWord("clock", absl::GetFlag(FLAGS_clock), kTimingClockWords);
  if (!clock.ok()) return clock.status();
  m.clock = *clock;
  absl::StatusOr<ReplayThreads> threads =
      ParseFlagWord("threads", absl::GetFlag(FLAGS_threads), kReplayThreadsWords);
  if (!threads.ok()) return threads.status();
  c.threads = *threads;
  absl::StatusOr<WindowsMode> windows =
      ParseFlagWord("windows", absl::GetFlag(FLAGS_windows), kWindowsModeWords);
  if (!windows.ok()) return windows.status();
  m.windows = *windows;
  if (m.windows == WindowsMode::kAlways && m.rank_by == RankBy::kWarm) {
    return Usage("--windows=always --rank_by=warm: a window has no warm pass to rank by");
  }
  return absl::OkStatus();
}

// --run_timeout and the memory limit's flags.
absl::Status ParseChildBounds(ReplayerConfig& c) {
  c.run_timeout_seconds = absl::GetFlag(FLAGS_run_timeout);
  c.memory_limit_mb = absl::GetFlag(FLAGS_memory_limit_mb);
  c.memory_limit_factor = absl::GetFlag(FLAGS_memory_limit_factor);
  c.memory_limit_floor_mb = absl::GetFlag(FLAGS_memory_limit_floor_mb);
  if (!(c.run_timeout_seconds >= 0 && c.run_timeout_seconds <= kMaxSeconds)) {
    return Usage("--run_timeout=", c.run_timeout_seconds, ": must be 0 to ", kMaxSeconds,
                 " seconds (0: from the trace)");
  }
  if (!(c.memory_limit_mb >= -1)) {
    return Usage("--memory_limit_mb=", c.memory_limit_mb,
                 ": must be >= 0 (0: from the trace), or -1 (no limit)");
  }
  if (!(c.memory_limit_factor >= 0)) {
    return Usage("--memory_limit_factor=", c.memory_limit_factor, ": must be >= 0");
  }
  if (!(c.memory_limit_floor_mb >= 0)) {
    return Usage("--memory_limit_floor_mb=", c.memory_limit_floor_mb, ": must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ReplayerConfig> ReplayerConfigFromFlags() {
  ReplayerConfig c;
  c.policies = absl::GetFlag(FLAGS_policies);
  c.list_policies = absl::GetFlag(FLAGS_list_policies);
  c.quiet = absl::GetFlag(FLAGS_quiet);
  c.measure.progress_lines = absl::GetFlag(FLAGS_progress_lines) && !c.quiet;
  c.confirm = absl::GetFlag(FLAGS_confirm);
  if (!(c.confirm >= 0 && c.confirm <= 100)) {
    return Usage("--confirm=", c.confirm,
                 ": must be 0 to 100 (how many of the replay's fastest join the search in the "
                 "program; 0: 3)");
  }
  c.in_situ = absl::GetFlag(FLAGS_in_situ);
  c.per_container = absl::GetFlag(FLAGS_per_container);
  const double min_share = absl::GetFlag(FLAGS_min_share);
  if (!(min_share >= 0 && min_share <= 100)) {
    return Usage("--min_share=", min_share, ": must be a percentage, 0 to 100");
  }
  c.min_share = min_share / 100;
  c.in_situ_log = absl::GetFlag(FLAGS_in_situ_log);
  c.shipped_build = absl::GetFlag(FLAGS_shipped_build);
  c.in_situ_budget_seconds = absl::GetFlag(FLAGS_in_situ_budget);
  c.in_situ_runs = absl::GetFlag(FLAGS_in_situ_runs);
  if (!(c.in_situ_budget_seconds > 0 && c.in_situ_budget_seconds <= kMaxSeconds) ||
      c.in_situ_runs < 3) {
    return Usage("--in_situ_budget must be above 0, at most ", kMaxSeconds,
                 " seconds, and --in_situ_runs at least 3 (got ", c.in_situ_budget_seconds, " and ",
                 c.in_situ_runs, ")");
  }
  c.speed_only = absl::GetFlag(FLAGS_speed_only);
  if (c.list_policies) {
    // The policy list has formats of its own, and runs nothing.
    const std::string format = absl::GetFlag(FLAGS_format);
    std::optional<ListFormat> list = ParseWord(kListFormatWords, format);
    if (!list) {
      return Usage("--list-policies --format=", format, ": must be ", WordList(kListFormatWords));
    }
    c.list_format = *list;
    if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) c.outs = {out};
    return c;
  }
  // Checked in the order of the messages the replayer has always given.
  for (absl::Status st :
       {ParseRunShape(c.measure.run_options, c.measure.auto_touch), ParseOutput(c),
        ParseStopping(c.measure.rounds), ParseMeasurement(c), ParseChildBounds(c)}) {
    if (!st.ok()) return st;
  }
  // A walk reads the blocks live since the trace's start in its one
  // recorded order: one thread, whole runs (replay_loop.h, LiveWalk).
  if (c.measure.run_options.touch == Touch::kWalk) {
    if (c.threads == ReplayThreads::kEach) {
      return Usage(
          "--touch=walk --threads=each: a walk reads the live blocks in the trace's one "
          "recorded order, so it replays on one thread (--threads=one, or auto)");
    }
    if (c.measure.windows == WindowsMode::kAlways) {
      return Usage(
          "--touch=walk --windows=always: a walk reads every block live since the trace's "
          "start, so it replays whole runs (--windows=never, or auto)");
    }
    c.threads = ReplayThreads::kOne;
    c.measure.windows = WindowsMode::kNever;
  }
  // The per-class table has nothing to show without the per-class verdict.
  if (!c.per_container &&
      std::find(c.formats.begin(), c.formats.end(), "csv-classes") != c.formats.end()) {
    return Usage("--format=csv-classes is the per-class table: it needs --per_container");
  }
  return c;
}

ReportContext ReportContextFor(const ReplayerConfig& c) {
  const MeasureSettings& m = c.measure;
  ReportContext ctx;
  ctx.touch = m.run_options.touch;
  ctx.auto_touch = m.auto_touch;
  ctx.clock = m.clock;
  ctx.rank_by = m.rank_by;
  ctx.passes = m.run_options.max_passes;
  ctx.warm_ms = m.run_options.min_warm_seconds * 1e3;
  ctx.precision = m.rounds.precision;
  ctx.budget_seconds = m.rounds.budget_seconds;
  ctx.own_budget = OwnBudgetApplies(m.rounds);
  ctx.min_runs = m.rounds.min_runs;
  if (c.speed_only) ctx.rss_slack = -1;
  return ctx;
}

int64_t MachineMemoryCap() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  long long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib > 0 ? static_cast<int64_t>(kib) * 1024 / 2 : 0;
}

ChildLimits ChildLimitsFor(const ReplayerConfig& c, const ReplayProgram& program,
                           int64_t machine_cap) {
  ChildLimits limits;
  limits.wall_seconds = c.run_timeout_seconds > 0
                            ? c.run_timeout_seconds
                            : 60 + 1e-4 * static_cast<double>(program.memory_ops());
#if defined(__SANITIZE_ADDRESS__)
  // ASan's shadow memory is resident in the child too: no limit fits.
  (void)machine_cap;
  limits.memory_bytes = 0;
#else
  if (c.memory_limit_mb < 0) {
    limits.memory_bytes = 0;
  } else if (c.memory_limit_mb > 0) {
    limits.memory_bytes = static_cast<int64_t>(c.memory_limit_mb * (1 << 20));
  } else {
    const double table_bytes = 32.0 * (program.object_limit + 1);
    const double bytes = static_cast<double>(program.peak_live_bytes) * c.memory_limit_factor +
                         c.memory_limit_floor_mb * (1 << 20) + table_bytes;
    // A trace's claim is bounded before the conversion (a double past
    // INT64_MAX does not convert).
    limits.memory_bytes = machine_cap > 0 && bytes > static_cast<double>(machine_cap) ? machine_cap
                          : bytes >= 9e18 ? int64_t{9000000000000000000}
                                          : static_cast<int64_t>(bytes);
  }
#endif
  return limits;
}

}  // namespace alloctrace
