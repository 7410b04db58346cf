// The words every report format shares: how figures are written, what the
// notes about a trace say, and the verdicts in sentences (the replay's,
// in situ's, and the report's when in situ decided). The verdict package
// decides; this file says it, once, for every format.
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_WORDS_H_
#define ALLOCTRACE_REPLAYER_REPORTS_WORDS_H_

#include <string>
#include <vector>

#include "alloctrace/replayer/measure/runs.h"
#include "alloctrace/replayer/measure/stats.h"
#include "alloctrace/replayer/verdict/in_situ_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// A budget suggestion past this is not one: a run nobody would wait for.
inline constexpr double kReachableBudgetSeconds = 3600;

// Figures.
std::string Mib(double bytes);         // "256B", "512K", "1.5M"
std::string Num(double v);             // "12.3": precision fitting the value
std::string Pct(const Estimate& e);    // its CI's half-width: "2.4%"; "-" without data;
                                       // "n<3" from fewer than kMinPairedRounds
std::string Times(const Estimate& e);  // "1.23x [1.10, 1.40]"; "-" without data; from
                                       // fewer than kMinPairedRounds, no interval:
                                       // "1.23x (n = 2: not measured enough ...)"
std::string NameList(const std::vector<std::string>& names);  // "a, b and c"

// `line` broken at spaces into lines of at most `width` columns, the
// continuation lines indented by `indent` spaces.
std::string Wrap(const std::string& line, size_t width, size_t indent);
// `text` in lines of at most 80 columns, every line after `indent` spaces,
// ending in a newline.
std::string WrapIndented(const std::string& text, size_t indent);

// The clock as the reports say what timed the ranking figure: "thread CPU
// time", "wall-clock time".
std::string ClockWords(TimingClock clock);
// In situ's: "CPU time (user + system)" or "wall time".
std::string ProgramTimeWords(TimingClock clock);
std::string PassPlan(const ReportContext& ctx);
// --touch as asked ("auto" under auto), and as `t` replayed ("walk" where
// auto walked it).
std::string TouchWord(const ReportContext& ctx);
std::string TouchWord(const TraceReport& t);
// When a policy's runs stop: "runs until +-3% or 3 s per policy, at least
// 10", or "... or the total budget is spent, ..." in a race with one.
std::string StopWords(const ReportContext& ctx);
// "ranked by the cold pass, thread CPU time, 95% CIs"; `clock`: the trace's.
std::string PassWords(const ReportContext& ctx, TimingClock clock);

// Notes on a trace.
std::string NoOpsLine(const TraceReport& t);  // a trace without memory ops
// A trace with memory ops and no arena events (a whole-program capture, or
// allocations from the global heap): "" for any other trace.
std::string OneHeapNote(const TraceReport& t);
// How a trace recorded on several threads was replayed: per thread, its
// threads, sync points, cross-thread frees and what ranks it; on one
// thread, that no two threads contend and why (ReplaysPerThread); "" for a
// trace of one thread.
std::string PerThreadNote(const TraceReport& t);
// A trace whose program ran a garbage collector over its malloc blocks
// (TraceFacts::collector): whether the replay walked them, and how far
// that goes; "" for any other trace.
std::string CollectorNote(const TraceReport& t);
// Everything said of a trace before its verdict: the total budget cutting
// the race short, OneHeapNote, the arenas several threads share, whether
// most arenas hold one block, CollectorNote, PerThreadNote. Empty if
// nothing.
std::vector<std::string> TraceNotes(const TraceReport& t);
std::string NoiseWords(const TraceReport& t);
// A noise floor (a reference against its second run set, paired by round)
// in words: "std against its second run set reads 1.012x [0.990, 1.031]:
// one allocator's two run sets 1.2% apart at the median, a margin of
// practical equivalence of 5.0%" (measure/stats.h: EquivalenceMargin), or why it
// is not used.
std::string NoiseFloorWords(const Estimate& floor, const std::string& reference,
                            const std::string& second);
std::string DisturbanceWords(const TraceReport& t);
// The verdict per container (per_container_words.cc). A class as the
// reports name it ("OrderIndex"; "(the rest)" for id 0); its policy
// ("heap (malloc)" for the heap); why it is as it is (its race's gain over
// the policy it held, or the note); the whole program's sentence; what the
// search cost; the heap and how to adopt it.
struct ClassVerdict;
struct PerContainerVerdict;
std::string ClassLabel(const ClassVerdict& c);
std::string ClassPolicyWords(const PerContainerVerdict& v, const ClassVerdict& c);
std::string ClassChoiceWords(const ClassVerdict& c);
std::string MixSentence(const PerContainerVerdict& v);
// Whether the mix is the answer (its alias lines to paste): it differs
// from the best single choice and was shown faster than it (in the
// program, or in the replay without one).
bool MixIsTheAnswer(const PerContainerVerdict& v);
std::string MixCostWords(const PerContainerVerdict& v);
std::string HeapWords(const PerContainerVerdict& v);
// How to adopt the mix: a heading and its lines, the alias lines to paste
// (T: a container's element type); for classes that are a capture's call
// sites, each function and the type its containers would take, and what to
// do before the program can run it (SiteClassesWords; "" otherwise).
std::string AdoptHeading(const PerContainerVerdict& v);
std::vector<std::string> AdoptLines(const PerContainerVerdict& v);
std::string SiteClassesWords(const PerContainerVerdict& v);

// Why a verdict is provisional: the recommended policy's figures rest on
// fewer than kMinPairedRounds rounds paired with the reference (its own
// runs, if it is the reference), or their 95% CI reaches further than
// kActionableHalfWidth from the median. "" if not.
// The report's: the program's figures where the program decided
// (InSituProvisionalWords), else the replay's (ReplayProvisionalWords).
inline constexpr double kActionableHalfWidth = 0.10;
std::string ProvisionalWords(const TraceReport& t);
// The replay's own figures, paired with glibc malloc's, whoever decided.
std::string ReplayProvisionalWords(const TraceReport& t);
// In situ's (--in_situ, or the search after a replay): the program's
// figures, paired with its reference's.
std::string InSituProvisionalWords(const InSituSummary& s);

// A trace whose recording was cut short: what the verdict rests on (its
// complete chunks, before the cut). "" if the trace is complete.
std::string IncompleteWords(const TraceReport& t);

// Where the replay is known to misjudge (docs/fidelity.md), so the verdict
// says to confirm in the program: a per-thread replay in which at least
// kHandOffShare of the memory ops free an object another thread allocated
// (such programs rank the mallocs differently as their threads run at once
// or take turns); a trace whose live blocks average kLargeBlockBytes or
// more (the program's time goes to filling and copying them, which the
// trace does not hold: xz, the records workloads). "" otherwise, and once
// the program has decided.
inline constexpr double kHandOffShare = 0.05;
inline constexpr uint64_t kLargeBlockBytes = 32 * 1024;
// A trace whose program ran a garbage collector over its malloc blocks
// (TraceFacts::collector) is one too: the walk models the collector's reads
// in part (docs/fidelity.md, "An interpreter's mallocs").
std::string CautionWords(const TraceReport& t);
// The policies stopped at the time or memory limit: "2 policies passed the
// time or memory limit of a run (below): an outcome, not ranked".
std::string OverLimitWords(const TraceReport& t);
// On a trace with no container arenas, what instrumenting the containers
// could gain (Verdict::if_instrumented), labelled apart from the
// recommendation; "" if nothing.
// `name_policy` false: "the fastest above" (where it is named beside it).
std::string IfInstrumentedWords(const TraceReport& t, bool name_policy = true);
// The verdict in the program's terms (TraceReport::program), an estimate:
// "saves about 0.13 s [0.11, 0.15] of the recording's 0.85 s (about 1.18x
// the program's speed) ...", or why there is none.
// `name_policy` false: "the pick's" (where the recommendation is named
// beside it, as on the HTML page).
std::string ProgramWords(const TraceReport& t, bool name_policy = true);
// How the runs sampled the trace: whole runs, or the sampled windows (how
// many, how long, the share timed) and where the memory figures come from.
std::string SamplingWords(const TraceReport& t);

// The rules, as the reports print them.
// "within 10% or 1 MiB (whichever is more) of the smallest".
std::string RssSlackWords(double rss_slack);
// "<k>, 1.04x [1.01, 1.08] <f>'s speed, never frees its blocks: a policy
// that never frees is recommended only when more than 10% faster than the
// fastest that frees".
std::string NeverFreesWords(const std::string& passed_over, const std::string& kept,
                            const Estimate& edge);
// The replay's: Recommend's rule (verdict/summary.h) in words.
std::string ReplayRuleWords(const ReportContext& ctx);
// In situ's: DecideInSitu's.
std::string InSituRuleWords(const InSituSummary& s);

// The verdicts in one paragraph each.
// The replay's own (verdict/summary.h: Recommend).
std::string ReplaySentence(const TraceReport& t, const ReportContext& ctx);
// In situ's (verdict/in_situ_verdict.h: DecideInSitu).
std::string InSituSentence(const InSituSummary& s);
// The report's: in situ's where it decided (--confirm), followed by the
// replay's alone; else the replay's.
std::string ReportSentence(const TraceReport& t, const ReportContext& ctx);
std::string ReportRule(const TraceReport& t, const ReportContext& ctx);
// Why the choice (verdict/choice.h) named the recommendation: "the
// fastest", or "as fast as the fastest, X, within the margin (...), and
// first of the 3 equally fast (within 5%) in the fixed order", and what its
// peak RSS left out. `freeing_only`: those that never free left the
// equally fast (a faster one that never frees was passed over), so the
// count is of those that free.
std::string ChoiceWords(const std::string& faster, const Estimate& pick_vs_faster,
                        size_t equivalent, double margin, const std::string& memory_passed_over,
                        bool freeing_only = false);
std::string ChoiceWords(const Verdict& v);
// With the search in the program: the recommendation and who decided it,
// "jemalloc: decided in the program, the fastest, ...; the replay ranked it
// 5th of 22 (its own pick: malloc)"; else the replay's: "X: the fastest".
std::string RecommendedWords(const TraceReport& t);
// Where the program shows the replay's pick slower than its own beyond the
// margin: both readings, "the replay read slab/st/single at 1.41x glibc
// malloc's speed and mimalloc at 1.18x; in the program slab/st/single takes
// 1.15x [1.08, 1.22] mimalloc's CPU time". "" where they agree.
std::string DisagreementWords(const TraceReport& t);
// The recommendation in the program's own terms, measured: "jemalloc runs
// the program at 1.73x [1.60, 1.85] the reference std's speed (CPU time,
// 12 paired runs)"; "" without the search.
std::string MeasuredInProgramWords(const TraceReport& t);
// With --shipped_build: "every candidate ran as the build a user would
// ship: 7 builds of the program ..."; "" otherwise.
std::string InSituBuildWords(const InSituSummary& s);
// The faster policy the never-freeing margin passed over, in words; "".
std::string PassedOverWords(const TraceReport& t);
std::string InSituPassedOverWords(const InSituSummary& s);

// The row titles the table and Markdown print above each trace.
std::string TraceTitle(const TraceReport& t);
// Why a policy is short of the precision: "slab: ns/op +-4.1% after 12 runs
// (budget of 3 s spent)".
std::string NotPreciseNote(const PolicyResult& p);
// "ok", "eliminated" (ok, but stopped by the race before any run
// completed), "FAILED" or "skipped"; and the failure, or why a policy
// without figures was eliminated.
std::string StatusWord(const PolicyResult& p);
std::string ErrorWords(const PolicyResult& p);

// In situ's seconds: "0.512", "12.3"; its CI in `fmt`; "-" without data.
std::string Sec(const Estimate& e);
std::string Ci(const Estimate& e, const char* fmt);
// The replay's row for an in-situ policy (malloc and new are the
// reference), and its rank among the replay's policies with figures ("-"
// if none, "" without a replay).
const PolicyResult* ReplayResult(const TraceReport* replay, const std::string& in_situ_name,
                                 const std::string& reference);
std::string ReplayRank(const TraceReport* replay, const std::string& name);
// An in-situ candidate's status: "ok", the race's reason for eliminating
// it ("eliminated after 4 runs: 1.05x [1.03, 1.08] slower than tcmalloc":
// its figures come from those runs, not held to the precision), or the
// failure.
std::string InSituStatusWords(const InSituPolicy& p);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_REPORTS_WORDS_H_
