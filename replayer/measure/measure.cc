// The replay's measurement of one trace (measure.h): the contenders made
// (entries.h, article_grid.h), the rounds run by the replay's runner
// (replay_runner.h), in sampled windows where sampling.h says so, and the
// runs handed on as a MeasuredTrace.
#include "alloctrace/replayer/measure/measure.h"

#include <memory>
#include <utility>

#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/measure/article_grid.h"
#include "alloctrace/replayer/measure/entries.h"
#include "alloctrace/replayer/measure/replay_runner.h"
#include "alloctrace/replayer/measure/sampling.h"

namespace alloctrace {
namespace {

using measure_internal::AddProcessCosts;
using measure_internal::Disturbance;
using measure_internal::EnterArticleGrid;
using measure_internal::Entry;
using measure_internal::Has;
using measure_internal::kNoiseName;
using measure_internal::kReferencePolicy;
using measure_internal::MakeEntry;
using measure_internal::ReplayRunner;

// The rounds' view of an entry; `unchanged_apart`: a trace with no
// container arenas, whose mallocs race apart (race.h).
Contender ContenderOf(const Entry& e, bool unchanged_apart) {
  Contender c;
  c.name = e.runs.name;
  c.role = e.runs.role;
  c.frees_blocks = e.runs.frees_blocks;
  // glibc malloc, its noise set aside, or a preloaded malloc.
  c.races_apart = unchanged_apart && c.role != Role::kNoise &&
                  (e.policy == kReferencePolicy || e.runs.family == allocators::Family::kExternal);
  // Skipped, or failed in the screen: already done.
  c.done = !e.runs.skipped.empty() || e.runs.failed > 0;
  return c;
}

// The rounds' settings for `program`: its path as the progress label (if
// asked), and, with `sampling`, the whole runs' allowance kept from the
// cap (Sampling::KeepForWholeRuns).
RoundsSettings RoundsFor(const MeasureSettings& s, const ReplayProgram& program,
                         const std::vector<Entry>& entries, const Sampling* sampling) {
  RoundsSettings rounds = s.rounds;
  if (sampling != nullptr) sampling->KeepForWholeRuns(entries, &rounds);
  if (s.progress || s.progress_lines) rounds.progress_label = program.path;
  rounds.progress_lines = s.progress_lines;
  return rounds;
}

// Each entry's runs into `out` (the noise set's as its noise floor), with
// why its contender stopped and whether the race eliminated it.
void KeepRuns(std::vector<Entry>& entries, const std::vector<Contender>& contenders,
              MeasuredTrace* out) {
  for (size_t i = 0; i < entries.size(); ++i) {
    PolicyRuns& runs = entries[i].runs;
    const Contender& c = contenders[i];
    if (runs.skipped.empty() && runs.stop == Stop::kNone) {
      runs.stop = c.done ? c.stop : Stop::kWithOthers;
      runs.stop_reason = c.done ? c.stop_reason : "stopped with the others";
    }
    runs.eliminated = c.eliminated;
    if (c.role == Role::kNoise) {
      out->noise = std::move(runs);
    } else {
      out->policies.push_back(std::move(runs));
    }
  }
}

}  // namespace

TraceFacts TraceFactsOf(const ReplayProgram& program) {
  TraceFacts t;
  t.path = program.path;
  t.workload = program.header.workload();
  t.memory_ops = program.memory_ops();
  t.arena_events = program.arena_events;
  t.arenas_used = program.arena_usage.arenas_used;
  t.recorded_seconds = program.recorded_seconds;
  t.recorded_cpu = program.recorded_cpu;
  t.threads = program.threads;
  t.arena_sharing = program.arena_usage.SharingWords();
  t.arena_shape = program.arena_usage.ShapeWords();
  t.class_table_notes = program.class_table_notes;
  t.peak_live_bytes = program.peak_live_bytes;
  t.peak_live_objects = program.peak_live_objects;
  t.cut_short = program.cut_short;
  t.collector = CollectorOf(program.header);
  return t;
}

std::string CollectorOf(const proto::Header& header) {
  const auto it = header.labels().find("collector");
  return it == header.labels().end() ? "" : it->second;
}

Touch TouchFor(const MeasureSettings& s, const SharedProgram& shared) {
  if (!s.auto_touch) return s.run_options.touch;
  const bool walks = !CollectorOf(shared.program.header).empty() && !shared.schedule &&
                     s.windows != WindowsMode::kAlways;
  return walks ? Touch::kWalk : s.run_options.touch;
}

MeasuredTrace MeasureTrace(const SharedProgram& shared, const std::vector<std::string>& names,
                           bool screen, const PolicyInfos& policies, const std::string& self,
                           const MeasureSettings& s) {
  const ReplayProgram& program = shared.program;
  const ThreadSchedule* schedule = shared.schedule ? &*shared.schedule : nullptr;
  MeasuredTrace out;
  out.trace = TraceFactsOf(program);
  out.clock = ResolveClock(
      s.clock, schedule != nullptr ? static_cast<uint32_t>(schedule->streams.size()) : 1,
      UsableCores());
  const Ranking ranking{s.rank_by, s.run_options.max_passes, out.clock};
  Disturbance disturbance;
  std::unique_ptr<Sampling> sampling = Sampling::For(shared, s.windows, ranking, s.rounds.seed);
  if (sampling) out.sampling = sampling->Facts();
  std::vector<Entry> entries;
  for (const std::string& name : names) {
    entries.push_back(MakeEntry(policies, name, name, program, screen, s.mixes));
  }
  if (screen) {
    auto runner_for = [&](std::vector<Entry>& screened) -> std::unique_ptr<ContenderRunner> {
      return std::make_unique<ReplayRunner>(screened, self, shared, s, ranking, disturbance,
                                            sampling.get());
    };
    EnterArticleGrid(entries, policies, program, s, ranking, runner_for, &out.trace);
  }
  // glibc malloc is the reference of every ratio (the listed one, if it
  // is); its second run set gives the noise floor.
  if (!Has(entries, kReferencePolicy)) {
    entries.push_back(MakeEntry(policies, kReferencePolicy, kReferencePolicy, program));
  }
  for (Entry& e : entries) {
    if (e.policy == kReferencePolicy && e.runs.name == kReferencePolicy) {
      e.runs.role = Role::kReference;
    }
  }
  entries.push_back(MakeEntry(policies, kReferencePolicy, kNoiseName, program));
  entries.back().runs.role = Role::kNoise;
  // A fake runner (tests) starts no process: nothing to add to one.
  if (s.process_cost && !s.run_child) AddProcessCosts(entries, self);

  std::vector<Contender> contenders;
  for (const Entry& e : entries) {
    contenders.push_back(ContenderOf(e, /*unchanged_apart=*/program.arena_events == 0));
  }
  const RoundsSettings rounds = RoundsFor(s, program, entries, sampling.get());
  ReplayRunner runner(entries, self, shared, s, ranking, disturbance, sampling.get());
  const RoundsResult done = RunRounds(contenders, runner, rounds);
  out.rounds = done.rounds;
  out.total_budget = done.total_budget;
  runner.EndServers();
  if (sampling) {
    sampling->MakeWholeRuns(
        entries, contenders,
        [&runner](size_t i, const ChildLimits& limits) { return runner.WholeRun(i, limits); },
        rounds, ranking);
  }

  KeepRuns(entries, contenders, &out);
  out.disturbance = DisturbanceCounts{disturbance.seen, disturbance.disturbed, disturbance.kept};
  out.cross_thread_frees = shared.cross_thread_frees;
  if (schedule != nullptr) {
    out.replay_threads = static_cast<uint32_t>(schedule->streams.size());
    out.sync_points = schedule->sync_points;
  }
  return out;
}

}  // namespace alloctrace
