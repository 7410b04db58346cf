#include "alloctrace/replayer/measure/measure.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/measure/policy_safety.h"
#include "alloctrace/replayer/measure/race.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {
namespace {

using allocators::SelectAllocators;

// The name of glibc malloc's second run set, for the noise floor.
constexpr char kNoiseName[] = "malloc (again)";

class Measurer {
 public:
  // `schedule_fd`: the shared thread schedule, negative for a serialized replay.
  Measurer(const PolicyInfos& policies, const std::string& self, int shared_fd, int schedule_fd,
           const MeasureSettings& s, const std::string& trace)
      : policies_(policies),
        self_(self),
        shared_fd_(shared_fd),
        schedule_fd_(schedule_fd),
        s_(s),
        trace_(trace) {}

  // How a run ended: kept, failed, or stopped by the race's time limit.
  enum class Outcome { kKept, kFailed, kStopped };

  // One run of `m`, re-run while disturbed (up to --max_reruns), its child
  // stopped past `limits`. `race_limited`: the time limit is the race's
  // (lower than the configured one), so a child killed at it is kStopped,
  // not failed.
  Outcome RunOnce(Measured& m, int round, const ChildLimits& limits, bool race_limited) {
    RunRecord record;
    record.round = round;
    for (int attempt = 0;; ++attempt) {
      ++m.runs.attempts;
      if (s_.progress) {
        std::fprintf(stderr, "\r\033[K%s: round %d, %s (run %d)", trace_.c_str(), round + 1,
                     m.runs.name.c_str(), m.runs.attempts);
      }
      ChildRequest request;
      request.policy = m.policy;
      request.program_fd = shared_fd_;
      request.schedule_fd = schedule_fd_;
      request.attempt = m.runs.attempts;
      request.options = s_.run_options;
      std::vector<std::string> argv = ChildArgs(request);
      argv.insert(argv.begin(), self_);
      ChildRun child = s_.run_child ? s_.run_child(std::move(argv), m.preload_path, limits)
                                    : RunTimed(std::move(argv), m.preload_path, limits);
      m.spent += child.seconds;
      absl::StatusOr<RunResult>& r = child.result;
      if (race_limited && absl::IsDeadlineExceeded(r.status())) return Outcome::kStopped;
      if (r.ok() && r->error.empty()) m.run_seconds.push_back(child.seconds);
      std::string error;
      if (!r.ok()) {
        error = std::string(r.status().message());
        // Past the time or memory limit: another run would be too.
        if (absl::IsDeadlineExceeded(r.status()) || absl::IsResourceExhausted(r.status())) {
          m.fatal = true;
        }
      } else if (!r->error.empty()) {
        error = r->error;
        if (absl::StrContains(error, "failed at op") || absl::StrContains(error, "out of memory")) {
          m.fatal = true;
        }
      }
      if (!error.empty()) {
        ++m.runs.failed;
        if (m.runs.first_error.empty()) {
          m.runs.first_error = absl::StrCat("run ", m.runs.attempts, ": ", error);
        }
        return Outcome::kFailed;
      }
      // Only the passes that rank count: measured on simple_map and
      // list_churn, a run disturbed in its other passes reads its ranking
      // figure as undisturbed runs do (docs/results.md, "Disturbed runs").
      // A per-thread replay is never counted disturbed: its threads, more
      // than the cores on every multi-threaded sample trace, preempt and
      // migrate one another, so every run had a switch (2026-11-25: 2223
      // of 2223 runs of the five per-thread traces) and re-runs were waste.
      bool disturbed = false;
      if (schedule_fd_ < 0) {
        const bool warm = RanksWarm(s_.ctx);
        const size_t first = warm ? 1 : 0;
        const size_t last = warm ? r->passes.size() : std::min<size_t>(1, r->passes.size());
        disturbed = r->migrations > 0;
        for (size_t i = first; i < last; ++i) disturbed |= r->passes[i].involuntary_switches > 0;
      }
      ++runs_seen_;
      disturbed_seen_ += disturbed;
      // On a machine so busy that most runs are disturbed, a re-run would
      // be disturbed too: re-runs stop once half of 20 or more runs were.
      // And re-runs never make more than a tenth of the runs: on a loaded
      // machine they would eat the race's total budget (measured: 105 of 287
      // runs at load 8).
      const int reruns = disturbed_seen_ - kept_disturbed_;
      const bool busy =
          runs_seen_ >= 20 && (2 * disturbed_seen_ >= runs_seen_ || 10 * reruns >= runs_seen_);
      if (disturbed && attempt < s_.max_reruns && !busy) {
        ++record.reruns;
        continue;
      }
      record.disturbed = disturbed;
      kept_disturbed_ += disturbed;
      record.result = *std::move(r);
      m.runs.runs.push_back(std::move(record));
      return Outcome::kKept;
    }
  }

  // A run with the configured limits alone (the screen, the noise set).
  void RunOnce(Measured& m, int round) { RunOnce(m, round, s_.limits, false); }

  // How many runs were disturbed (re-runs included), and how many kept so.
  DisturbanceCounts Counts() const {
    return DisturbanceCounts{runs_seen_, disturbed_seen_, kept_disturbed_};
  }

 private:
  static ChildRun RunTimed(std::vector<std::string> argv, const std::string& preload,
                           const ChildLimits& limits) {
    const auto t0 = std::chrono::steady_clock::now();
    ChildRun c{RunInFreshChild(std::move(argv), preload, kChildResultFdWord, limits), 0};
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
  }

  const PolicyInfos& policies_;
  std::string self_;
  int shared_fd_;
  int schedule_fd_;
  const MeasureSettings& s_;
  std::string trace_;
  int runs_seen_ = 0;
  int disturbed_seen_ = 0;
  int kept_disturbed_ = 0;
};

// A policy to measure on `program`, or skipped (done, with the reason) if
// it may not serve it (policy_safety.h) or its library is not installed.
Measured MakeMeasured(const PolicyInfos& policies, const std::string& name,
                      const std::string& display_name, const ReplayProgram& program) {
  Measured m;
  const allocators::AllocatorInfo& info = policies.at(name);
  m.policy = name;
  m.runs.name = display_name;
  m.runs.family = info.family;
  m.runs.adopt = info.adopt;
  m.runs.frees_blocks = info.frees_blocks;
  m.runs.skipped = UnsafeReason(info, program.arena_usage);
  if (m.runs.skipped.empty()) {
    m.runs.skipped = UnsafeSharedStateReason(info, program.arena_usage, program.threads);
  }
  if (!m.runs.skipped.empty()) {
    m.done = true;
    return m;
  }
  if (!info.preload.empty()) {
    m.preload_path = FindPreloadLibrary(info.preload);
    if (m.preload_path.empty()) {
      m.runs.skipped = absl::StrCat(info.preload, " is not installed");
      m.done = true;
    }
  }
  return m;
}

}  // namespace

std::vector<double> RankFigures(const PolicyRuns& runs, const ReportContext& ctx) {
  std::vector<double> v;
  for (const RunRecord& rr : runs.runs) {
    const double x = RunNsPerOp(rr.result, ctx.rank_by == "warm" && ctx.passes > 1, ctx.clock);
    if (x > 0) v.push_back(x);
  }
  return v;
}

bool Precise(const Measured& m, const Measured* reference, const ReportContext& ctx) {
  // The very estimates the report gives (SummarizePolicy: the same figures
  // in the same order, the same resamples and seed), so that a policy
  // stopped as precise is never listed as short of the precision.
  const bool warm = RanksWarm(ctx);
  const std::map<int, double> mine = FiguresByRound(m.runs.runs, warm, ctx.clock);
  std::vector<double> values;
  for (const auto& [round, x] : mine) values.push_back(x);
  if (MedianWithCi(values).HalfWidth() > ctx.precision) return false;
  if (reference == nullptr || reference == &m) return true;
  const Estimate ratio = PairedRatio(FiguresByRound(reference->runs.runs, warm, ctx.clock), mine);
  return !ratio.has_data() || ratio.HalfWidth() <= ctx.precision;
}

void RecheckPrecise(Measured& m, const Measured* reference, const ReportContext& ctx) {
  if (m.runs.stop_reason != "precise" || Precise(m, reference, ctx)) return;
  m.runs.stop_reason =
      "precise once, then ran on so the others' runs had their pair; its CIs widened since";
}

void UpdateDone(Measured& m, const Measured* reference, const MeasureSettings& s) {
  if (m.done) return;
  const ReportContext& ctx = s.ctx;
  if (m.runs.failed > 0) {
    if (m.fatal || m.runs.attempts >= ctx.min_runs) {
      m.done = true;
      m.runs.stop_reason = "failed";
    }
    return;
  }
  const int n = static_cast<int>(m.runs.runs.size());
  if (n >= ctx.min_runs && Precise(m, reference, ctx)) {
    m.done = true;
    m.runs.stop_reason = "precise";
  } else if (n >= ctx.min_runs && m.spent >= ctx.budget_seconds) {
    m.done = true;
    m.runs.stop_reason = absl::StrFormat("budget of %.0f s spent", ctx.budget_seconds);
  } else if (n >= s.max_runs) {
    m.done = true;
    m.runs.stop_reason = absl::StrCat("--max_runs=", s.max_runs, " reached");
  }
}

TraceReport MeasureTrace(const ReplayProgram& program, const std::vector<std::string>& names,
                         bool screen, const PolicyInfos& policies, const std::string& self,
                         const MeasureSettings& settings, int shared_fd,
                         const ThreadSchedule* schedule, int schedule_fd) {
  MeasureSettings s = settings;
  if (s.ctx.clock == "auto") s.ctx.clock = schedule != nullptr ? "wall" : "cpu";
  Measurer measurer(policies, self, shared_fd, schedule != nullptr ? schedule_fd : -1, s,
                    program.path);
  std::mt19937_64 rng(s.seed);
  std::vector<Measured> set;
  for (const std::string& name : names) {
    set.push_back(MakeMeasured(policies, name, name, program));
  }

  if (screen && s.race) {
    // The article grid enters the race like any other policy.
    for (const std::string& kind : allocators::ArticleStorageKinds()) {
      absl::StatusOr<std::vector<std::string>> grid =
          SelectAllocators(absl::StrCat("pool/", kind, "/*"));
      if (!grid.ok()) continue;
      for (const std::string& name : *grid) {
        const auto same = [&](const Measured& m) { return m.policy == name; };
        if (std::any_of(set.begin(), set.end(), same)) continue;
        // Only the policies that may serve the trace enter.
        Measured m = MakeMeasured(policies, name, name, program);
        if (!m.runs.skipped.empty()) continue;
        m.runs.note = absl::StrFormat("one of the %d %s-storage article policies in the race",
                                      static_cast<int>(grid->size()), kind);
        m.runs.screen_kind = kind;
        set.push_back(std::move(m));
      }
    }
  } else if (screen) {
    for (const std::string& kind : allocators::ArticleStorageKinds()) {
      absl::StatusOr<std::vector<std::string>> grid =
          SelectAllocators(absl::StrCat("pool/", kind, "/*"));
      if (!grid.ok() || grid->empty()) continue;
      std::vector<Measured> screened;
      for (const std::string& name : *grid) {
        // Only the policies that may serve the trace compete.
        Measured m = MakeMeasured(policies, name, name, program);
        if (m.runs.skipped.empty()) screened.push_back(std::move(m));
      }
      if (screened.empty()) continue;
      std::vector<size_t> order(screened.size());
      for (int round = 0; round < s.screen_runs; ++round) {
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        for (size_t i : order) {
          if (screened[i].runs.failed == 0) measurer.RunOnce(screened[i], -1 - round);
        }
      }
      size_t best = screened.size();
      double best_ns = 0;
      for (size_t i = 0; i < screened.size(); ++i) {
        Measured& m = screened[i];
        if (m.runs.failed > 0) {
          // A failure in the screen is reported, never hidden.
          m.runs.note = "failed in the screen of the article grid";
          m.runs.stop_reason = "failed";
          m.runs.runs.clear();
          set.push_back(std::move(m));
          continue;
        }
        const double ns = Median(RankFigures(m.runs, s.ctx));
        if (best == screened.size() || ns < best_ns) {
          best = i;
          best_ns = ns;
        }
      }
      if (best < screened.size()) {
        Measured m = MakeMeasured(policies, screened[best].policy, screened[best].policy, program);
        m.runs.note =
            absl::StrFormat("the fastest of the %d %s-storage article policies in a %d-run screen",
                            static_cast<int>(screened.size()), kind, s.screen_runs);
        m.runs.screen_kind = kind;
        set.push_back(std::move(m));
      }
    }
  }
  // Remove failed-in-screen entries from the measured rounds: they are done.
  for (Measured& m : set) {
    if (m.runs.failed > 0) m.done = true;
  }
  // glibc malloc is the reference of every ratio; its second run set gives
  // the noise floor.
  size_t malloc_index = set.size();
  for (size_t i = 0; i < set.size(); ++i) {
    if (set[i].policy == "malloc") malloc_index = i;
  }
  if (malloc_index == set.size()) {
    set.push_back(MakeMeasured(policies, "malloc", "malloc", program));
    malloc_index = set.size() - 1;
  }
  Measured noise = MakeMeasured(policies, "malloc", kNoiseName, program);

  int entrants = 0;  // of the race, for its correction
  for (size_t i = 0; i < set.size(); ++i) entrants += i != malloc_index && !set[i].done;
  int looks = 0;
  double total_budget = s.total_budget_seconds;  // may stretch after round 1
  double stopped_spent = 0;                      // by the policies the race's time limit stopped
  int round = 0;
  std::vector<size_t> order;
  while (true) {
    bool others_active = false;
    for (size_t i = 0; i < set.size(); ++i) {
      if (i != malloc_index && !set[i].done) others_active = true;
    }
    // The leader runs as long as anyone does, so every racing run has its pair.
    // Both leaders (race.h: the fastest, the fastest that frees).
    const RaceLeaders leaders =
        s.race ? FindRaceLeaders(set, s.ctx) : RaceLeaders{set.size(), set.size()};
    Measured& ref = set[malloc_index];
    // malloc runs as long as anyone does, so every run has its pair.
    const bool ref_active = !ref.fatal && (others_active || !ref.done) &&
                            !(ref.runs.failed > 0 && ref.runs.attempts >= s.ctx.min_runs);
    if (!others_active && !ref_active) break;
    order.clear();
    for (size_t i = 0; i < set.size(); ++i) {
      const bool leads = i == leaders.fastest || i == leaders.freeing;
      if (i == malloc_index ? ref_active : !set[i].done || (leads && others_active)) {
        order.push_back(i);
      }
    }
    order.push_back(set.size());  // the noise set
    std::shuffle(order.begin(), order.end(), rng);
    if (s.race && round == 0) {
      // glibc malloc first: the race's time limit on a run (race.h) follows
      // the fastest run time, so one should be known before a pathological
      // policy runs. malloc is rarely far from the fastest, never
      // pathological, and runs in every round anyway.
      auto first = std::find(order.begin(), order.end(), malloc_index);
      if (first != order.end()) std::rotate(order.begin(), first, first + 1);
    }
    // With the race, the total budget is checked before every run (a round
    // of sixty policies on a busy machine takes seconds), but never in the
    // first round: every policy gets a run, so none is left unmeasured.
    auto total_spent = [&] {
      double spent = noise.spent;
      for (const Measured& m : set) spent += m.spent;
      return spent;
    };
    const bool bounded = s.race && s.total_budget_seconds > 0;
    bool budget_spent = false;
    for (size_t i : order) {
      if (bounded && round > 0 && total_spent() >= total_budget) {
        budget_spent = true;
        break;
      }
      if (i == set.size()) {
        if (ref_active) measurer.RunOnce(noise, round);
        continue;
      }
      if (!s.race) {
        measurer.RunOnce(set[i], round);
        continue;
      }
      // With the race, a run far slower than the fastest is stopped.
      const RaceRunLimit limit = RaceTimeLimit(set, i, malloc_index, s.limits.wall_seconds);
      ChildLimits limits = s.limits;
      if (limit.seconds > 0) limits.wall_seconds = limit.seconds;
      if (measurer.RunOnce(set[i], round, limits, limit.seconds > 0) ==
          Measurer::Outcome::kStopped) {
        EliminateStopped(set[i], limit, round);
        stopped_spent += set[i].spent;
      }
    }
    ++round;
    if (round == 1 && bounded) {
      // A long trace: the budget stretches, up to kMaxTotalBudgetSeconds, to
      // kStretchRounds rounds at the first's pace, so that no verdict rests
      // on a round or two. The policies the race's time limit stopped run
      // no more: their runs set no pace.
      const double pace = total_spent() - stopped_spent;
      total_budget = std::max(
          total_budget, std::min(kMaxTotalBudgetSeconds, kStretchRounds * pace + stopped_spent));
    }
    for (size_t i = 0; i < set.size(); ++i) {
      UpdateDone(set[i], i == malloc_index ? nullptr : &set[malloc_index], s);
    }
    if (s.race) {
      const bool warm = RanksWarm(s.ctx);
      const double margin =
          NoiseMargin(PairedRatio(FiguresByRound(ref.runs.runs, warm, s.ctx.clock),
                                  FiguresByRound(noise.runs.runs, warm, s.ctx.clock)));
      if (round >= s.race_min_runs) {
        RaceLook(set, FindRaceLeaders(set, s.ctx), malloc_index, margin, ++looks, entrants, s);
      }
      if (budget_spent || (bounded && total_spent() >= total_budget)) {
        for (Measured& m : set) {
          if (m.done) continue;
          m.done = true;
          m.runs.stop_reason =
              absl::StrFormat("total budget of %.0f s spent (--total_budget)", total_budget);
        }
        break;
      }
    }
    if (!others_active && ref.done) break;
    if (round >= s.max_runs * (s.max_reruns + 1)) break;  // a backstop, never reached in practice
  }
  if (s.progress) std::fprintf(stderr, "\r\033[K");
  std::vector<PolicyRuns> runs;
  for (size_t i = 0; i < set.size(); ++i) {
    RecheckPrecise(set[i], i == malloc_index ? nullptr : &set[malloc_index], s.ctx);
  }
  for (Measured& m : set) {
    if (!m.done && m.runs.stop_reason.empty()) m.runs.stop_reason = "stopped with the others";
    runs.push_back(std::move(m.runs));
  }
  TraceReport report = Summarize(program, runs, noise.runs, s.ctx, round);
  report.disturbance = measurer.Counts();
  if (schedule != nullptr) {
    report.replay_threads = static_cast<uint32_t>(schedule->streams.size());
    report.sync_points = schedule->sync_points;
    report.cross_thread_frees = schedule->cross_thread_frees;
  }
  return report;
}

}  // namespace alloctrace
