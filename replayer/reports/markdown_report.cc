// --format=markdown: the report as Markdown (a summary table of the
// verdicts over several traces, then a section per trace), with the in-situ
// section under --confirm, or alone under --in_situ.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/reports/formats.h"
#include "alloctrace/replayer/reports/words.h"
#include "alloctrace/replayer/verdict/adopt.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"

namespace alloctrace {
namespace {

// A sparkline of the RSS course, `width` characters wide.
std::string Sparkline(const std::vector<int64_t>& course, int width) {
  static const char* const kBars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                      "\u2585", "\u2586", "\u2587", "\u2588"};
  if (course.empty()) return std::string(width, ' ');
  int64_t hi = 1;
  for (int64_t v : course) hi = std::max(hi, v);
  std::string out;
  for (int i = 0; i < width; ++i) {
    const size_t from = course.size() * i / width;
    const size_t to = std::max(from + 1, course.size() * (i + 1) / width);
    int64_t m = 0;
    for (size_t k = from; k < to && k < course.size(); ++k) m = std::max(m, course[k]);
    const int level = static_cast<int>(std::lround(7.0 * std::max<int64_t>(m, 0) / hi));
    out += kBars[std::clamp(level, 0, 7)];
  }
  return out;
}

// The type as code, the rest as words.
std::string MdAdopt(const allocators::Adoption& a) {
  if (a.cpp_type.empty()) return a.how;
  const std::string words = AdoptWords(a);
  return absl::StrCat("`", a.cpp_type, "`", words.substr(a.cpp_type.size()));
}

std::string MdEstimate(const Estimate& e, bool bold) {
  if (!e.has_data()) return "-";
  const std::string m = bold ? "**" + Num(e.median) + "**" : Num(e.median);
  return absl::StrCat(m, " [", Num(e.lo), ", ", Num(e.hi), "]");
}

std::string MdRatio(const Estimate& e) {
  return e.has_data() ? absl::StrFormat("%.2f [%.2f, %.2f]", e.median, e.lo, e.hi) : "-";
}

// One line per trace: the verdicts side by side.
std::string VerdictsTable(const std::vector<TraceReport>& reports) {
  std::string o =
      "| trace | fastest (tied group) | its speed vs glibc malloc [95% CI] | "
      "smallest peak RSS (tied group) | recommended | noise floor [95% CI] |\n"
      "|---|---|---:|---|---|---:|\n";
  for (const TraceReport& t : reports) {
    if (t.no_memory_ops()) {
      absl::StrAppend(&o, "| ", t.trace.path, " | no memory operations | | | | |\n");
      continue;
    }
    const Verdict& v = t.verdict;
    absl::StrAppend(&o, "| ", t.trace.path, " | ", absl::StrJoin(v.fastest, ", "), " | ",
                    MdRatio(v.fastest_vs_malloc), " | ", absl::StrJoin(v.smallest_rss, ", "), " | ",
                    v.recommended.empty() ? "-" : v.recommended, " | ",
                    t.noise_floor.has_data()
                        ? absl::StrFormat("%.3f [%.3f, %.3f]", t.noise_floor.median,
                                          t.noise_floor.lo, t.noise_floor.hi)
                        : "-",
                    " |\n");
  }
  return o + "\n";
}

// The policies' rows, then the notes on those short of the precision and
// those the race eliminated.
std::string PolicyRows(const TraceReport& t, const ReportContext& ctx) {
  std::string o =
      "| policy | family | warm ns/op [95% CI] | cold ns/op [95% CI] | x malloc "
      "[95% CI] | peak RSS [95% CI] | x ideal | minor faults | runs | re-runs | "
      "RSS course | adopt (`T`: the element type) |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  const bool warm = ctx.warm();
  std::vector<std::string> notes, eliminated;
  for (const PolicyResult& p : t.policies) {
    const char* family = WordOf(allocators::kFamilyWords, p.family);
    if (!p.ok()) {
      absl::StrAppend(&o, "| ", p.name, " | ", family, " | ",
                      p.status == RunStatus::kFailed
                          ? "**FAILED**: "
                          : absl::StrCat(WordOf(kRunStatusWords, p.status), ": "),
                      p.failure, " | | | | | | | | | ", MdAdopt(p.adopt), " |\n");
      continue;
    }
    const std::string rss =
        p.peak_rss.has_data()
            ? absl::StrCat(p.tied_smallest_rss ? "**" + Mib(p.peak_rss.median) + "**"
                                               : Mib(p.peak_rss.median),
                           " [", Mib(p.peak_rss.lo), ", ", Mib(p.peak_rss.hi), "]")
            : "-";
    absl::StrAppend(
        &o, "| ", p.name, p.precise || p.eliminated || p.role == Role::kFloor ? "" : " !", " | ",
        family, " | ", MdEstimate(p.warm_ns_per_op, warm && p.tied_fastest), " | ",
        MdEstimate(p.cold_ns_per_op, !warm && p.tied_fastest), " | ", MdRatio(p.vs_malloc), " | ",
        rss, " | ", p.runs > 0 ? absl::StrFormat("%.2f", p.overhead) : "-", " | ",
        p.runs > 0 ? absl::StrFormat("%.0f", p.minor_faults) : "-", " | ", p.runs, " | ", p.reruns,
        " | ", Sparkline(p.rss_course, 16), " | ", MdAdopt(p.adopt), " |\n");
    if (p.eliminated) eliminated.push_back(absl::StrCat(p.name, ": ", p.stop_reason));
    if (!p.precise && !p.eliminated && p.role != Role::kFloor) notes.push_back(NotPreciseNote(p));
  }
  if (!notes.empty()) {
    absl::StrAppendFormat(&o, "\n! CI wider than +-%.0f%%: %s.\n", 100 * ctx.precision,
                          absl::StrJoin(notes, "; "));
  }
  if (!eliminated.empty()) {
    absl::StrAppend(&o, "\nEliminated by the race (not held to the precision): ",
                    absl::StrJoin(eliminated, "; "), ".\n");
  }
  return o;
}

// The verdict per container: a row per class, the whole program, the
// alias lines.
std::string PerContainerMarkdown(const PerContainerVerdict& v) {
  std::string o = absl::StrCat("**Per container:** ", MixSentence(v), "\n\n");
  if (!v.why_not.empty()) return o;
  absl::StrAppend(&o, "Searched: ", MixCostWords(v), ".\n\n",
                  "| class | share of memory ops | policy | why |\n|---|---:|---|---|\n");
  for (const ClassVerdict& c : v.classes) {
    absl::StrAppendFormat(&o, "| `%s` | %.1f%% | %s | %s |\n", ClassLabel(c), 100 * c.facts.share,
                          ClassPolicyWords(v, c), ClassChoiceWords(c));
  }
  if (!MixIsTheAnswer(v)) {
    if (v.mix_is_single) return o + "\n";
    if (v.from_call_sites) return absl::StrCat(o, "\n", SiteClassesWords(v), ".\n\n");
    return absl::StrCat(o, "\nThe mix searched (not the answer): `ALLOCTRACE_POLICY='",
                        v.assignment, "'`.\n\n");
  }
  absl::StrAppend(&o, "\n", AdoptHeading(v), "\n\n```", v.from_call_sites ? "" : "cpp", "\n");
  for (const std::string& line : AdoptLines(v)) absl::StrAppend(&o, line, "\n");
  absl::StrAppend(&o, "```\n\n", HeapWords(v), ".");
  if (v.from_call_sites) {
    absl::StrAppend(&o, " ", SiteClassesWords(v), ".\n\n");
  } else {
    absl::StrAppend(&o, " In the program, unchanged: `ALLOCTRACE_POLICY='", v.assignment,
                    "'`.\n\n");
  }
  return o;
}

std::string TraceSection(const TraceReport& t, const ReportContext& ctx) {
  const std::string title = TraceTitle(t);
  std::string o =
      absl::StrCat("### ", t.trace.path, "\n\n", title.substr(title.find('\n') + 1), "\n");
  if (!t.trace.cut_short.empty()) absl::StrAppend(&o, "Warning: ", t.trace.cut_short, "\n\n");
  for (const std::string& note : TraceNotes(t)) absl::StrAppend(&o, "Note: ", note, ".\n\n");
  if (t.no_memory_ops()) return absl::StrCat(o, NoOpsLine(t), ".\n\n");
  absl::StrAppend(&o, "**Verdict** (", PassWords(ctx, t.clock), "): ", ReportSentence(t, ctx),
                  "\n\n");
  if (const std::string p = ProvisionalWords(t); !p.empty()) {
    absl::StrAppend(&o, "**Provisional:** ", p, ".\n\n");
  }
  if (const std::string c = CautionWords(t); !c.empty()) {
    absl::StrAppend(&o, "**Caution:** ", c, ".\n\n");
  }
  if (const std::string w = IncompleteWords(t); !w.empty()) {
    absl::StrAppend(&o, "**Incomplete:** ", w, ".\n\n");
  }
  if (!t.verdict.recommended.empty()) {
    absl::StrAppend(&o, "**In the program's terms:** ", ProgramWords(t), ".\n\n");
  }
  if (const std::string w = IfInstrumentedWords(t); !w.empty()) {
    absl::StrAppend(&o, "**If instrumented:** ", w, ".\n\n");
  }
  if (!t.verdict.recommended.empty()) {
    absl::StrAppend(&o, "**Adopt:** ", MdAdopt(t.verdict.adopt), "\n\n");
  }
  if (t.per_container != nullptr) absl::StrAppend(&o, PerContainerMarkdown(*t.per_container));
  absl::StrAppend(&o, "Measured: ", SamplingWords(t), ".\n\n");
  absl::StrAppend(&o, "Noise floor: ", NoiseWords(t), ". Disturbed runs: ", DisturbanceWords(t),
                  ".\n\n", PolicyRows(t, ctx), "\n");
  return o;
}

std::string InSituMarkdown(const InSituSummary& s, const TraceReport* replay) {
  std::string o = absl::StrCat("### In situ: `", absl::StrJoin(s.argv, " "),
                               "`\n\n**Verdict (in "
                               "situ):** ",
                               InSituSentence(s), "\n\n");
  // (Under a replay, the trace's verdict says it.)
  if (const std::string p = InSituProvisionalWords(s); !p.empty() && replay == nullptr) {
    absl::StrAppend(&o, "**Provisional:** ", p, ".\n\n");
  }
  absl::StrAppend(&o, "Reference: ", s.reference, "; program output: `", s.log_path, "`.\n\n");
  if (const std::string built = InSituBuildWords(s); !built.empty()) {
    absl::StrAppend(&o, "Builds: ", built, ".\n\n");
  }
  absl::StrAppend(
      &o,
      "| policy | replay rank | replay ns/op | in-situ wall s [95% CI] | cpu s "
      "| x reference | peak RSS | runs | status |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const InSituPolicy& p : s.policies) {
    const PolicyResult* r = ReplayResult(replay, p.name, s.reference);
    absl::StrAppend(&o, "| ", p.name, p.tied_fastest ? " **\\***" : "", " | ",
                    ReplayRank(replay, r != nullptr ? r->name : p.name), " | ",
                    r != nullptr && r->ok() && r->ns_per_op.has_data()
                        ? absl::StrFormat("%.1f", r->ns_per_op.median)
                        : "-",
                    " | ", Sec(p.wall_s), " ", Ci(p.wall_s, "[%.3f, %.3f]"), " | ", Sec(p.cpu_s),
                    " | ", p.reference ? "reference" : Times(p.vs_reference), " | ",
                    p.ok() ? Mib(p.peak_rss_bytes.median) : "-", " | ", p.runs.size(), " | ",
                    InSituStatusWords(p), " |\n");
  }
  return o + "\n";
}

}  // namespace

std::string MarkdownReport(const ReportInput& in) {
  if (in.in_situ_only != nullptr) return InSituMarkdown(*in.in_situ_only, nullptr);
  const ReportContext& ctx = in.ctx;
  std::string o;
  if (in.reports.size() > 1) o = VerdictsTable(in.reports);
  for (const TraceReport& t : in.reports) absl::StrAppend(&o, TraceSection(t, ctx));
  absl::StrAppendFormat(
      &o,
      "Bold: in the tied group of the best (the 95%% CI of the ratio paired by round includes 1 "
      "or lies within the noise floor). !: CI not within the target. "
      "Machine: %s. %s; %s; %s; %s; touch=%s.\n",
      ctx.machine, ctx.date, PassPlan(ctx), ClockWords(ctx.clock), StopWords(ctx), TouchWord(ctx));
  if (!in.reports.empty() && in.reports[0].in_situ != nullptr) {
    absl::StrAppend(&o, InSituMarkdown(*in.reports[0].in_situ, &in.reports[0]));
  }
  return o;
}

}  // namespace alloctrace
