// --format=json: every figure of every run, for programs; the in-situ runs
// beside the replay's under --confirm ("in_situ" in the trace and in each
// policy), or alone under --in_situ.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/base/json.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {
namespace {

std::string JsonEstimate(const Estimate& e) {
  if (!e.has_data()) return "null";
  return absl::StrFormat("{\"median\": %.6g, \"ci95\": [%.6g, %.6g], \"n\": %d}", e.median, e.lo,
                         e.hi, e.n);
}

// In situ's estimates, without their n.
std::string EstimateJson(const Estimate& e) {
  if (!e.has_data()) return "null";
  return absl::StrFormat("{\"median\": %.6g, \"ci95\": [%.6g, %.6g]}", e.median, e.lo, e.hi);
}

// {"policy", "cpp_type", "header", "bazel_target", "cmake_target"} for a
// type to paste, {"policy", "how"} for a malloc.
std::string JsonAdopt(const std::string& policy, const allocators::Adoption& a) {
  if (a.cpp_type.empty()) {
    return absl::StrCat("{\"policy\": ", JsonString(policy), ", \"how\": ", JsonString(a.how), "}");
  }
  return absl::StrCat(
      "{\"policy\": ", JsonString(policy), ", \"cpp_type\": ", JsonString(a.cpp_type),
      ", \"header\": ", JsonString(a.header), ", \"bazel_target\": ", JsonString(a.bazel_target),
      ", \"cmake_target\": ", JsonString(a.cmake_target),
      a.how.empty() ? "" : absl::StrCat(", \"how\": ", JsonString(a.how)), "}");
}

std::string InSituPolicyJson(const InSituSummary& s, const std::string& policy) {
  const std::string name = InSituNameOf(policy, s.reference);
  const InSituPolicy* p = nullptr;
  for (const InSituPolicy& q : s.policies) {
    if (q.name == name) p = &q;
  }
  if (p == nullptr) return "null";
  return absl::StrCat(
      "{\"wall_s\": ", EstimateJson(p->wall_s), ", \"cpu_s\": ", EstimateJson(p->cpu_s),
      ", \"peak_rss_bytes\": ",
      p->ok() ? absl::StrFormat("%.0f", p->peak_rss_bytes.median) : "null",
      ", \"vs_reference\": ", EstimateJson(p->vs_reference),
      absl::StrFormat(", \"minor_faults\": %.0f, \"major_faults\": %.0f", p->minor_faults,
                      p->major_faults),
      ", \"runs\": ", p->runs.size(),
      ", \"status\": ", JsonString(WordOf(kRunStatusWords, p->status)),
      ", \"eliminated\": ", p->eliminated ? "true" : "false",
      ", \"stop\": ", JsonString(p->stop_reason), ", \"error\": ", JsonString(p->failure),
      ", \"stderr_tail\": [",
      absl::StrJoin(p->stderr_tail, ", ",
                    [](std::string* out, const std::string& l) { out->append(JsonString(l)); }),
      "]}");
}

std::string InSituJson(const InSituSummary& s) {
  std::vector<std::string> ps;
  for (const InSituPolicy& p : s.policies) {
    ps.push_back(absl::StrCat("{\"policy\": ", JsonString(p.name),
                              ", \"in_situ\": ", InSituPolicyJson(s, p.name), "}"));
  }
  return absl::StrCat(
      "{\"argv\": [",
      absl::StrJoin(s.argv, ", ",
                    [](std::string* out, const std::string& a) { out->append(JsonString(a)); }),
      "], \"log\": ", JsonString(s.log_path),
      ", \"instrumented\": ", s.instrumented ? "true" : "false",
      ", \"shipped_builds\": ", s.shipped_builds,
      absl::StrFormat(", \"shipped_build_seconds\": %.1f", s.shipped_build_seconds),
      ", \"build_log\": ", s.build_log.empty() ? "null" : JsonString(s.build_log),
      ", \"reference\": ", JsonString(s.reference),
      ", \"clock\": ", JsonString(WordOf(kTimingClockWords, s.clock)), ", \"rounds\": ", s.rounds,
      ", \"runs\": ", s.runs, ", \"noise_floor\": ", EstimateJson(s.noise_floor),
      absl::StrFormat(", \"budget_seconds\": %.1f", s.budget_seconds),
      ", \"max_total_runs\": ", s.max_total_runs,
      absl::StrFormat(", \"wall_s\": %.3f", s.wall_seconds), ", \"in_situ_fastest\": [",
      absl::StrJoin(s.fastest, ", ",
                    [](std::string* out, const std::string& a) { out->append(JsonString(a)); }),
      "], \"recommended\": ", s.recommended.empty() ? "null" : JsonString(s.recommended),
      ", \"replay_pick\": ", s.replay_pick.empty() ? "null" : JsonString(s.replay_pick),
      ", \"replay_pick_held\": ",
      s.replay_pick.empty() ? "null"
      : s.replay_pick_held  ? "true"
                            : "false",
      ", \"pick_vs_best\": ", EstimateJson(s.pick_vs_best),
      ", \"rule\": ", JsonString(InSituRuleWords(s)), ", \"provisional\": ",
      InSituProvisionalWords(s).empty() ? "null" : JsonString(InSituProvisionalWords(s)),
      ", \"sentence\": ", JsonString(InSituSentence(s)), ",\n  \"policies\": [\n    ",
      absl::StrJoin(ps, ",\n    "), "]}");
}

// With the search in the program: the in-situ fields of the verdict, who
// decided, and the replay's recommendation beside the program's.
std::string InSituVerdictJson(const TraceReport& t) {
  const InSituSummary& s = *t.in_situ;
  const std::string disagreement = DisagreementWords(t);
  return absl::StrCat(
      ", \"decided_by\": ", s.recommended.empty() ? "\"replay\"" : "\"program\"",
      ", \"replay_recommended\": ",
      t.verdict.replay_recommended.empty() ? "null" : JsonString(t.verdict.replay_recommended),
      ", \"recommended_words\": ", JsonString(RecommendedWords(t)),
      ", \"in_situ_fastest\": ", JsonStrings(s.fastest),
      ", \"replay_pick\": ", s.replay_pick.empty() ? "null" : JsonString(s.replay_pick),
      ", \"replay_pick_held\": ", s.replay_pick_held ? "true" : "false",
      ", \"disagreement\": ", disagreement.empty() ? "null" : JsonString(disagreement),
      ", \"measured_in_program\": ", JsonString(MeasuredInProgramWords(t)));
}

// How the runs sampled the trace (SamplingWords as data).
std::string JsonSampling(const TraceReport& t) {
  const SamplingFacts& f = t.sampling;
  if (!f.windowed) return "{\"windowed\": false}";
  return absl::StrFormat(
      "{\"windowed\": true, \"strata\": %d, \"windows_per_run\": %d, \"window_ops\": %d, "
      "\"lead_ops\": %d, \"timed_share\": %.4f, \"served\": %s, \"words\": %s}",
      f.strata, f.per_run, f.window_ops, f.lead_ops, f.timed_share, f.served ? "true" : "false",
      JsonString(SamplingWords(t)));
}

std::string JsonNumber(double v) { return absl::StrFormat("%.6g", v); }

// The verdict in the program's terms: its figures and words, or null.
std::string JsonProgram(const TraceReport& t) {
  if (t.verdict.recommended.empty()) return "null";
  const ProgramEstimate& e = t.program;
  if (e.recorded_seconds <= 0) {
    return absl::StrCat("{\"estimated\": false, \"words\": ", JsonString(ProgramWords(t)), "}");
  }
  return absl::StrCat(
      "{\"estimated\": true, \"recorded_seconds\": ", JsonNumber(e.recorded_seconds),
      ", \"recorded_clock\": ", JsonString(e.recorded_cpu ? "cpu" : "wall"),
      ", \"malloc_seconds\": ", JsonNumber(e.malloc_seconds),
      ", \"recommended_seconds\": ", JsonNumber(e.recommended_seconds),
      ", \"saved_seconds\": ", JsonEstimate(e.saved_seconds),
      ", \"speedup\": ", JsonNumber(e.speedup), ", \"words\": ", JsonString(ProgramWords(t)), "}");
}

// verdict.per_container (a row per class) and verdict.mix (the whole
// program), or nulls without --per_container.
std::string JsonPerContainer(const TraceReport& t) {
  if (t.per_container == nullptr) return ", \"per_container\": null, \"mix\": null";
  const PerContainerVerdict& v = *t.per_container;
  std::vector<std::string> rows;
  for (const ClassVerdict& c : v.classes) {
    std::vector<std::string> candidates;
    for (const ClassCandidate& k : c.candidates) {
      candidates.push_back(absl::StrCat(
          "{\"policy\": ", JsonString(k.policy), ", \"ns_per_op\": ", JsonEstimate(k.ns_per_op),
          ", \"vs_malloc\": ", JsonEstimate(k.vs_malloc), ", \"program_seconds\": ",
          JsonEstimate(k.seconds), ", \"vs_held\": ", JsonEstimate(k.vs_held),
          ", \"tied_fastest\": ", k.tied_fastest ? "true" : "false",
          ", \"skipped\": ", k.skipped.empty() ? "null" : JsonString(k.skipped), "}"));
    }
    rows.push_back(absl::StrCat(
        "\n        {\"class\": ", JsonString(c.facts.def.name), ", \"id\": ", c.facts.def.id,
        ", \"tagged\": ", c.facts.def.tagged ? "true" : "false",
        ", \"label\": ", JsonString(ClassLabel(c)), ", \"memory_ops\": ", c.facts.memory_ops,
        ", \"share\": ", JsonNumber(c.facts.share), ", \"arenas\": ", c.facts.arenas,
        ", \"shared_arenas\": ", c.facts.shared_arenas, ", \"handed_off_arenas\": ",
        c.facts.handed_off_arenas, ", \"threads\": ", c.facts.threads.size(),
        ", \"policy\": ", JsonString(c.policy), ", \"adopt\": ",
        c.policy == kHeapPolicy ? JsonAdopt(v.heap, v.heap_adopt) : JsonAdopt(c.policy, c.adopt),
        ", \"alias\": ", c.alias.empty() ? "null" : JsonString(c.alias), ", \"searched\": ",
        c.searched ? "true" : "false", ", \"held\": ", c.held.empty() ? "null" : JsonString(c.held),
        ", \"contribution\": ", JsonEstimate(c.contribution),
        ", \"words\": ", JsonString(ClassChoiceWords(c)), ", \"candidates\": [",
        absl::StrJoin(candidates, ", "), "]}"));
  }
  return absl::StrCat(
      ", \"per_container\": [", absl::StrJoin(rows, ","), "]",
      ", \"mix\": {\"why_not\": ", v.why_not.empty() ? "null" : JsonString(v.why_not),
      ", \"assignment\": ", v.assignment.empty() ? "null" : JsonString(v.assignment),
      ", \"heap\": ", JsonString(v.heap), ", \"best_single\": ", JsonString(v.best_single),
      ", \"mix_is_single\": ", v.mix_is_single ? "true" : "false",
      ", \"mix_faster\": ", v.mix_faster ? "true" : "false",
      ", \"in_program\": ", v.in_program ? "true" : "false",
      ", \"from_call_sites\": ", v.from_call_sites ? "true" : "false",
      ", \"mix_is_the_answer\": ", MixIsTheAnswer(v) ? "true" : "false",
      ", \"vs_malloc\": ", JsonEstimate(v.mix_vs_malloc),
      ", \"single_vs_malloc\": ", JsonEstimate(v.single_vs_malloc),
      ", \"std_vs_malloc\": ", JsonEstimate(v.std_vs_malloc),
      ", \"vs_single\": ", JsonEstimate(v.mix_vs_single),
      ", \"vs_std\": ", JsonEstimate(v.mix_vs_std), ", \"sweeps\": ", v.sweeps,
      ", \"races\": ", v.races, ", \"seconds\": ", JsonNumber(v.seconds),
      ", \"single_seconds\": ", JsonNumber(v.single_seconds),
      ", \"min_share\": ", JsonNumber(v.min_share), ", \"in_situ\": ",
      !v.in_program
          ? "null"
          : absl::StrCat("{\"vs_single\": ", JsonEstimate(v.in_situ_vs_single),
                         ", \"vs_std\": ", JsonEstimate(v.in_situ_vs_std),
                         ", \"shipped_builds\": ", v.shipped_builds, ", \"failure\": ",
                         v.in_situ_failure.empty() ? "null" : JsonString(v.in_situ_failure), "}"),
      ", \"sentence\": ", JsonString(MixSentence(v)), "}");
}

std::string JsonVerdict(const TraceReport& t, const ReportContext& ctx) {
  const Verdict& v = t.verdict;
  const std::string passed_over = PassedOverWords(t);
  return absl::StrCat(
      "{\"fastest\": ", JsonStrings(v.fastest),
      ", \"fastest_vs_malloc\": ", JsonEstimate(v.fastest_vs_malloc),
      ", \"smallest_rss\": ", JsonStrings(v.smallest_rss),
      ", \"recommended\": ", v.recommended.empty() ? "null" : JsonString(v.recommended),
      // The rule's steps: those practically as fast as the fastest, and the
      // one the fixed order would have named but for its peak RSS.
      ", \"equally_fast\": ", JsonStrings(v.equivalent), ", \"memory_passed_over\": ",
      v.memory_passed_over.empty() ? "null" : JsonString(v.memory_passed_over),
      ", \"rule\": ", JsonString(t.no_memory_ops() ? "" : ReportRule(t, ctx)),
      ", \"passed_over\": ", passed_over.empty() ? "null" : JsonString(passed_over),
      ", \"provisional\": ", ProvisionalWords(t).empty() ? "null" : JsonString(ProvisionalWords(t)),
      ", \"caution\": ", CautionWords(t).empty() ? "null" : JsonString(CautionWords(t)),
      ", \"incomplete\": ", IncompleteWords(t).empty() ? "null" : JsonString(IncompleteWords(t)),
      ", \"sentence\": ", JsonString(t.no_memory_ops() ? NoOpsLine(t) : ReportSentence(t, ctx)),
      ", \"adopt\": ", v.recommended.empty() ? "null" : JsonAdopt(v.recommended, v.adopt),
      ", \"program_estimate\": ", JsonProgram(t), ", \"if_instrumented\": ",
      v.if_instrumented.empty()
          ? "null"
          : absl::StrCat("{\"policy\": ", JsonString(v.if_instrumented),
                         ", \"vs_malloc\": ", JsonEstimate(v.if_instrumented_vs_malloc),
                         ", \"words\": ", JsonString(IfInstrumentedWords(t)), "}"),
      JsonPerContainer(t), t.in_situ == nullptr ? "" : InSituVerdictJson(t), "}");
}

std::string JsonRun(const RunRecord& rr) {
  const RunResult& r = rr.result;
  std::vector<std::string> passes;
  for (size_t i = 0; i < r.passes.size(); ++i) {
    const PassFigures& f = r.passes[i];
    passes.push_back(absl::StrFormat(
        "{\"pass\": %d, \"kind\": \"%s\", \"wall_s\": %.9f, \"cpu_s\": %.9f, \"minor_faults\": "
        "%d, \"major_faults\": %d, \"involuntary_switches\": %d, \"voluntary_switches\": %d, "
        "\"wait_s\": %.9f, \"thread_cpu_s\": [%s]}",
        i, i == 0 ? "cold" : "warm", f.wall_seconds, f.cpu_seconds, f.minor_faults, f.major_faults,
        f.involuntary_switches, f.voluntary_switches, f.wait_seconds,
        absl::StrJoin(f.thread_cpu_seconds, ", ",
                      [](std::string* out, double c) { absl::StrAppendFormat(out, "%.9f", c); })));
  }
  return absl::StrFormat(
      "{\"round\": %d, \"reruns\": %d, \"disturbed\": %s, \"peak_rss_bytes\": %d, "
      "\"final_rss_bytes\": %d, \"baseline_rss_bytes\": %d, \"migrations\": %d, "
      "\"teardown_s\": %.9f, \"passes\": [%s]}",
      rr.round, rr.reruns, rr.disturbed ? "true" : "false", r.peak_rss, r.final_rss, r.baseline_rss,
      r.migrations, r.teardown_seconds, absl::StrJoin(passes, ", "));
}

std::string JsonPolicy(const TraceReport& t, const PolicyResult& p) {
  std::vector<std::string> runs;
  for (const RunRecord& rr : p.raw) runs.push_back(JsonRun(rr));
  return absl::StrCat(
      "        {\"policy\": ", JsonString(p.name),
      ", \"family\": ", JsonString(WordOf(allocators::kFamilyWords, p.family)),
      ", \"note\": ", JsonString(p.note), ", \"status\": ", JsonString(StatusWord(p)),
      ", \"error\": ", JsonString(ErrorWords(p)),
      ",\n         \"adopt\": ", JsonAdopt(p.name, p.adopt), ",\n         ",
      "\"runs_ok\": ", p.runs, ", \"attempts\": ", p.attempts, ", \"runs_failed\": ", p.failed,
      ", \"reruns\": ", p.reruns, ", \"disturbed_kept\": ", p.disturbed_kept,
      ", \"stop\": ", JsonString(p.stop_reason), ", \"whole_runs\": ", p.whole_runs,
      ", \"whole_run_note\": ", JsonString(p.whole_run_note),
      ", \"eliminated\": ", p.eliminated ? "true" : "false",
      ", \"screened_out\": ", p.screened_out ? "true" : "false",
      ", \"precise\": ", p.precise ? "true" : "false",
      ",\n         \"ns_per_op\": ", JsonEstimate(p.ns_per_op),
      ", \"vs_malloc\": ", JsonEstimate(p.vs_malloc),
      ",\n         \"cold_ns_per_op\": ", JsonEstimate(p.cold_ns_per_op),
      absl::StrFormat(", \"process_cost_s\": %.6f", p.process_seconds),
      ", \"cold_vs_malloc\": ", JsonEstimate(p.cold_vs_malloc),
      ",\n         \"warm_ns_per_op\": ", JsonEstimate(p.warm_ns_per_op),
      ", \"warm_vs_malloc\": ", JsonEstimate(p.warm_vs_malloc),
      ",\n         \"peak_rss_bytes\": ", JsonEstimate(p.peak_rss),
      ", \"tied_fastest\": ", p.tied_fastest ? "true" : "false",
      ", \"tied_smallest_rss\": ", p.tied_smallest_rss ? "true" : "false",
      p.runs > 0
          ? absl::StrFormat(", \"overhead\": %.4f, \"final_rss_bytes\": %.0f, "
                            "\"minor_faults\": %.0f, \"major_faults\": %.0f, "
                            "\"teardown_ms\": %.4f",
                            p.overhead, p.final_rss, p.minor_faults, p.major_faults, p.teardown_ms)
          : ", \"overhead\": null, \"final_rss_bytes\": null, \"minor_faults\": null, "
            "\"major_faults\": null, \"teardown_ms\": null",
      ",\n         \"rss_course_bytes\": [", absl::StrJoin(p.rss_course, ","), "]",
      t.in_situ == nullptr
          ? ""
          : absl::StrCat(",\n         \"in_situ\": ", InSituPolicyJson(*t.in_situ, p.name)),
      ",\n         \"runs\": [", absl::StrJoin(runs, ",\n                  "), "]}");
}

std::string JsonTrace(const TraceReport& t, const ReportContext& ctx) {
  std::string s = "    {\n";
  absl::StrAppend(
      &s, "      \"trace\": ", JsonString(t.trace.path),
      ",\n      \"workload\": ", JsonString(t.trace.workload),
      ",\n      \"ops\": ", t.trace.memory_ops, ",\n      \"arena_events\": ", t.trace.arena_events,
      ",\n      \"threads\": ", t.trace.threads,
      ",\n      \"ideal_peak_live_bytes\": ", t.trace.peak_live_bytes,
      ",\n      \"peak_live_objects\": ", t.trace.peak_live_objects,
      ",\n      \"cut_short\": ", JsonString(t.trace.cut_short),
      ",\n      \"one_heap_note\": ", JsonString(OneHeapNote(t)),
      ",\n      \"replay_threads\": ", t.replay_threads,
      ",\n      \"sync_points\": ", t.sync_points,
      ",\n      \"cross_thread_frees\": ", t.cross_thread_frees,
      ",\n      \"clock\": ", JsonString(WordOf(kTimingClockWords, t.clock)),
      ",\n      \"touch\": ", JsonString(TouchWord(t)),
      ",\n      \"collector\": ", JsonString(t.trace.collector),
      ",\n      \"collector_note\": ", JsonString(CollectorNote(t)),
      ",\n      \"per_thread_note\": ", JsonString(PerThreadNote(t)),
      ",\n      \"arena_sharing\": ", JsonString(t.trace.arena_sharing),
      ",\n      \"arena_shape\": ", JsonString(t.trace.arena_shape),
      ",\n      \"class_table_notes\": ", JsonStrings(t.trace.class_table_notes),
      ",\n      \"left_out_notes\": ", JsonStrings(t.trace.left_out_notes),
      ",\n      \"no_memory_ops\": ", t.no_memory_ops() ? "true" : "false",
      ",\n      \"rounds\": ", t.rounds,
      absl::StrFormat(",\n      \"budget_for_precision_seconds\": %.1f", t.budget_for_precision),
      ",\n      \"failed_policies\": ", t.failed_policies,
      ",\n      \"sampling\": ", JsonSampling(t),
      ",\n      \"noise_floor\": ", JsonEstimate(t.noise_floor),
      absl::StrFormat(",\n      \"disturbed\": {\"runs\": %d, \"disturbed\": %d, "
                      "\"kept\": %d}",
                      t.disturbance.runs, t.disturbance.disturbed, t.disturbance.kept),
      ",\n      \"verdict\": ", JsonVerdict(t, ctx),
      t.in_situ == nullptr ? "" : absl::StrCat(",\n      \"in_situ\": ", InSituJson(*t.in_situ)),
      ",\n      \"policies\": [\n");
  std::vector<std::string> ps;
  for (const PolicyResult& p : t.policies) ps.push_back(JsonPolicy(t, p));
  absl::StrAppend(&s, absl::StrJoin(ps, ",\n"), "\n      ]\n    }");
  return s;
}

}  // namespace

std::string JsonReport(const ReportInput& in) {
  if (in.in_situ_only != nullptr) {
    return absl::StrCat("{\"in_situ\": ", InSituJson(*in.in_situ_only), "}\n");
  }
  const ReportContext& ctx = in.ctx;
  std::string o = "{\n";
  absl::StrAppend(&o, "  \"machine\": ", JsonString(ctx.machine),
                  ",\n  \"date\": ", JsonString(ctx.date),
                  ",\n  \"touch\": ", JsonString(TouchWord(ctx)),
                  ",\n  \"clock\": ", JsonString(WordOf(kTimingClockWords, ctx.clock)),
                  ",\n  \"rank_by\": ", JsonString(WordOf(kRankByWords, ctx.rank_by)),
                  ",\n  \"passes\": ", ctx.passes,
                  absl::StrFormat(",\n  \"precision\": %.4f,\n  \"budget_s\": %.3f", ctx.precision,
                                  ctx.budget_seconds),
                  ",\n  \"budget_per_policy\": ", ctx.own_budget ? "true" : "false",
                  ",\n  \"min_runs\": ", ctx.min_runs, ",\n");
  if (in.reports.size() == 1) {
    absl::StrAppend(&o, "  \"verdict\": ", JsonVerdict(in.reports[0], ctx), ",\n");
  }
  std::vector<std::string> traces;
  for (const TraceReport& t : in.reports) traces.push_back(JsonTrace(t, ctx));
  absl::StrAppend(&o, "  \"traces\": [\n", absl::StrJoin(traces, ",\n"), "\n  ]\n}\n");
  return o;
}

}  // namespace alloctrace
