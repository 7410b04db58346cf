// Turns the runs of every policy on a trace into statistics: medians with
// bootstrap 95% CIs, ratios to glibc malloc paired by round, tied groups, a
// noise floor and a verdict (a recommendation by a stated rule).
//
// The statistics are plain structs (TraceReport, PolicyResult, Verdict) so
// any report format (report.h, report_html.h) can be drawn from them.
// Thread-safety: pure functions. Summarize never fails: a policy without a
// successful run is marked failed or skipped, and an estimate without data
// says so (Estimate::has_data).
#ifndef ALLOCTRACE_REPLAYER_VERDICT_SUMMARY_H_
#define ALLOCTRACE_REPLAYER_VERDICT_SUMMARY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/allocators/allocator_concept.h"
#include "alloctrace/replayer/measure/measured_trace.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/replayer/measure/runs.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {

// How the runs were made and are to be read. Each setting's default is the
// command line's, taken from the structs the measurement takes (RunOptions,
// RoundsSettings, MeasureSettings), so a context built by hand reads runs
// as the replayer does; ReportContextFor (replayer/config.h) fills it from
// the command line.
struct ReportContext {
  std::string machine;
  std::string date;
  Touch touch = RunOptions().touch;
  // --touch=auto: `touch` is what a trace without a collector replays with;
  // TraceReport::walk says which traces walked (measure.h, TouchFor).
  bool auto_touch = true;
  // The command line's --clock: kAuto is resolved per trace
  // (TraceReport::clock holds the resolved one).
  TimingClock clock = kDefaultClock;
  RankBy rank_by = kDefaultRankBy;                       // the pass kind that ranks
  int passes = RunOptions().max_passes;                  // passes per run at most (1: cold only)
  double warm_ms = RunOptions().min_warm_seconds * 1e3;  // warm passes add up to at least this
  double precision = RoundsSettings().precision;         // target CI half-width, as a fraction
  // Per policy and trace, where own_budget; own_budget false: the race's
  // total budget decides (OwnBudgetApplies).
  double budget_seconds = RoundsSettings().budget_seconds;
  bool own_budget = OwnBudgetApplies(RoundsSettings());
  int min_runs = RoundsSettings().min_runs;
  // The recommendation's working-set rule (< 0: by speed alone, --speed_only).
  double rss_slack = 0.10;

  // How a run of a trace whose clock resolved to `clock` is read.
  Ranking RankingFor(TimingClock resolved) const { return Ranking{rank_by, passes, resolved}; }
  bool warm() const { return rank_by == RankBy::kWarm && passes > 1; }
};

struct PolicyResult {
  using Status = RunStatus;
  std::string name, note;
  Role role = Role::kCandidate;  // PolicyRuns::role
  allocators::Family family = allocators::Family::kBaseline;
  allocators::Adoption adopt;
  bool frees_blocks = true;
  Status status = Status::kOk;
  std::string failure;  // kFailed: "k of n runs failed; first: ..."; kSkipped: why
  int runs = 0;         // successful runs
  int attempts = 0;
  int failed = 0;
  int reruns = 0;           // runs re-run for being disturbed
  int disturbed_kept = 0;   // runs kept though disturbed
  Stop stop = Stop::kNone;  // PolicyRuns::stop
  std::string stop_reason;
  // Dropped by the race: not held to the precision. Still ok (not failed)
  // when the race's time limit stopped its first run: then it has no
  // figures (runs 0, no Estimate with data).
  bool eliminated = false;
  std::string screen_kind;    // as PolicyRuns::screen_kind
  bool screened_out = false;  // slower than the fastest of its screen_kind
  bool precise = false;       // both CIs within the precision
  Estimate ns_per_op;         // the ranking pass kind (ReportContext::rank_by)
  Estimate vs_malloc;         // malloc's ns/op over this one's, paired by round (>1: faster)
  Estimate cold_ns_per_op, warm_ns_per_op;  // warm: no data with one pass
  Estimate cold_vs_malloc, warm_vs_malloc;
  // Sampled windows: the whole runs the memory figures below come from (0:
  // from the windows), and why it had none.
  int whole_runs = 0;
  std::string whole_run_note;
  Estimate peak_rss;     // bytes above the child's baseline, cold pass
  double final_rss = 0;  // medians
  double minor_faults = 0, major_faults = 0, teardown_ms = 0;
  double overhead = 0;         // median peak RSS / ideal peak live bytes
  double process_seconds = 0;  // PolicyRuns::process_seconds, in its cold figure
  bool tied_fastest = false;
  bool tied_smallest_rss = false;
  std::vector<RunRecord> raw;       // every successful run
  std::vector<int64_t> rss_course;  // of the run whose cold time is the median
  bool ok() const { return status == Status::kOk; }
};

struct Verdict {
  std::vector<std::string> fastest;  // the tied group, fastest median first
  Estimate fastest_vs_malloc;        // of the group's first (none if it is malloc)
  std::vector<std::string> smallest_rss;
  Estimate smallest_rss_bytes;
  std::string recommended;     // "" if nothing can be recommended
  allocators::Adoption adopt;  // of the recommended policy
  // Where in situ decided (ApplyInSitu): what the replay alone recommended.
  std::string replay_recommended;
  // A faster policy that never frees, not recommended for want of the
  // margin (kNeverFreesMargin): its name ("" if none), the fastest that
  // frees it was weighed against, and that one's figure over its own,
  // paired (>1: the one passed over is faster).
  std::string passed_over_name;
  std::string passed_over_kept;
  Estimate passed_over_edge;
  // On a trace with no container arenas, the recommendation is among what
  // the program adopts unchanged (malloc, a malloc by preload or link); the
  // best of all, if another (a pool, which means rewriting its containers),
  // and its speed over glibc malloc's. "" if none.
  std::string if_instrumented;
  Estimate if_instrumented_vs_malloc;
  // The rule's steps (choice.h): the policies practically as fast as the
  // fastest, within equivalence_margin; the fastest when it is not the
  // pick, and the pick's figure over its (>1: `faster` is faster); the
  // policy the preference would have named had its peak RSS not left it
  // out ("" if memory changed nothing).
  std::vector<std::string> equivalent;
  double equivalence_margin = 0;
  std::string faster;
  Estimate pick_vs_faster;
  std::string memory_passed_over;
};

// The verdict in the program's own terms, an estimate: the recording's
// span, and the allocator time the replay's rates give glibc malloc's calls
// and the recommended policy's over the trace's memory ops. What is saved
// is malloc_seconds x (1 - 1 / the paired ratio), with that ratio's CI.
struct ProgramEstimate {
  std::string policy;           // the replay's recommendation it is for
  double recorded_seconds = 0;  // 0: no estimate (why_not says why)
  bool recorded_cpu = false;    // recorded_seconds is CPU time, not wall
  double malloc_seconds = 0;
  double recommended_seconds = 0;  // malloc_seconds less the saved median
  Estimate saved_seconds;          // median and CI (no CI from fewer than 3 rounds)
  double speedup = 0;              // recorded / (recorded - saved), at the median
  std::string why_not;             // "" or why there is no estimate
};

struct InSituSummary;        // in_situ.h
struct PerContainerVerdict;  // per_container_verdict.h

struct TraceReport {
  // What the trace says of itself (MeasuredTrace::trace): its path,
  // workload, memory ops, arenas and threads, ideal peak, and the notes on
  // what was left out or merged.
  TraceFacts trace;
  // How it was replayed: replay_threads 1 is the serialized replay; more is
  // the per-thread replay (thread_schedule.h), with its waits and its frees
  // of another thread's objects. `clock` is what timed its ranking figure
  // (the context's, resolved for this trace: "cpu" or "wall").
  uint32_t replay_threads = 1;
  uint64_t sync_points = 0;
  uint64_t cross_thread_frees = 0;
  TimingClock clock = TimingClock::kCpu;
  SamplingFacts sampling;   // whole runs, or sampled windows
  ProgramEstimate program;  // the verdict in the program's terms
  int rounds = 0;
  // What gives a policy more rounds: --budget (per policy) when true
  // (ReportContext::own_budget), else the race's --total_budget.
  bool own_budget = false;
  // The touch this trace replayed with (--touch=auto resolved:
  // ReportContext::touch as MeasureOne set it) and whether --touch was
  // auto: why a trace whose program ran a collector was walked or not.
  Touch touch = RunOptions().touch;
  bool auto_touch = true;
  // Replayed with the walk (--touch=walk, or auto on a trace whose
  // program ran a collector: TraceFacts::collector), which replays on one
  // thread whatever --threads says.
  bool walked() const { return touch == Touch::kWalk; }
  // Where the total budget stopped policies still in the race short of the
  // precision: about how many seconds of runs in all would have brought
  // them to it, at these rounds' pace and spread (0: none was stopped so).
  // BudgetForPrecision.
  double budget_for_precision = 0;
  // ok by median ns/op, then ok without figures, then failed, then skipped
  std::vector<PolicyResult> policies;
  // glibc malloc against a second malloc run set, paired by round: how far
  // apart two identical allocators read here.
  Estimate noise_floor;
  Verdict verdict;
  int failed_policies = 0;      // kFailed: a crash or an error (exit status 3)
  int over_limit_policies = 0;  // kOverLimit: an outcome, not a failure
  DisturbanceCounts disturbance;
  // With replayer --confirm: the program's own runs, whose verdict is the
  // report's recommendation (in_situ_verdict.h: ApplyInSitu).
  std::shared_ptr<const InSituSummary> in_situ;
  // With replayer --per_container: a policy per class of containers.
  std::shared_ptr<const PerContainerVerdict> per_container;

  // Nothing to time: no ranking, no verdict.
  bool no_memory_ops() const { return trace.memory_ops == 0; }
};

// The verdict on one measured trace (measure.h: MeasureTrace). The steps,
// in order: SummarizePolicy for each policy (then sorted as
// TraceReport::policies), ScreenArticlePolicies, MarkTies, Recommend.
TraceReport Summarize(const MeasuredTrace& measured, const ReportContext& ctx);

// Whether `p` was still in the race when the total budget stopped it, short
// of the precision (rounds.h: "total budget of N s spent (--total_budget)").
bool StoppedByTotalBudget(const PolicyResult& p);

// The policy of `t` named `name`, or nullptr.
const PolicyResult* FindPolicy(const TraceReport& t, const std::string& name);

// The seconds of runs in all that would bring the policies the total budget
// stopped (still in the race, short of the precision) to `precision`: the
// rounds' `total_budget` times (widest CI half-width / precision)^2, the
// intervals narrowing as the square root of the rounds. 0 if none was
// stopped so.
double BudgetForPrecision(const std::vector<PolicyResult>& policies, double precision,
                          double total_budget);

// Whether `p` contends for the verdict: it ran, and it is not the floor,
// eliminated by the race, or screened out (recommend.cc says why).
bool IsContender(const PolicyResult& p);
// Whether some contender ran whole runs: then only those that did have a
// peak RSS the memory rule may compare (windows rebuild their heaps).
bool AnyContenderRanWhole(const TraceReport& t);
bool RssComparable(const PolicyResult& p, bool any_whole);

// Among policies the recommendation cannot tell apart by speed or peak RSS,
// the order it prefers them in (smaller first): malloc (nothing to change),
// our pools, the external mallocs, the other baselines, the article's grid.
int RecommendationPreference(const PolicyResult& p);
// The same by name and family ("malloc" and in situ's "std": 0).
int RecommendationPreference(const std::string& name, allocators::Family family);

// Our pools and the external mallocs in the fixed order within their
// family: a pool without a lock before one with (never slower on one
// thread), a pool per container before one per process, slab (any size)
// before small_node; the mallocs by name.
inline constexpr const char* kOurPoolsInOrder[] = {
    "slab/st/stack",       "slab/st/single",       "slab/mt/stack",       "slab/mt/single",
    "small_node/st/stack", "small_node/st/single", "small_node/mt/stack", "small_node/mt/single"};
inline constexpr const char* kExternalMallocsInOrder[] = {"jemalloc", "mimalloc", "tcmalloc"};

// The fixed order of the choice (choice.h), lower first:
// RecommendationPreference, then the place in the lists above; ties (two
// baselines, two article policies) go by name.
int FixedOrder(const std::string& name, allocators::Family family);

// Step 1: one policy's figures, status and precision, its runs read by
// `ranking`; its ratios to the malloc figures given by round (none if
// empty).
PolicyResult SummarizePolicy(const PolicyRuns& runs, const std::map<int, double>& malloc_cold,
                             const std::map<int, double>& malloc_warm, uint64_t peak_live_bytes,
                             const ReportContext& ctx, const Ranking& ranking);

// What the tie rule reads of one policy's runs: the replay's (ns/op of the
// ranking pass, glibc malloc the reference) and the in-situ runs' (the
// program's time by --clock, std or malloc the reference) alike.
struct SpeedFigures {
  Estimate median;                 // of the ranked figure (a time: lower is faster)
  std::map<int, double> by_round;  // the same figure, per round
  Estimate vs_reference;           // the reference's figure over this one's, paired (>1: faster)
  bool reference = false;          // the reference itself
  bool frees_blocks = true;        // false: never frees (keep, monotonic): see below
};

// The fastest of `among` (indexes into `policies`, each with data, not
// empty): the highest ratio to the reference, paired by round (the
// reference reads 1), where each has one or is the reference; else the
// lowest median.
size_t Fastest(const std::vector<SpeedFigures>& policies, const std::vector<size_t>& among);

// THE fastest tied group, for the replay and in situ (indexes into
// `policies`): the Fastest, and each policy whose paired ratio to
// it (by_round, PairedRatio) is a PairedTie under the noise margin; and the
// reference is never in a group with a policy whose ratio to it
// (vs_reference) excludes 1: of that pair the slower by that ratio leaves
// (never the fastest). Fastest first, then by median. Policies without a
// common round with the fastest are tied only if their CIs of the median
// overlap its (no pairing possible); those without data never are.
std::vector<size_t> FastestTiedGroup(const std::vector<SpeedFigures>& policies,
                                     double noise_margin);

// A policy that never frees its blocks (deallocate a no-op: the article's
// keep pools, pmr_monotonic) holds every block the program ever allocated,
// so its peak grows with the program's total allocation, not with what it
// holds at once: a trace is a sample of a run, and its peak RSS within the
// slack says little of a longer one. Its speed edge is real (it skips the
// free list) but small on most traces (3-8% on simple_map), and a few
// percent is what the measured noise lets through one run and not the next:
// a pick that flipped between slab/st/single and a keep pool from run to
// run. So such a policy displaces the fastest that frees only when it is
// shown faster (the paired ratio's 95% CI above 1) by more than this
// margin (its median above 1 + kNeverFreesMargin), the replay's and in
// situ's rule alike (choice.h). 10%, as the RSS slack: the speed the rule gives up for a
// bounded working set is at most what it gives up of memory for speed.
inline constexpr double kNeverFreesMargin = 0.10;

// The replay's `members` as SpeedFigures: their FiguresByRound as
// `ranking` reads them, vs_malloc, malloc the reference.
std::vector<SpeedFigures> ReplaySpeedFigures(const std::vector<PolicyResult>& policies,
                                             const std::vector<size_t>& members,
                                             const Ranking& ranking);

// The same for the replay's `members` (indexes into `policies`, all ok):
// their FiguresByRound as `ranking` reads them, vs_malloc, malloc the
// reference.
std::vector<size_t> FastestTiedGroup(const std::vector<PolicyResult>& policies,
                                     const std::vector<size_t>& members, const Ranking& ranking,
                                     double noise_margin);

// The recommendation's working-set rule, the replay's and in situ's: a
// policy is within the RSS slack when its median peak RSS exceeds the
// smallest by no more than rss_slack of it or kRssSlackFloorBytes, whichever
// is more. The floor: a peak a few hundred KiB apart on a tiny trace or
// program is an allocator's fixed start-up cost (its metadata, its first
// chunk or cache), not a saving that grows with the workload, and not worth
// giving up speed for (without it, on a captured `sort` trace an article
// pool 2.9x slower than tcmalloc was recommended: its peak was 44 KiB below
// malloc's).
inline constexpr double kRssSlackFloorBytes = 1024.0 * 1024.0;
bool WithinRssSlack(double peak_rss, double smallest, double rss_slack);
// Step 2a: the screen of the article grid. Of the policies with the same
// screen_kind and the same frees_blocks (ok, not eliminated), those outside
// the FastestTiedGroup of that kind are screened_out, with a note saying
// so: the screen kept the fastest article policy of each storage kind that
// frees and that never frees (the choice weighs the two: choice.h), and the
// race keeps its rule.
void ScreenArticlePolicies(TraceReport* t, const ReportContext& ctx);

// Step 2: tied_fastest (FastestTiedGroup of the contenders: ok, not bump,
// not eliminated, not screened_out),
// tied_smallest_rss (peak RSS CIs overlapping the smallest's) and the
// verdict's fastest, fastest_vs_malloc, smallest_rss, smallest_rss_bytes.
// Uses t->noise_floor.
void MarkTies(TraceReport* t, const ReportContext& ctx);

// Step 3: the recommendation: the choice (choice.h: Choose) among the
// contenders (as in step 2) whose peak RSS can be compared, with the noise
// floor's margin and ctx.rss_slack; the Verdict keeps its steps.
// Verdict::passed_over_name names a faster never-freeing policy the margin
// kept out. On a trace with no arena events (no container arenas: a whole
// program captured), only glibc malloc and the mallocs by preload or link
// are recommended, and Verdict::if_instrumented names the best of all if it
// differs. (The reports put the rule and the verdict in words:
// reports/words.h.)
void Recommend(TraceReport* t, const ReportContext& ctx);

// The verdict in the program's terms (ProgramEstimate) for t's
// recommendation and its trace's recording (TraceFacts::recorded_seconds,
// 0: unknown; recorded_cpu: CPU time, else wall).
ProgramEstimate EstimateForProgram(const TraceReport& t);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_VERDICT_SUMMARY_H_
