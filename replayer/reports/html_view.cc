// The view the HTML report is drawn from (HtmlTrace, HtmlContext), made
// from the replayer's statistics and the trace; declared in report_html.h.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/reports/report_html.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/adopt.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

void LiveCourse(const ReplayProgram& program, size_t points, std::vector<double>* x,
                std::vector<double>* bytes) {
  x->clear();
  bytes->clear();
  const size_t n = program.ops.size();
  if (n == 0) return;
  const size_t stride = std::max<size_t>(1, (n + points - 1) / std::max<size_t>(1, points));
  size_t realloc_index = 0;
  int64_t live = 0, span_max = 0;
  for (size_t i = 0; i < n; ++i) {
    const ReplayOp& op = program.ops[i];
    const uint64_t size = op.bytes != kBigSize ? op.bytes : program.big_sizes[op.aux];
    switch (op.kind) {
      case ReplayKind::kAlloc:
      case ReplayKind::kAllocZeroed:
        live += static_cast<int64_t>(size);
        break;
      case ReplayKind::kFree:
        live -= static_cast<int64_t>(size);
        break;
      case ReplayKind::kRealloc: {
        const ReallocInfo& r = program.reallocs[realloc_index++];
        live += static_cast<int64_t>(r.new_bytes) - static_cast<int64_t>(r.old_bytes);
        break;
      }
      default:
        break;
    }
    span_max = std::max(span_max, live);
    if ((i + 1) % stride == 0 || i + 1 == n) {
      x->push_back(static_cast<double>(i + 1));
      bytes->push_back(static_cast<double>(span_max));
      span_max = live;
    }
  }
}

namespace {

HtmlEstimate FromEstimate(const Estimate& e) {
  HtmlEstimate h;
  if (!e.has_data()) return h;
  h.value = e.median;
  if (e.n >= kMinPairedRounds) {  // fewer: no interval to show
    h.lo = e.lo;
    h.hi = e.hi;
  }
  return h;
}

}  // namespace

HtmlTrace HtmlViewOf(const TraceReport& report, const ReplayProgram& program,
                     const ReportContext& ctx) {
  HtmlTrace t;
  t.trace = report.trace;
  t.program = program.header.program();
  t.platform = program.header.platform();
  for (const auto& [k, v] : program.header.labels()) t.labels.emplace_back(k, v);
  std::sort(t.labels.begin(), t.labels.end());
  t.program_ops = program.ops.size();
  t.note = absl::StrJoin(TraceNotes(report), ". ");
  LiveCourse(program, 1000, &t.live_x, &t.live_bytes);
  t.interval_kind = "95% CI of the median";
  t.noise_floor = FromEstimate(report.noise_floor);
  t.sampling = SamplingWords(report);
  t.provisional = ProvisionalWords(report);
  t.caution = CautionWords(report);
  t.incomplete = IncompleteWords(report);
  t.per_container = report.per_container;
  {
    const std::vector<std::string>& fastest = report.verdict.fastest;
    const bool named =
        std::find(fastest.begin(), fastest.end(), report.verdict.if_instrumented) != fastest.end();
    t.if_instrumented = IfInstrumentedWords(report, /*name_policy=*/!named);
  }
  // (When the reference stays, the page's verdict says so: nothing to add.)
  const PolicyResult* estimated = FindPolicy(report, report.program.policy);
  const bool reference_stays = estimated != nullptr && estimated->role == Role::kReference;
  if (!report.verdict.recommended.empty() && !reference_stays) {
    t.in_program_terms = ProgramWords(report, /*name_policy=*/false);
  }
  for (const PolicyResult& r : report.policies) {
    HtmlPolicy p;
    p.name = r.name;
    p.family = WordOf(allocators::kFamilyWords, r.family);
    p.adopt = AdoptWords(r.adopt);
    // A policy the race stopped before any run completed has no figures to
    // draw: a row with its reason, as a failed one has (but not FAILED).
    const bool no_figures = r.ok() && r.runs == 0;
    p.ok = r.ok() && !no_figures;
    p.status = !r.ok()      ? absl::StrCat(WordOf(kRunStatusWords, r.status), ": ", r.failure)
               : no_figures ? r.stop_reason
                            : "";
    p.failed = r.status == RunStatus::kFailed;
    p.runs = r.runs;
    p.floor = r.role == Role::kFloor;
    p.reference = r.role == Role::kReference;
    if (p.ok) {
      p.ns_per_op = FromEstimate(r.ns_per_op);
      p.vs_malloc = FromEstimate(r.vs_malloc);
      p.peak_rss = FromEstimate(r.peak_rss);
      p.overhead = r.overhead;
      p.minor_faults = r.minor_faults;
      p.tied_fastest = r.tied_fastest;
      p.rss_course = r.rss_course;
    }
    t.policies.push_back(std::move(p));
  }
  const Verdict& v = report.verdict;
  t.verdict.fastest = v.fastest;
  t.verdict.fastest_vs_malloc = FromEstimate(v.fastest_vs_malloc);
  t.verdict.smallest_rss = v.smallest_rss;
  if (v.smallest_rss_bytes.has_data()) t.verdict.smallest_rss_bytes = v.smallest_rss_bytes.median;
  t.verdict.recommended = v.recommended;
  if (!v.recommended.empty()) t.verdict.adopt = AdoptWords(v.adopt);
  if (!report.no_memory_ops()) {
    t.verdict.rule = ReportRule(report, ctx);
    t.verdict.sentence = ReportSentence(report, ctx);
  }
  t.verdict.passed_over = v.passed_over_name;
  if (report.in_situ != nullptr && !report.in_situ->recommended.empty()) {
    t.verdict.decided_in_program = RecommendedWords(report);
    t.verdict.disagreement = DisagreementWords(report);
  }
  t.verdict.passed_over_edge = FromEstimate(v.passed_over_edge);
  return t;
}

HtmlContext HtmlContextOf(const ReportContext& ctx) {
  return HtmlContext{
      ctx.machine, ctx.date,
      absl::StrCat("runs per policy until the 95% CI is within +-", ctx.precision * 100,
                   "% (at least ", ctx.min_runs, "), shuffled rounds, each in a fresh process; ",
                   WordOf(kRankByWords, ctx.rank_by), " passes ranked by ", ClockWords(ctx.clock),
                   "; touch=", TouchWord(ctx))};
}

}  // namespace alloctrace
