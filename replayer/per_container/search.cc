#include "alloctrace/replayer/per_container/search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/replayer/per_container/classes.h"

namespace alloctrace {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool IsMalloc(const allocators::AllocatorInfo& info) {
  return info.name == "malloc" || info.family == allocators::Family::kExternal;
}

// `spec` with class `id` on `policy` (kHeapPolicy: the heap).
MixSpec With(MixSpec spec, uint32_t id, const std::string& policy) {
  if (policy == kHeapPolicy) {
    spec.by_class.erase(id);
  } else {
    spec.by_class[id] = policy;
  }
  return spec;
}

// One race of mixes, by label, in the order given; glibc malloc (plain) the
// reference. The report's policies carry the labels.
class Racer {
 public:
  Racer(const SharedProgram& shared, const PolicyInfos& infos, const std::string& self,
        const MeasureSettings& s, const ReportContext& ctx)
      : shared_(shared), infos_(infos), self_(self), s_(s), ctx_(ctx) {}

  TraceReport Run(const std::vector<std::pair<std::string, MixSpec>>& mixes, double budget,
                  uint64_t seed) {
    MeasureSettings s = s_;
    std::vector<std::string> names;
    for (const auto& [label, spec] : mixes) {
      names.push_back(label);
      s.mixes[label] = spec;
    }
    s.rounds.total_budget_seconds = budget;
    s.rounds.max_total_budget_seconds = budget;
    s.rounds.seed = seed;
    // Ranked by the cold pass, a race needs nothing else of a run: one pass
    // each, twice the rounds in the budget.
    if (s.rank_by == RankBy::kCold) s.run_options.max_passes = 1;
    const MeasuredTrace m = MeasureTrace(shared_, names, /*screen=*/false, infos_, self_, s);
    return Summarize(m, ctx_);
  }

  Ranking RankingOf(const TraceReport& r) const { return ctx_.RankingFor(r.clock); }

 private:
  const SharedProgram& shared_;
  const PolicyInfos& infos_;
  const std::string& self_;
  const MeasureSettings& s_;
  const ReportContext& ctx_;
};

// The class's race: the held policy and every safe candidate, the others
// held. Updates `cv` (candidates, contribution) and returns the policy the
// class takes.
std::string RaceClass(Racer& racer, const ClassSummary& c, const MixSpec& mix,
                      const std::vector<ClassSummary>& classes, const PolicyInfos& infos,
                      double budget, uint64_t seed, ClassVerdict& cv) {
  const std::string held = PolicyOf(mix, c.def.id);
  std::vector<std::string> candidates = {kHeapPolicy};
  for (const char* pool : kOurPoolsInOrder) {
    if (infos.count(pool) > 0) candidates.push_back(pool);
  }
  if (std::find(candidates.begin(), candidates.end(), held) == candidates.end()) {
    candidates.insert(candidates.begin(), held);
  }
  std::vector<std::pair<std::string, MixSpec>> mixes;
  std::vector<std::string> labels;
  cv.candidates.clear();
  for (const std::string& candidate : candidates) {
    const MixSpec spec = With(mix, c.def.id, candidate);
    const std::string why = MixUnsafeReason(spec, classes, infos);
    if (!why.empty()) {
      ClassCandidate skipped;
      skipped.policy = candidate;
      skipped.skipped = why;
      cv.candidates.push_back(std::move(skipped));
      continue;
    }
    mixes.emplace_back(candidate, spec);
    labels.push_back(candidate);
  }
  const TraceReport r = racer.Run(mixes, budget, seed);
  const ReplayClassMove move = DecideReplayClassRace(r, labels, held, racer.RankingOf(r));
  std::vector<ClassCandidate> ran;
  for (const std::string& label : labels) {
    const PolicyResult* p = FindPolicy(r, label);
    ClassCandidate cc;
    cc.policy = label;
    if (p == nullptr || !p->ok() || !p->ns_per_op.has_data()) {
      cc.skipped =
          p == nullptr ? "not run" : absl::StrCat("no figure: ", p->failure, p->stop_reason);
    } else {
      cc.ns_per_op = p->ns_per_op;
      cc.vs_malloc = p->vs_malloc;
      cc.tied_fastest = std::find(move.tied_fastest.begin(), move.tied_fastest.end(), label) !=
                        move.tied_fastest.end();
    }
    ran.push_back(std::move(cc));
  }
  std::stable_sort(ran.begin(), ran.end(), [](const ClassCandidate& a, const ClassCandidate& b) {
    const bool ha = a.ns_per_op.has_data(), hb = b.ns_per_op.has_data();
    if (ha != hb) return ha;
    return ha && a.ns_per_op.median < b.ns_per_op.median;
  });
  ran.insert(ran.end(), cv.candidates.begin(), cv.candidates.end());
  cv.candidates = std::move(ran);
  cv.note = move.note;
  if (move.moved) {
    cv.held = held;
    cv.contribution = move.gain;
  }
  return move.policy;
}

// The whole program: the mix, the best single choice and std.
void FinalRace(Racer& racer, const MixSpec& mix, const MixSpec& single, double budget,
               uint64_t seed, PerContainerVerdict& v) {
  const MixSpec std_mix;  // every class on glibc malloc
  std::vector<std::pair<std::string, MixSpec>> mixes;
  if (!v.mix_is_single) mixes.emplace_back(kMixLabel, mix);
  mixes.emplace_back(kBestSingleLabel, single);
  if (!(single == std_mix)) mixes.emplace_back(kStdLabel, std_mix);
  const TraceReport r = racer.Run(mixes, budget, seed);
  ReadFinalRace(r, racer.RankingOf(r), single == std_mix, v);
}

// Why there is no per-container verdict for `program`, or "".
std::string WhyNot(const ReplayProgram& program, const std::vector<ClassSummary>& classes,
                   const std::string& best_single) {
  const size_t named = std::count_if(classes.begin(), classes.end(),
                                     [](const ClassSummary& c) { return c.def.id != 0; });
  if (best_single.empty()) {
    return "the single verdict recommended nothing, so there is no start for the search";
  }
  if (program.arena_class_conflicts > 0) {
    return absl::StrCat(program.arena_class_conflicts,
                        " arena creations reuse an arena id with another class: the trace "
                        "cannot tell which class such an arena's blocks belong to");
  }
  if (named == 0) {
    return "the trace names no class of containers (recorded before classes, or captured): the "
           "single verdict is the verdict";
  }
  if (named == 1) return "the trace has one class of containers: the single verdict is its verdict";
  return "";
}

}  // namespace

PerContainerVerdict SearchPerContainer(const SharedProgram& shared, const TraceReport& single,
                                       const PolicyInfos& infos, const std::string& self,
                                       const MeasureSettings& s, const ReportContext& ctx,
                                       const SearchSettings& search) {
  const Clock::time_point t0 = Clock::now();
  PerContainerVerdict v;
  v.single_seconds = search.single_seconds;
  v.min_share = search.min_share;
  const std::vector<ClassSummary> classes = ClassesOf(shared.program);
  v.best_single = single.verdict.recommended;
  v.why_not = WhyNot(shared.program, classes, v.best_single);
  const allocators::AllocatorInfo& pick =
      infos.at(v.best_single.empty() ? "malloc" : v.best_single);
  v.heap = IsMalloc(pick) ? pick.name : "malloc";
  v.heap_adopt = infos.at(v.heap).adopt;
  // The start: the single pick on every class (or the heap for all).
  MixSpec start;
  start.rest = v.heap;
  for (const ClassSummary& c : classes) {
    if (c.def.id != 0 && !IsMalloc(pick)) start.by_class[c.def.id] = pick.name;
  }
  MixSpec mix = start;
  std::vector<ClassVerdict> rows = ClassRows(classes, v.why_not.empty(), search.min_share);
  if (v.why_not.empty()) {
    Racer racer(shared, infos, self, s, ctx);
    const size_t searched =
        std::count_if(rows.begin(), rows.end(), [](const ClassVerdict& cv) { return cv.searched; });
    const double budget = std::max(search.min_race_seconds,
                                   search.single_seconds / static_cast<double>(searched + 1));
    uint64_t seed = s.rounds.seed;
    bool changed = true;
    while (changed && v.sweeps < search.max_sweeps &&
           (v.sweeps == 0 || SecondsSince(t0) < search.single_seconds)) {
      changed = false;
      ++v.sweeps;
      for (size_t i = 0; i < classes.size(); ++i) {
        if (!rows[i].searched) continue;
        const std::string before = PolicyOf(mix, classes[i].def.id);
        const std::string after =
            RaceClass(racer, classes[i], mix, classes, infos, budget, ++seed, rows[i]);
        ++v.races;
        if (after != before) {
          mix = With(mix, classes[i].def.id, after);
          changed = true;
        }
      }
    }
    v.mix_is_single = mix == start;
    FinalRace(racer, mix, start, budget, ++seed, v);
    ++v.races;
  }
  v.assignment = AdoptMix(mix, infos, classes, rows);
  v.classes = std::move(rows);
  if (ClassesAreCallSites(shared.program.header)) MarkCallSiteClasses(v);
  v.seconds = SecondsSince(t0);
  return v;
}

}  // namespace alloctrace
