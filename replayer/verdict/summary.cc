#include "alloctrace/replayer/verdict/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/verdict/choice.h"

namespace alloctrace {

namespace {

// Whether an estimate's CI excludes 1 (never from fewer than
// kMinPairedRounds rounds: PairedTie).
bool ExcludesOne(const Estimate& e) { return e.n >= kMinPairedRounds && (e.lo > 1 || e.hi < 1); }

// How `pr`'s measurement ended: skipped, failed, over limit (every failed
// run stopped at a limit: an outcome), or ok; and the words of why.
void SetStatus(const PolicyRuns& pr, PolicyResult* s) {
  using Status = PolicyResult::Status;
  if (!pr.skipped.empty()) {
    s->status = Status::kSkipped;
    s->failure = pr.skipped;
  } else if (!pr.whole_run_error.empty()) {
    // Its windows ran, but the whole trace did not: what a user would meet.
    s->status = pr.whole_run_over_limit ? Status::kOverLimit : Status::kFailed;
    s->failure = absl::StrCat("its whole run failed: ", pr.whole_run_error);
  } else if (pr.failed > 0) {
    const bool limits = pr.over_limit == pr.failed;
    s->status = limits ? Status::kOverLimit : Status::kFailed;
    s->failure = absl::StrCat(
        pr.failed, " of ", pr.attempts,
        limits ? " runs stopped at a limit; first: " : " runs failed; first: ", pr.first_error);
  } else if (pr.runs.empty() && !pr.eliminated) {
    // (A policy the race stopped in its first run is eliminated, not
    // failed: ok, without figures.)
    s->status = Status::kFailed;
    s->failure = "no run was made";
  }
}

}  // namespace

PolicyResult SummarizePolicy(const PolicyRuns& pr, const std::map<int, double>& malloc_cold,
                             const std::map<int, double>& malloc_warm, uint64_t peak_live_bytes,
                             const ReportContext& ctx, const Ranking& ranking) {
  PolicyResult s;
  s.name = pr.name;
  s.role = pr.role;
  s.family = pr.family;
  s.note = pr.note;
  s.adopt = pr.adopt;
  s.frees_blocks = pr.frees_blocks;
  s.runs = static_cast<int>(pr.runs.size());
  s.attempts = pr.attempts;
  s.failed = pr.failed;
  s.stop = pr.stop;
  s.stop_reason = pr.stop_reason;
  s.eliminated = pr.eliminated;
  s.screen_kind = pr.screen_kind;
  s.process_seconds = pr.process_seconds;
  s.raw = pr.runs;
  for (const RunRecord& rr : pr.runs) {
    s.reruns += rr.reruns;
    s.disturbed_kept += rr.disturbed;
  }
  SetStatus(pr, &s);
  if (pr.runs.empty()) return s;
  const bool rank_warm = ranking.warm();
  const std::map<int, double> cold = FiguresByRound(pr.runs, false, ranking.clock);
  const std::map<int, double> warm = FiguresByRound(pr.runs, true, ranking.clock);
  s.cold_ns_per_op = MedianWithCi(ValuesByRound(cold));
  s.warm_ns_per_op = MedianWithCi(ValuesByRound(warm));
  if (!malloc_cold.empty()) s.cold_vs_malloc = PairedRatio(malloc_cold, cold);
  if (!malloc_warm.empty()) s.warm_vs_malloc = PairedRatio(malloc_warm, warm);
  s.ns_per_op = rank_warm ? s.warm_ns_per_op : s.cold_ns_per_op;
  s.vs_malloc = rank_warm ? s.warm_vs_malloc : s.cold_vs_malloc;
  // A windowed measurement's memory figures come from its whole runs (a
  // window cannot see a whole run's peak), the windows' when it had none.
  s.whole_runs = static_cast<int>(pr.whole_runs.size());
  s.whole_run_note = pr.whole_run_note;
  const std::vector<RunRecord>& memory_runs = pr.whole_runs.empty() ? pr.runs : pr.whole_runs;
  std::vector<double> peak, final_rss, minflt, majflt, teardown;
  for (const RunRecord& rr : memory_runs) {
    peak.push_back(static_cast<double>(rr.result.peak_rss));
    final_rss.push_back(static_cast<double>(rr.result.final_rss));
    minflt.push_back(static_cast<double>(rr.result.minor_faults));
    majflt.push_back(static_cast<double>(rr.result.major_faults));
    teardown.push_back(rr.result.teardown_seconds * 1e3);
  }
  s.peak_rss = MedianWithCi(peak);
  s.final_rss = Median(final_rss);
  s.minor_faults = Median(minflt);
  s.major_faults = Median(majflt);
  s.teardown_ms = Median(teardown);
  s.overhead = peak_live_bytes > 0 ? s.peak_rss.median / peak_live_bytes : 0;
  // The course of the run whose cold time is nearest the median.
  double best_d = std::numeric_limits<double>::max();
  for (const RunRecord& rr : memory_runs) {
    const double d =
        std::fabs(RunNsPerOp(rr.result, false, ranking.clock) - s.cold_ns_per_op.median);
    if (d < best_d) {
      best_d = d;
      s.rss_course = rr.result.rss_course;
    }
  }
  const bool ratio_needed = s.role != Role::kReference && s.vs_malloc.has_data();
  s.precise = s.runs >= 2 && s.ns_per_op.HalfWidth() <= ctx.precision &&
              (!ratio_needed || s.vs_malloc.HalfWidth() <= ctx.precision);
  return s;
}

size_t Fastest(const std::vector<SpeedFigures>& policies, const std::vector<size_t>& among) {
  // Paired with the reference where every one is (the reference itself
  // reads 1): a median over the rounds a policy ran is not comparable with
  // one over other rounds once the race has left some policies fewer
  // rounds (in the program, std read 0.435 s over 43 rounds and jemalloc
  // 0.454 s over 42, though jemalloc was 1.05x [1.05, 1.06] std's speed in
  // every round both ran).
  const bool paired = std::all_of(among.begin(), among.end(), [&](size_t i) {
    return policies[i].reference || policies[i].vs_reference.has_data();
  });
  auto speed = [&](size_t i) {
    return policies[i].reference ? 1.0 : policies[i].vs_reference.median;
  };
  size_t best = among.front();
  for (size_t i : among) {
    const bool faster =
        paired ? speed(i) > speed(best) : policies[i].median.median < policies[best].median.median;
    if (faster) best = i;
  }
  return best;
}

std::vector<size_t> FastestTiedGroup(const std::vector<SpeedFigures>& policies,
                                     double noise_margin) {
  std::vector<size_t> group;
  std::vector<size_t> all;
  for (size_t i = 0; i < policies.size(); ++i) {
    if (policies[i].median.has_data()) all.push_back(i);
  }
  if (all.empty()) return group;
  const size_t best = Fastest(policies, all);
  group.push_back(best);
  for (size_t i = 0; i < policies.size(); ++i) {
    if (i == best || !policies[i].median.has_data()) continue;
    // The policy's figure over the best's, round by round (>= 1: slower).
    const Estimate ratio = PairedRatio(policies[i].by_round, policies[best].by_round);
    const bool tied = ratio.has_data() ? PairedTie(ratio, noise_margin)
                                       : Overlaps(policies[i].median, policies[best].median);
    if (tied) group.push_back(i);
  }
  // The reference against the others by the ratio shown beside every row.
  auto ref_it =
      std::find_if(group.begin(), group.end(), [&](size_t i) { return policies[i].reference; });
  if (ref_it != group.end()) {
    const size_t ref = *ref_it;
    std::vector<size_t> kept;
    bool drop_ref = false;
    for (size_t i : group) {
      if (i == ref || !ExcludesOne(policies[i].vs_reference)) {
        kept.push_back(i);
        continue;
      }
      const bool faster_than_ref = policies[i].vs_reference.lo > 1;
      if (faster_than_ref && ref != best) {
        drop_ref = true;
        kept.push_back(i);
      } else if (i == best) {
        drop_ref = true;  // the fastest stays, whatever the ratio says
        kept.push_back(i);
      }
    }
    if (drop_ref) kept.erase(std::find(kept.begin(), kept.end(), ref));
    group = std::move(kept);
  }
  std::stable_sort(group.begin() + 1, group.end(), [&](size_t a, size_t b) {
    return policies[a].median.median < policies[b].median.median;
  });
  return group;
}

std::vector<SpeedFigures> ReplaySpeedFigures(const std::vector<PolicyResult>& policies,
                                             const std::vector<size_t>& members,
                                             const Ranking& ranking) {
  const bool warm = ranking.warm();
  std::vector<SpeedFigures> figures;
  for (size_t i : members) {
    const PolicyResult& p = policies[i];
    SpeedFigures f;
    f.median = p.ns_per_op;
    f.by_round = FiguresByRound(p.raw, warm, ranking.clock);
    f.vs_reference = p.vs_malloc;
    f.reference = p.role == Role::kReference;
    f.frees_blocks = p.frees_blocks;
    figures.push_back(std::move(f));
  }
  return figures;
}

std::vector<size_t> FastestTiedGroup(const std::vector<PolicyResult>& policies,
                                     const std::vector<size_t>& members, const Ranking& ranking,
                                     double noise_margin) {
  std::vector<size_t> group;
  for (size_t k : FastestTiedGroup(ReplaySpeedFigures(policies, members, ranking), noise_margin)) {
    group.push_back(members[k]);
  }
  return group;
}

bool WithinRssSlack(double peak_rss, double smallest, double rss_slack) {
  return peak_rss - smallest <= std::max(rss_slack * smallest, kRssSlackFloorBytes);
}

void ScreenArticlePolicies(TraceReport* t, const ReportContext& ctx) {
  // Those that free and those that never do are screened apart: the
  // recommendation weighs the fastest of each against the other
  // (choice.h), so neither may be screened out by the other.
  std::map<std::pair<std::string, bool>, std::vector<size_t>> kinds;
  for (size_t i = 0; i < t->policies.size(); ++i) {
    const PolicyResult& p = t->policies[i];
    if (!p.screen_kind.empty() && p.ok() && !p.eliminated) {
      kinds[{p.screen_kind, p.frees_blocks}].push_back(i);
    }
  }
  const double margin = NoiseMargin(t->noise_floor);
  for (const auto& [kind, members] : kinds) {
    const std::vector<size_t> kept =
        FastestTiedGroup(t->policies, members, ctx.RankingFor(t->clock), margin);
    if (kept.empty()) continue;
    for (size_t i : members) {
      if (std::find(kept.begin(), kept.end(), i) != kept.end()) continue;
      PolicyResult& p = t->policies[i];
      p.screened_out = true;
      p.note = absl::StrCat("slower than ", t->policies[kept[0]].name, ", the fastest ", kind.first,
                            "-storage article policy that ",
                            kind.second ? "frees its blocks" : "never frees",
                            ": screened out, not a contender");
    }
  }
}

void MarkTies(TraceReport* t, const ReportContext& ctx) {
  const bool any_whole = AnyContenderRanWhole(*t);
  std::vector<size_t> idx, rss_idx;
  std::vector<Estimate> rss;
  for (size_t i = 0; i < t->policies.size(); ++i) {
    if (!IsContender(t->policies[i])) continue;
    idx.push_back(i);
    if (!RssComparable(t->policies[i], any_whole)) continue;
    rss_idx.push_back(i);
    rss.push_back(t->policies[i].peak_rss);
  }
  Verdict& v = t->verdict;
  const std::vector<size_t> fastest =
      FastestTiedGroup(t->policies, idx, ctx.RankingFor(t->clock), NoiseMargin(t->noise_floor));
  for (size_t i : fastest) {
    t->policies[i].tied_fastest = true;
    v.fastest.push_back(t->policies[i].name);
  }
  // glibc malloc's ratio to itself is 1 in every round: an interval of
  // no width, which would read as certainty. Where it leads, no ratio.
  if (!fastest.empty() && t->policies[fastest[0]].role != Role::kReference) {
    v.fastest_vs_malloc = t->policies[fastest[0]].vs_malloc;
  }
  for (size_t k : TiedWithLowest(rss)) t->policies[rss_idx[k]].tied_smallest_rss = true;
  double smallest = std::numeric_limits<double>::max();
  for (size_t i : rss_idx) smallest = std::min(smallest, t->policies[i].peak_rss.median);
  for (const PolicyResult& p : t->policies) {
    if (p.tied_smallest_rss) v.smallest_rss.push_back(p.name);
  }
  for (size_t i : rss_idx) {
    if (t->policies[i].peak_rss.median == smallest) v.smallest_rss_bytes = t->policies[i].peak_rss;
  }
}

TraceReport Summarize(const MeasuredTrace& measured, const ReportContext& ctx) {
  TraceReport t;
  t.trace = measured.trace;
  t.clock = measured.clock;
  t.rounds = measured.rounds;
  t.own_budget = ctx.own_budget;
  t.touch = ctx.touch;
  t.auto_touch = ctx.auto_touch;
  t.disturbance = measured.disturbance;
  t.replay_threads = measured.replay_threads;
  t.sync_points = measured.sync_points;
  t.cross_thread_frees = measured.cross_thread_frees;
  t.sampling = measured.sampling;
  const Ranking ranking = ctx.RankingFor(measured.clock);

  std::map<int, double> malloc_cold, malloc_warm;
  for (const PolicyRuns& pr : measured.policies) {
    if (pr.role == Role::kReference && pr.failed == 0) {
      malloc_cold = FiguresByRound(pr.runs, false, ranking.clock);
      malloc_warm = FiguresByRound(pr.runs, true, ranking.clock);
    }
  }
  const PolicyRuns& noise = measured.noise;
  if (!noise.runs.empty() && noise.failed == 0) {
    const std::map<int, double> second = FiguresByRound(noise.runs, ranking.warm(), ranking.clock);
    t.noise_floor = PairedRatio(ranking.warm() ? malloc_warm : malloc_cold, second);
  }
  for (const PolicyRuns& pr : measured.policies) {
    PolicyResult s =
        SummarizePolicy(pr, malloc_cold, malloc_warm, t.trace.peak_live_bytes, ctx, ranking);
    t.failed_policies += s.status == PolicyResult::Status::kFailed;
    t.over_limit_policies += s.status == PolicyResult::Status::kOverLimit;
    t.policies.push_back(std::move(s));
  }
  // ok with figures, then ok without (eliminated before a run completed),
  // over limit, failed, skipped.
  auto rank = [](const PolicyResult& p) {
    switch (p.status) {
      case PolicyResult::Status::kOk:
        return p.ns_per_op.has_data() ? 0 : 1;
      case PolicyResult::Status::kOverLimit:
        return 2;
      case PolicyResult::Status::kFailed:
        return 3;
      case PolicyResult::Status::kSkipped:
        break;
    }
    return 4;
  };
  std::stable_sort(t.policies.begin(), t.policies.end(),
                   [&](const PolicyResult& a, const PolicyResult& b) {
                     if (rank(a) != rank(b)) return rank(a) < rank(b);
                     return a.ns_per_op.median < b.ns_per_op.median;
                   });
  if (t.no_memory_ops()) return t;
  ScreenArticlePolicies(&t, ctx);
  MarkTies(&t, ctx);
  Recommend(&t, ctx);
  t.program = EstimateForProgram(t);
  t.budget_for_precision = BudgetForPrecision(t.policies, ctx.precision, measured.total_budget);
  return t;
}

const PolicyResult* FindPolicy(const TraceReport& t, const std::string& name) {
  for (const PolicyResult& p : t.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool StoppedByTotalBudget(const PolicyResult& p) {
  return p.ok() && !p.eliminated && p.stop == Stop::kTotalBudget;
}

double BudgetForPrecision(const std::vector<PolicyResult>& policies, double precision,
                          double total_budget) {
  if (precision <= 0 || total_budget <= 0) return 0;
  double widest = 0;
  for (const PolicyResult& p : policies) {
    if (!StoppedByTotalBudget(p)) continue;
    double w = p.ns_per_op.has_data() ? p.ns_per_op.HalfWidth() : 0;
    if (p.vs_malloc.has_data()) w = std::max(w, p.vs_malloc.HalfWidth());
    if (std::isfinite(w)) widest = std::max(widest, w);
  }
  if (widest <= precision) return 0;
  return total_budget * (widest / precision) * (widest / precision);
}

ProgramEstimate EstimateForProgram(const TraceReport& t) {
  const double recorded_seconds = t.trace.recorded_seconds;
  ProgramEstimate e;
  const Verdict& v = t.verdict;
  e.policy = v.recommended;
  e.recorded_cpu = t.trace.recorded_cpu;
  const PolicyResult* malloc = nullptr;
  const PolicyResult* rec = nullptr;
  for (const PolicyResult& p : t.policies) {
    if (p.role == Role::kReference) malloc = &p;
    if (p.name == v.recommended) rec = &p;
  }
  if (recorded_seconds <= 0) {
    e.why_not = t.trace.cut_short.empty()
                    ? "the trace does not say how long its recording ran"
                    : "the trace ends before its footer, which says how long the recording ran";
  } else if (t.trace.threads > 1) {
    e.why_not = absl::StrCat("the trace has ", t.trace.threads,
                             " threads, whose allocator time overlaps in the program");
  } else if (rec == nullptr || malloc == nullptr || !malloc->ns_per_op.has_data() ||
             (rec != malloc && !rec->vs_malloc.has_data())) {
    e.why_not = "no recommendation with figures";
  }
  if (!e.why_not.empty()) return e;
  const double ops = static_cast<double>(t.trace.memory_ops);
  e.malloc_seconds = 1e-9 * malloc->ns_per_op.median * ops;
  if (e.malloc_seconds >= recorded_seconds) {
    e.why_not = absl::StrFormat(
        "at the replay's rate glibc malloc's calls take %.3g s, no less than the recording's "
        "%.3g s: the replay does not model this program's time",
        e.malloc_seconds, recorded_seconds);
    return e;
  }
  e.recorded_seconds = recorded_seconds;
  // Saved: malloc's time less the pick's, from the ratio paired by round
  // (the pick's speed over malloc's, r): malloc_seconds x (1 - 1/r).
  auto saved = [&](double r) { return r > 0 ? e.malloc_seconds * (1 - 1 / r) : 0.0; };
  const Estimate& r = rec == malloc ? Estimate{1, 1, 1, malloc->runs} : rec->vs_malloc;
  e.saved_seconds = Estimate{saved(r.median), saved(r.lo), saved(r.hi), r.n};
  // From the same paired ratio, so that the words' three figures add up.
  e.recommended_seconds = e.malloc_seconds - e.saved_seconds.median;
  e.speedup = recorded_seconds / (recorded_seconds - e.saved_seconds.median);
  return e;
}

}  // namespace alloctrace
