#include "alloctrace/replayer/measure/measure.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/engine/windows.h"
#include "alloctrace/replayer/measure/isolated_run.h"
#include "alloctrace/replayer/measure/policy_safety.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {
namespace {

using allocators::SelectAllocators;

// The name of glibc malloc's second run set, for the noise floor.
constexpr char kNoiseName[] = "malloc (again)";

// A policy as the replay measures it: what runs it, and its runs.
struct Entry {
  std::string policy;  // the registry name to run (kNoiseName's runs malloc; a mix's rest)
  std::string mix;     // a mix's MixSpecWord, "" for one policy
  std::string preload_path;
  PolicyRuns runs;
};

// Disturbed runs seen, re-runs included, over a whole measurement.
struct Disturbance {
  int seen = 0;
  int disturbed = 0;
  int kept = 0;
  // On a machine so busy that most runs are disturbed, a re-run would be
  // disturbed too: re-runs stop once half of 20 or more runs were. And
  // re-runs never make more than a tenth of the runs: on a loaded machine
  // they would eat the race's total budget (measured: 105 of 287 runs at
  // load 8).
  bool Busy() const {
    const int reruns = disturbed - kept;
    return seen >= 20 && (2 * disturbed >= seen || 10 * reruns >= seen);
  }
};

// The windows of each round (engine/windows.h): drawn once per round from
// the seed, the same for every contender of the round, and their start
// states worked out once per round and shared with its children. With one
// window per run, or a few (per-thread windows: 4 of 16 strata), one walk
// of the trace works out the states of a cycle of rounds (each stratum
// once: StartStatesByLead), where their states, held until used, stay under
// kCycleStatesBytes (`rebuild_ops`: RebuildOps); a walk per round cost the
// parent 60 to 80 ms a round on the captured 5-thread trace, about as much
// as a run.
class WindowPlans {
 public:
  // `schedule`: the trace's per-thread replay (null: serialized), whose
  // windows' states also say where each stream starts (AddThreadStarts).
  WindowPlans(const ReplayProgram& program, const ThreadSchedule* schedule,
              const WindowShape& shape, uint64_t seed, uint64_t rebuild_ops)
      : program_(program),
        schedule_(schedule),
        num_ops_(program.ops.size()),
        shape_(shape),
        weights_(StratumWeights(ViewOf(program), shape_)),
        seed_(seed),
        by_cycle_(shape.per_run < shape.strata &&
                  rebuild_ops * static_cast<uint64_t>(shape.strata) * sizeof(LiveObject) <=
                      kCycleStatesBytes) {}
  ~WindowPlans() {
    if (states_fd_ >= 0) close(states_fd_);
  }
  WindowPlans(const WindowPlans&) = delete;
  WindowPlans& operator=(const WindowPlans&) = delete;

  const std::string& WordFor(int round) {
    Plan(round);
    return word_;
  }

  // Round `round`'s windows.
  const std::vector<ReplayWindow>& WindowsOf(int round) {
    Plan(round);
    return windows_;
  }

  // Whether the windows are served (engine/window_server.h).
  bool served() const { return shape_.served; }

  // The round's shared start states; -1 if they could not be shared (the
  // children then work them out) or are not needed (served windows).
  int StatesFdFor(int round) {
    Plan(round);
    return states_fd_;
  }

  SamplingFacts Facts() const {
    SamplingFacts f;
    f.windowed = true;
    f.strata = shape_.strata;
    f.per_run = std::min(shape_.per_run, shape_.strata);
    f.window_ops = shape_.window_ops;
    f.lead_ops = shape_.lead_ops;
    f.served = shape_.served;
    f.timed_share = num_ops_ == 0 ? 0
                                  : std::min(1.0, static_cast<double>(f.per_run) *
                                                      static_cast<double>(shape_.window_ops) /
                                                      static_cast<double>(num_ops_));
    return f;
  }

 private:
  // Round `round`'s windows and states, made when it is first asked for
  // (the rounds ask in order: the previous round's are dropped).
  void Plan(int round) {
    if (round == round_) return;
    round_ = round;
    windows_ = PlanWindows(num_ops_, shape_, weights_, seed_, round);
    const std::vector<ReplayWindow>& windows = windows_;
    word_ = WindowsWord(windows);
    if (states_fd_ >= 0) close(states_fd_);
    states_fd_ = -1;
    if (shape_.served && schedule_ != nullptr) {  // and each stream's bounds
      const std::vector<uint32_t> begin = StreamOpsBefore(program_, *schedule_, windows[0].begin);
      const std::vector<uint32_t> end = StreamOpsBefore(program_, *schedule_, windows[0].end);
      for (size_t t = 0; t < begin.size(); ++t) {
        absl::StrAppend(&word_, t == 0 ? ";" : ",", begin[t], ",", end[t]);
      }
    }
    if (shape_.served) return;  // the serving children need no states
    WindowStates states = StatesOf(round, windows);
    if (schedule_ != nullptr) AddThreadStarts(program_, *schedule_, windows, &states);
    absl::StatusOr<int> fd = ShareWindowStates(states);
    states_fd_ = fd.ok() ? *fd : -1;
  }

  WindowStates StatesOf(int round, const std::vector<ReplayWindow>& windows) {
    if (!by_cycle_) return StartStates(ViewOf(program_), windows);
    WindowStates states;
    if (TakeStates(&cycle_, windows, &states)) return states;
    // The rounds from this one on take every stratum once.
    const int rounds = (shape_.strata + shape_.per_run - 1) / shape_.per_run;
    std::vector<ReplayWindow> ahead;
    for (int r = round; r < round + rounds; ++r) {
      for (const ReplayWindow& w : PlanWindows(num_ops_, shape_, weights_, seed_, r)) {
        ahead.push_back(w);
      }
    }
    // The cycle starts with this round's own windows: they are found (a
    // lead_begin twice in a round, possible only in a tiny trace, is not).
    cycle_ = StartStatesByLead(ViewOf(program_), std::move(ahead));
    if (TakeStates(&cycle_, windows, &states)) return states;
    return StartStates(ViewOf(program_), windows);
  }

  // What a cycle's states may hold at most (beyond it, a walk per round).
  static constexpr uint64_t kCycleStatesBytes = uint64_t{256} << 20;

  const ReplayProgram& program_;
  const ThreadSchedule* schedule_;
  uint64_t num_ops_;
  WindowShape shape_;
  std::vector<uint64_t> weights_;
  uint64_t seed_;
  bool by_cycle_;
  std::map<uint64_t, WindowStates> cycle_;  // by lead_begin, until used
  int round_ = -1;
  std::vector<ReplayWindow> windows_;
  std::string word_;
  int states_fd_ = -1;
};

// The last CPU this process may use; -1 if unknown.
int LastAllowedCpu() {
  const std::vector<int> cpus = AllowedCpus();
  return cpus.empty() ? -1 : cpus.back();
}

// The replay's runs for the rounds: one child per run of a policy.
class ReplayRunner : public ContenderRunner {
 public:
  // `plans`: the runs are windowed (null: whole runs).
  ReplayRunner(std::vector<Entry>& entries, const std::string& self, int shared_fd, int schedule_fd,
               const MeasureSettings& s, const Ranking& ranking, Disturbance& disturbance,
               WindowPlans* plans)
      : entries_(entries),
        self_(self),
        shared_fd_(shared_fd),
        schedule_fd_(schedule_fd),
        s_(s),
        ranking_(ranking),
        disturbance_(disturbance),
        plans_(plans),
        cpu_(schedule_fd < 0 ? LastAllowedCpu() : -1) {}

  // One run of entries[i], re-run while disturbed (up to --max_reruns).
  // `limits` bound the run's attempts together: a re-run is made only if
  // another attempt as long as the last fits in what is left of the time
  // limit, and gets what is left (the budget's cap sets that limit, and
  // three attempts of a 9 s run took 27 s of a cap meant for one). A
  // re-run stopped at what was left keeps the disturbed attempt before it.
  RunOutcome Run(size_t i, int round, const ChildLimits& limits, bool race_limited) override {
    if (plans_ != nullptr && plans_->served() && !s_.run_child) {
      return RunServed(i, round, limits, race_limited);
    }
    Entry& e = entries_[i];
    RunOutcome o;
    ChildLimits left = limits;
    std::optional<RunRecord> disturbed_before;  // the last attempt, re-run
    double disturbed_seconds = 0;
    for (int attempt = 0;; ++attempt) {
      ++e.runs.attempts;
      ChildRun child =
          RunChild(e, left, plans_ != nullptr ? plans_->WordFor(round) : "",
                   plans_ != nullptr ? plans_->StatesFdFor(round) : -1, s_.run_options, cpu_);
      o.seconds += child.seconds;
      absl::StatusOr<RunResult>& r = child.result;
      if (disturbed_before && absl::IsDeadlineExceeded(r.status())) {
        ++disturbance_.kept;
        return Keep(e, *std::move(disturbed_before), o, disturbed_seconds);
      }
      if (std::optional<RunOutcome> end = NotKept(e, r, o, race_limited)) return *end;
      RunRecord record = Record(r, round, attempt);
      const bool disturbed = record.disturbed;
      const bool rerun_fits =
          limits.wall_seconds <= 0 || o.seconds + child.seconds <= limits.wall_seconds;
      if (disturbed && attempt < s_.max_reruns && !disturbance_.Busy() && rerun_fits) {
        if (limits.wall_seconds > 0) left.wall_seconds = limits.wall_seconds - o.seconds;
        disturbed_before = std::move(record);
        disturbed_seconds = child.seconds;
        continue;
      }
      disturbance_.kept += disturbed;
      return Keep(e, std::move(record), o, child.seconds);
    }
  }

  // One served window of entries[i] (engine/window_server.h): its serving
  // child asked for the round's window, started first where it has none
  // or is past the window (a new cycle of rounds: a new replay from the
  // trace's first op). Never re-run: the child has replayed past the
  // window; a disturbed window is kept and counted.
  RunOutcome RunServed(size_t i, int round, const ChildLimits& limits, bool race_limited) {
    EndServersOfDone(round);
    Entry& e = entries_[i];
    Server& server = servers_[i];
    server.round = round;
    const ReplayWindow& window = plans_->WindowsOf(round).front();
    RunOutcome o;
    ++e.runs.attempts;
    const auto t0 = std::chrono::steady_clock::now();
    if (server.child && (server.child->ended() || server.position > window.begin)) {
      server.child.reset();
    }
    absl::StatusOr<RunResult> r = absl::UnknownError("no serving child");
    if (!server.child) {
      ChildRequest request = RequestFor(e, "", -1, s_.run_options);
      std::vector<std::string> argv = ChildArgs(request);
      argv.insert(argv.begin(), self_);
      absl::StatusOr<std::unique_ptr<ServingChild>> child = ServingChild::Start(
          std::move(argv), e.preload_path, kChildCommandFdWord, kChildResultFdWord, cpu_);
      if (child.ok()) {
        server.child = *std::move(child);
        server.position = 0;
      } else {
        r = child.status();
      }
    }
    if (server.child) {
      BoundServersMemory(i);
      r = server.child->Serve(plans_->WordFor(round), limits);
      server.position = window.end;
      if (server.child->ended()) server.child.reset();
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (std::optional<RunOutcome> end = NotKept(e, r, o, race_limited)) return *end;
    RunRecord record = Record(r, round, 0);
    disturbance_.kept += record.disturbed;
    return Keep(e, std::move(record), o, o.seconds);
  }

  // Ends every serving child (their memory back before the whole runs).
  void EndServers() { servers_.clear(); }

  // One whole run of entries[i] with one pass, after windowed rounds: kept
  // in its whole_runs, or its failure in whole_run_note. Returns the
  // seconds it took.
  double WholeRun(size_t i, const ChildLimits& limits) {
    Entry& e = entries_[i];
    RunOptions one_pass = s_.run_options;
    one_pass.max_passes = 1;
    ChildRun child = RunChild(e, limits, "", -1, one_pass, /*cpu=*/-1);
    absl::StatusOr<RunResult>& r = child.result;
    if (!r.ok() || !r->error.empty()) {
      e.runs.whole_run_error = r.ok() ? r->error : std::string(r.status().message());
      e.runs.whole_run_over_limit = OverLimit(r);
      return child.seconds;
    }
    RunRecord record;
    record.round = -1;
    record.result = *std::move(r);
    e.runs.whole_runs.push_back(std::move(record));
    return child.seconds;
  }

 private:
  // A run that ends without a record: stopped at the race's time limit,
  // or failed; nullopt where `r` is a result to record.
  static std::optional<RunOutcome> NotKept(Entry& e, const absl::StatusOr<RunResult>& r,
                                           RunOutcome o, bool race_limited) {
    if (race_limited && absl::IsDeadlineExceeded(r.status())) {
      o.end = RunOutcome::End::kStopped;
      return o;
    }
    if (!r.ok() || !r->error.empty()) return Failed(e, r, o);
    return std::nullopt;
  }

  // The record of result `r` in `round`, counted as seen (and disturbed).
  RunRecord Record(absl::StatusOr<RunResult>& r, int round, int reruns) {
    RunRecord record;
    record.round = round;
    record.reruns = reruns;
    record.disturbed = Disturbed(*r);
    ++disturbance_.seen;
    disturbance_.disturbed += record.disturbed;
    record.result = *std::move(r);
    return record;
  }

  // `record` kept in e's runs; the outcome with its figure.
  RunOutcome Keep(Entry& e, RunRecord record, RunOutcome o, double seconds) const {
    record.result.process_seconds = e.runs.process_seconds;
    o.figure = RunNsPerOp(record.result, ranking_.warm(), ranking_.clock);
    o.run_seconds = seconds;
    e.runs.runs.push_back(std::move(record));
    return o;
  }

  // A serving child, and where its replay stands.
  struct Server {
    std::unique_ptr<ServingChild> child;
    uint64_t position = 0;  // the op its replay has reached
    int round = 0;          // the last round it served
  };

  // Ends the serving children of contenders that did not run in the round
  // before `round` (done: the rounds run every contender not done), so
  // their heaps do not stay resident through the rest of the rounds.
  void EndServersOfDone(int round) {
    for (auto it = servers_.begin(); it != servers_.end();) {
      it = it->second.round < round - 1 ? servers_.erase(it) : std::next(it);
    }
  }

  // Holds the serving children's resident memory together within
  // MeasureSettings::served_memory_bytes: the largest ends (not entry
  // `serving`'s) until they fit.
  void BoundServersMemory(size_t serving) {
    if (s_.served_memory_bytes <= 0) return;
    while (true) {
      int64_t total = 0, largest_bytes = -1;
      auto largest = servers_.end();
      for (auto it = servers_.begin(); it != servers_.end(); ++it) {
        if (!it->second.child) continue;
        const int64_t bytes = std::max<int64_t>(0, ResidentAnonBytes(it->second.child->pid()));
        total += bytes;
        if (it->first != serving && bytes > largest_bytes) {
          largest_bytes = bytes;
          largest = it;
        }
      }
      if (total <= s_.served_memory_bytes || largest == servers_.end()) return;
      servers_.erase(largest);
    }
  }

  ChildRequest RequestFor(const Entry& e, const std::string& windows, int states_fd,
                          const RunOptions& options) const {
    ChildRequest request;
    request.policy = e.policy;
    request.program_fd = shared_fd_;
    request.schedule_fd = schedule_fd_;
    request.attempt = e.runs.attempts;
    request.windows = windows;
    request.states_fd = states_fd;
    request.mix = e.mix;
    request.options = options;
    return request;
  }

  ChildRun RunChild(const Entry& e, const ChildLimits& limits, const std::string& windows,
                    int states_fd, const RunOptions& options, int cpu) {
    std::vector<std::string> argv = ChildArgs(RequestFor(e, windows, states_fd, options));
    argv.insert(argv.begin(), self_);
    if (s_.run_child) return s_.run_child(std::move(argv), e.preload_path, limits);
    const auto t0 = std::chrono::steady_clock::now();
    ChildRun c{RunInFreshChild(std::move(argv), e.preload_path, kChildResultFdWord, limits, cpu),
               0};
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
  }

  // Whether a failed run was stopped at the time or memory limit, or ran
  // out of memory: what the limits are for, not a fault.
  static bool OverLimit(const absl::StatusOr<RunResult>& r) {
    if (!r.ok())
      return absl::IsDeadlineExceeded(r.status()) || absl::IsResourceExhausted(r.status());
    // (The child names its data limit when an allocation failed under it.)
    return absl::StrContains(r->error, "out of memory") ||
           absl::StrContains(r->error, "under the data limit");
  }

  // A failed run of `e`: its error kept, and whether more runs are pointless.
  static RunOutcome Failed(Entry& e, const absl::StatusOr<RunResult>& r, RunOutcome o) {
    o.end = RunOutcome::End::kFailed;
    // Past the time or memory limit: another run would be too.
    o.fatal = OverLimit(r);
    if (!r.ok()) {
      o.error = std::string(r.status().message());
    } else {
      o.error = r->error;
      o.fatal |= absl::StrContains(o.error, "failed at op");
    }
    ++e.runs.failed;
    e.runs.over_limit += OverLimit(r);
    if (e.runs.first_error.empty()) {
      e.runs.first_error = absl::StrCat("run ", e.runs.attempts, ": ", o.error);
    }
    return o;
  }

  // Only the passes that rank count: measured on simple_map and
  // list_churn, a run disturbed in its other passes reads its ranking
  // figure as undisturbed runs do (docs/results.md, "Disturbed runs"). A
  // per-thread replay is never counted disturbed: its threads, more than
  // the cores on every multi-threaded sample trace, preempt and migrate one
  // another, so every run had a switch (2026-11-25: 2223 of 2223 runs of the
  // five per-thread traces) and re-runs were waste.
  bool Disturbed(const RunResult& r) const {
    if (schedule_fd_ >= 0) return false;
    const size_t first = ranking_.warm() ? 1 : 0;
    const size_t last = ranking_.warm() ? r.passes.size() : std::min<size_t>(1, r.passes.size());
    bool disturbed = r.migrations > 0;
    for (size_t i = first; i < last; ++i) disturbed |= r.passes[i].involuntary_switches > 0;
    return disturbed;
  }

  std::vector<Entry>& entries_;
  std::string self_;
  int shared_fd_;
  int schedule_fd_;
  const MeasureSettings& s_;
  Ranking ranking_;
  Disturbance& disturbance_;
  WindowPlans* plans_;
  std::map<size_t, Server> servers_;  // by entry, served windows only
  // The CPU a serialized replay's runs run on, every one of them: the last
  // this process may use (`taskset -c` chooses it); -1 (where the scheduler
  // puts them) for a per-thread replay, whose threads need every core. The
  // whole runs after windows (peak RSS and page faults only) are not pinned.
  // On a shared machine a core's neighbours (its sibling hyperthread, its
  // share of the last-level cache) slow it in spells of milliseconds, each
  // core its own (docs/results.md, "Where the noise comes from"): runs on
  // whichever core was free met different neighbours from their pair's
  // (and, likely, a core newly taken held less of the trace in its caches).
  // On lru_cache 2000000, slab/st/single and jemalloc against glibc malloc,
  // 40 rounds, 5 sets each interleaved, measured: per-round spread of the
  // log ratio 0.20 and 0.19 on one CPU, 0.24 and 0.22 with the CPUs taken in
  // turn by round, 0.33 and 0.32 where the scheduler put them; the same
  // ratios.
  int cpu_;
};

// A mix named `name` (MeasureSettings::mixes): run by its rest's process
// (that malloc's preload), MixAllocator serving each class. Its safety
// per class is the caller's rule.
Entry MakeMixEntry(const PolicyInfos& policies, const std::string& name, const MixSpec& spec) {
  Entry e;
  const allocators::AllocatorInfo& rest = policies.at(spec.rest);
  e.policy = spec.rest;
  e.mix = MixSpecWord(spec);
  e.runs.name = name;
  e.runs.family = allocators::Family::kOurs;
  if (!rest.preload.empty()) {
    e.preload_path = FindPreloadLibrary(rest.preload);
    if (e.preload_path.empty()) e.runs.skipped = absl::StrCat(rest.preload, " is not installed");
  }
  return e;
}

// A policy to measure on `program`, or skipped (with the reason) if it may
// not serve it (policy_safety.h) or its library is not installed.
// `default_set`: the policy comes from the default set or the article
// grid, not from the user's list, and one not worth running on the trace
// is skipped too (PoolPerArenaReason, LockedTwinReason, StackTwinReason).
Entry MakeEntry(const PolicyInfos& policies, const std::string& name,
                const std::string& display_name, const ReplayProgram& program,
                bool default_set = false, const std::map<std::string, MixSpec>& mixes = {}) {
  Entry e;
  auto mix = mixes.find(name);
  if (mix != mixes.end()) return MakeMixEntry(policies, name, mix->second);
  const allocators::AllocatorInfo& info = policies.at(name);
  e.policy = name;
  e.runs.name = display_name;
  e.runs.family = info.family;
  e.runs.adopt = info.adopt;
  e.runs.frees_blocks = info.frees_blocks;
  e.runs.skipped = UnsafeReason(info, program.arena_usage);
  if (e.runs.skipped.empty()) {
    e.runs.skipped = UnsafeSharedStateReason(info, program.arena_usage, program.threads);
  }
  if (e.runs.skipped.empty() && default_set) {
    e.runs.skipped =
        PoolPerArenaReason(info, program.arena_usage, program.allocs + program.reallocs_count);
    if (e.runs.skipped.empty()) e.runs.skipped = LockedTwinReason(info, program.threads);
    if (e.runs.skipped.empty()) {
      e.runs.skipped = StackTwinReason(info, program.arena_usage, program.threads);
    }
  }
  if (e.runs.skipped.empty() && !info.preload.empty()) {
    e.preload_path = FindPreloadLibrary(info.preload);
    if (e.preload_path.empty()) e.runs.skipped = absl::StrCat(info.preload, " is not installed");
  }
  return e;
}

// The malloc library `preload`'s ProcessCost, measured once per process
// (kProcessCostRounds pairs of probes: about 0.1 to 0.5 s).
absl::StatusOr<double> ProcessCostOf(const std::string& self, const std::string& preload) {
  static std::mutex mu;
  static auto* const costs = new std::map<std::string, absl::StatusOr<double>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = costs->find(preload);
  if (it == costs->end()) {
    it = costs->emplace(preload, ProcessCost({self, kProbeMarker}, preload, kProcessCostRounds))
             .first;
  }
  return it->second;
}

// Gives each malloc's entry its library's process cost (0 for glibc
// malloc's, the process's own: the pools' and the reference's runs start
// no other library), or a note where it could not be measured.
void AddProcessCosts(std::vector<Entry>& entries, const std::string& self) {
  for (Entry& e : entries) {
    if (e.preload_path.empty() || !e.runs.skipped.empty()) continue;
    absl::StatusOr<double> cost = ProcessCostOf(self, e.preload_path);
    if (cost.ok()) {
      e.runs.process_seconds = *cost;
    } else {
      e.runs.note = absl::StrCat("its process cost is not counted: ", cost.status().message());
    }
  }
}

bool Has(const std::vector<Entry>& entries, const std::string& policy) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const Entry& e) { return e.policy == policy && e.mix.empty(); });
}

// The article policies the default set left out of a trace, counted by
// reason, for the trace's note (GridLeftOutNote): a row each would bury
// the table under dozens of rows that say the same.
struct GridLeftOut {
  int per_arena = 0;    // PoolPerArenaReason
  int locked_twin = 0;  // LockedTwinReason
  int stack_twin = 0;   // StackTwinReason
  int other = 0;        // not thread-safe on the trace, library missing
};

// The article policies of storage `kind` that may serve the trace; those
// left out are counted in *left_out.
std::vector<Entry> ArticleGrid(const std::string& kind, const PolicyInfos& policies,
                               const ReplayProgram& program, GridLeftOut* left_out) {
  std::vector<Entry> grid;
  absl::StatusOr<std::vector<std::string>> names =
      SelectAllocators(absl::StrCat("pool/", kind, "/*"));
  if (!names.ok()) return grid;
  for (const std::string& name : *names) {
    Entry e = MakeEntry(policies, name, name, program, /*default_set=*/true);
    const allocators::AllocatorInfo& info = policies.at(name);
    if (e.runs.skipped.empty()) {
      grid.push_back(std::move(e));
    } else if (e.runs.skipped == PoolPerArenaReason(info, program.arena_usage,
                                                    program.allocs + program.reallocs_count)) {
      ++left_out->per_arena;
    } else if (e.runs.skipped == LockedTwinReason(info, program.threads)) {
      ++left_out->locked_twin;
    } else if (e.runs.skipped == StackTwinReason(info, program.arena_usage, program.threads)) {
      ++left_out->stack_twin;
    } else {
      ++left_out->other;
    }
  }
  return grid;
}

// What the default set left out of the article grid, and why, as the
// trace's note ("" if nothing).
std::string GridLeftOutNote(const GridLeftOut& g) {
  std::vector<std::string> parts;
  if (g.per_arena > 0) {
    parts.push_back(absl::StrCat(
        g.per_arena,
        " that keep a pool per arena (the stack holding: most of the trace's arenas hold one "
        "block, so their pools alone call glibc malloc as often as glibc malloc is called)"));
  }
  if (g.locked_twin > 0) {
    parts.push_back(absl::StrCat(g.locked_twin,
                                 " thread-safe ones (mt: the trace was recorded on one thread, "
                                 "where each is its st twin plus a lock, never faster)"));
  }
  if (g.stack_twin > 0) {
    parts.push_back(absl::StrCat(g.stack_twin,
                                 " that keep a pool per arena (stack: the trace's blocks all live "
                                 "in one arena, where each is the same replay as its single twin, "
                                 "which runs)"));
  }
  if (g.other > 0) {
    parts.push_back(absl::StrCat(g.other, " that may not serve the trace"));
  }
  if (parts.empty()) return "";
  return absl::StrCat("the default set leaves out ", absl::StrJoin(parts, " and "),
                      " of the article's policies; --policies=NAME (or a glob, e.g. "
                      "'pool/*') runs them");
}

// With the race: the article grid enters it like any other policy.
void AddArticleGridToRace(std::vector<Entry>& entries, const PolicyInfos& policies,
                          const ReplayProgram& program, GridLeftOut* left_out) {
  for (const std::string& kind : allocators::ArticleStorageKinds()) {
    std::vector<Entry> grid = ArticleGrid(kind, policies, program, left_out);
    const int size = static_cast<int>(grid.size());
    for (Entry& e : grid) {
      if (Has(entries, e.policy)) continue;
      e.runs.note =
          absl::StrFormat("one of the %d %s-storage article policies in the race", size, kind);
      e.runs.screen_kind = kind;
      entries.push_back(std::move(e));
    }
  }
}

// Without the race: the fastest article policy of each storage kind in a
// screen of s.screen_runs shuffled rounds joins the set; a policy that
// fails in the screen joins it as failed (never hidden).
void ScreenArticleGrid(std::vector<Entry>& entries, const PolicyInfos& policies,
                       const ReplayProgram& program, std::mt19937_64& rng,
                       const std::function<ReplayRunner(std::vector<Entry>&)>& runner_for,
                       const MeasureSettings& s, const Ranking& ranking, GridLeftOut* left_out) {
  for (const std::string& kind : allocators::ArticleStorageKinds()) {
    std::vector<Entry> screened = ArticleGrid(kind, policies, program, left_out);
    if (screened.empty()) continue;
    ReplayRunner runner = runner_for(screened);
    std::vector<size_t> order(screened.size());
    for (int round = 0; round < s.screen_runs; ++round) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i : order) {
        if (screened[i].runs.failed == 0) runner.Run(i, -1 - round, s.rounds.limits, false);
      }
    }
    size_t best = screened.size();
    double best_ns = 0;
    for (size_t i = 0; i < screened.size(); ++i) {
      Entry& e = screened[i];
      if (e.runs.failed > 0) {
        e.runs.note = "failed in the screen of the article grid";
        e.runs.stop_reason = "failed";
        e.runs.runs.clear();
        entries.push_back(std::move(e));
        continue;
      }
      const double ns = Median(RankFigures(e.runs, ranking));
      if (best == screened.size() || ns < best_ns) {
        best = i;
        best_ns = ns;
      }
    }
    if (best == screened.size()) continue;
    Entry e = MakeEntry(policies, screened[best].policy, screened[best].policy, program);
    e.runs.note =
        absl::StrFormat("the fastest of the %d %s-storage article policies in a %d-run screen",
                        static_cast<int>(screened.size()), kind, s.screen_runs);
    e.runs.screen_kind = kind;
    entries.push_back(std::move(e));
  }
}

// The rounds' view of an entry; `unchanged_apart`: a trace with no
// container arenas, whose mallocs race apart (race.h).
Contender ContenderOf(const Entry& e, bool unchanged_apart) {
  Contender c;
  c.name = e.runs.name;
  c.reference = e.policy == "malloc" && e.runs.name == "malloc";
  c.noise = e.runs.name == kNoiseName;
  c.races = e.policy != "bump";  // the harness floor, never a contender
  c.frees_blocks = e.runs.frees_blocks;
  c.races_apart = unchanged_apart && !c.noise &&
                  (e.policy == "malloc" || e.runs.family == allocators::Family::kExternal);
  // Skipped, or failed in the screen: already done.
  c.done = !e.runs.skipped.empty() || e.runs.failed > 0;
  return c;
}

// Seconds the whole runs after windowed rounds may take together. They
// come out of the total budget's cap (the rounds stretch to the cap less
// what the contenders still in the race will need of this: RoundsFor), so
// a long trace's command ends within the cap and the decoding
// (docs/usage.md). On the captured 5-thread trace of 10 M events a whole
// per-thread run takes 2 to 5 s: 8 s, and then 12, covered 3 of the 4
// contenders left, and the one without a whole run had its peak RSS from
// its windows, which the recommendation's working-set rule cannot compare
// with the others'.
constexpr double kWholeRunsAllowanceSeconds = 14;

// A whole run's wall time, from the windows' estimate of its pass: the
// pass, the child's start and the heap's teardown.
double EstimatedWholeRunSeconds(double pass_seconds) { return 1.25 * pass_seconds + 0.5; }

// The windows' estimate of a whole pass, the largest of the runs' (0: no
// run yet).
double WindowsPassSeconds(const PolicyRuns& runs) {
  double pass_seconds = 0;
  for (const RunRecord& r : runs.runs) pass_seconds = std::max(pass_seconds, r.result.seconds);
  return pass_seconds;
}

// After windowed rounds: one whole run for each contender left (not
// eliminated, failed or skipped) and for glibc malloc, the cheapest first
// (by their windows' estimate), so that as many as can get one within
// kWholeRunsAllowanceSeconds; a run is started only where its estimate
// fits in what is left of it, and is limited to a few times its estimated
// pass (at least 5 s). A contender whose whole run fails gets that error
// (its windows could not see it).
void MakeWholeRuns(std::vector<Entry>& entries, const std::vector<Contender>& contenders,
                   ReplayRunner& runner, const RoundsSettings& rounds, const Ranking& ranking) {
  std::vector<std::pair<double, size_t>> order;  // (the windows' estimate of a pass, entry)
  double rounds_spent = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Contender& c = contenders[i];
    rounds_spent += c.spent;
    if (c.noise || c.eliminated || c.failed > 0 || !entries[i].runs.skipped.empty()) continue;
    if (RankFigures(entries[i].runs, ranking).empty()) continue;
    order.emplace_back(WindowsPassSeconds(entries[i].runs), i);
  }
  std::sort(order.begin(), order.end());
  // What their estimates need (the rounds kept that much of the cap), or
  // more where the rounds left more of it; never more than the allowance.
  double need = 0;
  for (const auto& [pass_seconds, i] : order) need += EstimatedWholeRunSeconds(pass_seconds);
  const double cap = std::max(rounds.total_budget_seconds, rounds.max_total_budget_seconds);
  const double allowed = std::min(kWholeRunsAllowanceSeconds, std::max(need, cap - rounds_spent));
  double spent = 0;
  for (const auto& [pass_seconds, i] : order) {
    Entry& e = entries[i];
    const double estimate = EstimatedWholeRunSeconds(pass_seconds);
    if (spent + estimate > allowed) {
      e.runs.whole_run_note = absl::StrFormat(
          "no whole run: its estimated %.1f s would pass the %.1f s left for whole runs "
          "(%.1f s spent)",
          estimate, allowed, spent);
      continue;
    }
    ChildLimits limits = rounds.limits;
    const double bound = std::max(5.0, 4 * pass_seconds + 2);
    if (limits.wall_seconds <= 0 || limits.wall_seconds > bound) limits.wall_seconds = bound;
    spent += runner.WholeRun(i, limits);
  }
}

// The rounds' settings for `program`: its path as the progress label (if
// asked), and, `windowed`, the whole runs' allowance kept from the cap:
// what the contenders left will need by their windows' estimates (on the
// 11 M-op trace, 1.1 s each), at most the allowance (MakeWholeRuns).
RoundsSettings RoundsFor(const MeasureSettings& s, const ReplayProgram& program,
                         const std::vector<Entry>& entries, bool windowed) {
  RoundsSettings rounds = s.rounds;
  if (windowed) {
    rounds.kept_seconds = kWholeRunsAllowanceSeconds;
    rounds.kept_for = [&entries](size_t i) {
      if (!entries[i].runs.skipped.empty()) return 0.0;
      const double pass = WindowsPassSeconds(entries[i].runs);
      return pass > 0 ? EstimatedWholeRunSeconds(pass) : -1.0;
    };
    rounds.to_cap = true;
  }
  if (s.progress || s.progress_lines) rounds.progress_label = program.path;
  rounds.progress_lines = s.progress_lines;
  return rounds;
}

}  // namespace

bool UsesWindows(WindowsMode mode, uint64_t num_ops, uint64_t memory_ops,
                 uint64_t windowed_run_ops) {
  switch (mode) {
    case WindowsMode::kAlways:
      return memory_ops > 0;
    case WindowsMode::kNever:
      return false;
    case WindowsMode::kAuto:
      break;
  }
  return memory_ops >= kWindowsFromMemoryOps && 4 * windowed_run_ops <= num_ops;
}

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
  return t;
}

namespace {

// A per-thread replay serves its windows up to this many threads: each
// serving child keeps its replay threads through the rounds, a thread per
// stream for every contender still in the race.
constexpr uint32_t kServedThreadsAtMost = 64;

// Whether the rounds replay sampled windows (--windows, the trace's size
// and what a windowed run would replay), and if so their shape and what a
// window rebuilds at most. Windows rank by the cold pass they estimate.
// `replay_threads`: the per-thread replay's threads, 0 for a serialized
// one.
bool WindowsFor(const ReplayProgram& program, WindowsMode mode, const Ranking& ranking,
                uint32_t replay_threads, WindowShape* shape, uint64_t* rebuild_ops) {
  const bool per_thread = replay_threads > 0;
  const bool may_use_windows =
      !ranking.warm() && program.memory_ops() > 0 &&
      (mode == WindowsMode::kAlways ||
       (mode == WindowsMode::kAuto && program.memory_ops() >= kWindowsFromMemoryOps));
  if (!may_use_windows) return false;
  *rebuild_ops = RebuildOps(ViewOf(program), program.peak_live_objects);
  *shape = ShapeFor(program.ops.size(), *rebuild_ops, per_thread);
  // A serialized replay whose windows would rebuild much, and a per-thread
  // replay of up to kServedThreadsAtMost threads: served instead.
  if (per_thread ? replay_threads <= kServedThreadsAtMost : shape->per_run == 1) {
    *shape = ServedShape(program.ops.size());
  }
  return UsesWindows(mode, program.ops.size(), program.memory_ops(),
                     WindowedRunOps(*shape, *rebuild_ops));
}

// Each entry's runs into `out` (the noise set's as its noise floor), with
// why its contender stopped and whether the race eliminated it.
void KeepRuns(std::vector<Entry>& entries, const std::vector<Contender>& contenders,
              MeasuredTrace* out) {
  for (size_t i = 0; i < entries.size(); ++i) {
    PolicyRuns& runs = entries[i].runs;
    const Contender& c = contenders[i];
    if (runs.skipped.empty() && runs.stop_reason.empty()) {
      runs.stop_reason = c.done ? c.stop_reason : "stopped with the others";
    }
    runs.eliminated = c.eliminated;
    if (c.noise) {
      out->noise = std::move(runs);
    } else {
      out->policies.push_back(std::move(runs));
    }
  }
}

}  // namespace

MeasuredTrace MeasureTrace(const ReplayProgram& program, const std::vector<std::string>& names,
                           bool screen, const PolicyInfos& policies, const std::string& self,
                           const MeasureSettings& s, int shared_fd, const ThreadSchedule* schedule,
                           int schedule_fd) {
  MeasuredTrace out;
  out.trace = TraceFactsOf(program);
  out.clock = ResolveClock(
      s.clock, schedule != nullptr ? static_cast<uint32_t>(schedule->streams.size()) : 1,
      UsableCores());
  const Ranking ranking{s.rank_by, s.run_options.max_passes, out.clock};
  const int schedule_in = schedule != nullptr ? schedule_fd : -1;
  Disturbance disturbance;
  std::optional<WindowPlans> plans;
  WindowShape shape;
  uint64_t rebuild_ops = 0;
  const uint32_t replay_threads =
      schedule != nullptr ? static_cast<uint32_t>(schedule->streams.size()) : 0;
  if (WindowsFor(program, s.windows, ranking, replay_threads, &shape, &rebuild_ops)) {
    plans.emplace(program, schedule, shape, s.rounds.seed, rebuild_ops);
    out.sampling = plans->Facts();
  }
  auto runner_for = [&](std::vector<Entry>& entries) {
    return ReplayRunner(entries, self, shared_fd, schedule_in, s, ranking, disturbance,
                        plans ? &*plans : nullptr);
  };
  // The screen's order has a sequence of its own; the rounds draw theirs
  // from the seed itself.
  std::mt19937_64 rng(s.rounds.seed ^ 0x73637265656eULL);
  std::vector<Entry> entries;
  for (const std::string& name : names) {
    entries.push_back(MakeEntry(policies, name, name, program, screen, s.mixes));
  }
  if (screen) {
    GridLeftOut left_out;
    if (s.rounds.race) {
      AddArticleGridToRace(entries, policies, program, &left_out);
    } else {
      ScreenArticleGrid(entries, policies, program, rng, runner_for, s, ranking, &left_out);
    }
    if (std::string note = GridLeftOutNote(left_out); !note.empty()) {
      out.trace.left_out_notes.push_back(std::move(note));
    }
  }
  // glibc malloc is the reference of every ratio; its second run set gives
  // the noise floor.
  if (!Has(entries, "malloc")) entries.push_back(MakeEntry(policies, "malloc", "malloc", program));
  entries.push_back(MakeEntry(policies, "malloc", kNoiseName, program));
  // A fake runner (tests) starts no process: nothing to add to one.
  if (s.process_cost && !s.run_child) AddProcessCosts(entries, self);

  std::vector<Contender> contenders;
  for (const Entry& e : entries) {
    contenders.push_back(ContenderOf(e, /*unchanged_apart=*/program.arena_events == 0));
  }
  const RoundsSettings rounds = RoundsFor(s, program, entries, plans.has_value());
  ReplayRunner runner = runner_for(entries);
  const RoundsResult done = RunRounds(contenders, runner, rounds);
  out.rounds = done.rounds;
  out.total_budget = done.total_budget;
  runner.EndServers();
  if (plans) MakeWholeRuns(entries, contenders, runner, rounds, ranking);

  KeepRuns(entries, contenders, &out);
  out.disturbance = DisturbanceCounts{disturbance.seen, disturbance.disturbed, disturbance.kept};
  if (schedule != nullptr) {
    out.replay_threads = static_cast<uint32_t>(schedule->streams.size());
    out.sync_points = schedule->sync_points;
    out.cross_thread_frees = schedule->cross_thread_frees;
  }
  return out;
}

}  // namespace alloctrace
