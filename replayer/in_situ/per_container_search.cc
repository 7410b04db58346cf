#include "alloctrace/replayer/in_situ/per_container_search.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/per_container/classes.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {
namespace {

using Clock = std::chrono::steady_clock;
using Infos = std::map<std::string, allocators::AllocatorInfo>;

// `spec` with class `id` on `policy` (kHeapPolicy: the heap).
MixSpec With(MixSpec spec, uint32_t id, const std::string& policy) {
  spec.by_class[id] = policy;
  return spec;
}

// The program under one mix: the assignment through ALLOCTRACE_POLICY,
// the heap's malloc preloaded.
class MixRunner {
 public:
  MixRunner(const std::vector<ClassSummary>& classes, const Infos& infos,
            const std::vector<std::string>& argv, const InSituSettings& settings,
            std::string heap_preload)
      : classes_(classes),
        infos_(infos),
        argv_(argv),
        settings_(settings),
        heap_preload_(std::move(heap_preload)) {}

  InSituCandidate Candidate(const std::string& label, const MixSpec& spec) const {
    InSituCandidate c;
    c.name = label;
    c.policy = AssignmentFor(spec, classes_, infos_);
    c.pool_policy = true;
    c.preload = heap_preload_;
    c.family = allocators::Family::kOurs;
    if (auto it = infos_.find(label); it != infos_.end()) {
      c.family = it->second.family;
      c.frees_blocks = it->second.frees_blocks;
      c.adopt = it->second.adopt;
    }
    return c;
  }

  // One race of the program's runs, half the search's budgets, `label` in
  // its progress lines.
  absl::StatusOr<InSituSummary> Race(std::vector<InSituCandidate> candidates,
                                     const InSituCandidate* reference, const std::string& label) {
    InSituSettings s = settings_;
    s.race = true;
    s.total_budget_seconds = settings_.total_budget_seconds / 2;
    s.max_total_runs = std::max(3, settings_.max_total_runs / 2);
    s.seed = settings_.seed + ++races_;
    s.progress_label = label;
    s.append_log = true;  // after the single search's runs, in its log
    return MeasureInSitu(argv_, std::move(candidates), s, reference);
  }

  int races() const { return races_; }

 private:
  const std::vector<ClassSummary>& classes_;
  const Infos& infos_;
  const std::vector<std::string>& argv_;
  const InSituSettings& settings_;
  const std::string heap_preload_;
  int races_ = 0;
};

// Why there is no per-container verdict in the program, or "".
std::string WhyNot(const std::vector<ClassSummary>& classes, const InSituSummary& single) {
  const size_t named = std::count_if(classes.begin(), classes.end(),
                                     [](const ClassSummary& c) { return c.def.id != 0; });
  if (single.recommended.empty()) {
    return "the search in the program recommended nothing, so there is no start";
  }
  if (!single.instrumented) {
    return "the program is not instrumented: ALLOCTRACE_POLICY cannot give its classes "
           "policies";
  }
  if (named == 0)
    return "the trace names no class of containers: the single verdict is the verdict";
  if (named == 1) return "the trace has one class of containers: the single verdict is its verdict";
  return "";
}

// Class `c`'s race: its held policy (the reference) against the heap and
// every pool the safety rule allows it. Fills cv.candidates and *leaning
// (ClassRaceDecision's); returns the policy the class takes.
std::string RaceClass(MixRunner& runner, const ClassSummary& c, const MixSpec& mix,
                      const std::vector<ClassSummary>& classes, const Infos& infos,
                      const std::string& label, ClassVerdict& cv, double rss_slack,
                      std::string* leaning) {
  const std::string held = PolicyOf(mix, c.def.id);
  std::vector<std::string> options = {kHeapPolicy};
  for (const char* pool : kOurPoolsInOrder) {
    if (infos.count(pool) > 0) options.push_back(pool);
  }
  std::vector<InSituCandidate> candidates;
  std::vector<ClassCandidate> skipped;
  for (const std::string& option : options) {
    if (option == held) continue;
    const MixSpec spec = With(mix, c.def.id, option);
    const std::string why = MixUnsafeReason(spec, classes, infos, HandOffs::kSequential);
    if (!why.empty()) {
      ClassCandidate s;
      s.policy = option;
      s.skipped = why;
      skipped.push_back(std::move(s));
      continue;
    }
    candidates.push_back(runner.Candidate(option, spec));
  }
  const InSituCandidate reference = runner.Candidate(held, mix);
  absl::StatusOr<InSituSummary> race = runner.Race(std::move(candidates), &reference, label);
  cv.candidates.clear();
  if (!race.ok()) {
    cv.note = absl::StrCat("its race could not run (", race.status().message(), "): held");
    return held;
  }
  DecideInSitu(*race, "", rss_slack);
  for (const InSituPolicy& p : race->policies) {
    ClassCandidate cc;
    cc.policy = p.name;
    if (!p.ok()) {
      cc.skipped = p.failure;
    } else {
      cc.seconds = p.ranked;
      cc.vs_held = p.reference ? Estimate() : p.vs_reference;
      cc.tied_fastest = p.tied_fastest;
    }
    cv.candidates.push_back(std::move(cc));
  }
  cv.candidates.insert(cv.candidates.end(), skipped.begin(), skipped.end());
  const ClassRaceDecision d = DecideClassRace(*race, rss_slack);
  *leaning = d.leaning;
  cv.note = d.note;
  if (!d.moved) return held;
  cv.held = held;
  cv.contribution = d.gain;
  return d.policy;
}

// The final race: the mix, the leanings (if another mix) and the best
// single choice against std. Returns true if the leanings are the answer:
// shown faster than the best single choice, and than the mix if it is.
bool FinalRace(MixRunner& runner, const MixSpec& mix, const MixSpec* leanings,
               const InSituCandidate& single, PerContainerVerdict& v) {
  std::vector<InSituCandidate> candidates = {single};
  if (!v.mix_is_single) candidates.push_back(runner.Candidate(kMixCandidate, mix));
  if (leanings != nullptr) candidates.push_back(runner.Candidate(kLeaningsCandidate, *leanings));
  absl::StatusOr<InSituSummary> race =
      runner.Race(std::move(candidates), nullptr, "in the program, the mix against the single");
  if (!race.ok()) {
    v.in_situ_failure = std::string(race.status().message());
    return false;
  }
  const InSituPolicy* s = FindInSitu(*race, single.name == "std" ? race->reference : single.name);
  const InSituPolicy* lean = leanings == nullptr ? nullptr : FindInSitu(*race, kLeaningsCandidate);
  const InSituPolicy* held = FindInSitu(*race, v.mix_is_single ? single.name : kMixCandidate);
  bool take_leanings = false;
  if (lean != nullptr && lean->ok() && s != nullptr && s->ok()) {
    const Estimate lean_vs_single = PairedSlowdown(*lean, *s, race->clock);
    const Estimate lean_vs_mix = held != nullptr && held->ok() && held != s
                                     ? PairedSlowdown(*lean, *held, race->clock)
                                     : lean_vs_single;
    take_leanings = lean_vs_single.n >= kMinPairedRounds && lean_vs_single.lo > 1 &&
                    (lean_vs_mix.n < kMinPairedRounds || lean_vs_mix.median > 1);
  }
  const InSituPolicy* m = take_leanings ? lean : held;
  const InSituPolicy* ref = FindInSitu(*race, race->reference);
  if (m == nullptr || !m->ok()) {
    v.in_situ_failure = m == nullptr ? "the mix did not run"
                        : m->stderr_tail.empty()
                            ? m->failure
                            : absl::StrCat(m->failure, ": ", m->stderr_tail.back());
    return false;
  }
  if (s != nullptr && s->ok() && s != m) v.in_situ_vs_single = PairedSlowdown(*m, *s, race->clock);
  if (ref != nullptr && ref->ok() && ref != m) {
    v.in_situ_vs_std = PairedSlowdown(*m, *ref, race->clock);
  }
  if (take_leanings) v.mix_is_single = false;
  v.mix_faster = MixShownFaster(v.mix_is_single, v.in_situ_vs_single);
  v.final_rounds = race->rounds;
  return take_leanings;
}

// The rows of the classes the leanings moved from `mix`: held by their own
// races, moved with the others.
void MarkLeanings(const MixSpec& mix, const MixSpec& leanings, std::vector<ClassVerdict>& rows,
                  const std::vector<ClassSummary>& classes) {
  for (size_t i = 0; i < classes.size(); ++i) {
    const std::string from = PolicyOf(mix, classes[i].def.id);
    const std::string to = PolicyOf(leanings, classes[i].def.id);
    if (from == to) continue;
    rows[i].held = from;
    rows[i].contribution = Estimate();
    rows[i].note = absl::StrCat("its own race read ", to, " faster than ", from,
                                ", not by enough to move alone; with the other classes' "
                                "leanings, shown faster together: moved");
  }
}

}  // namespace

PerContainerVerdict SearchPerContainerInProgram(const ReplayProgram& program,
                                                const InSituSummary& single,
                                                const std::vector<std::string>& argv,
                                                const InSituSettings& settings, double min_share) {
  const Clock::time_point t0 = Clock::now();
  PerContainerVerdict v;
  v.in_program = true;
  v.min_share = min_share;
  const std::vector<ClassSummary> classes = ClassesOf(program);
  const Infos infos = allocators::AllocatorInfosByName();
  v.best_single = single.recommended;
  v.why_not = WhyNot(classes, single);
  // The start: the best single choice on every class, or every class on
  // the heap (its malloc preloaded).
  const InSituCandidate best = v.best_single.empty() || v.best_single == single.reference
                                   ? CandidateFor("std")
                                   : CandidateFor(v.best_single);
  const bool best_is_pool = best.pool_policy;
  v.heap = best_is_pool || best.preload.empty() ? "malloc" : best.name;
  v.heap_adopt = infos.count(v.heap) > 0 ? infos.at(v.heap).adopt : allocators::Adoption();
  MixSpec start;
  start.rest = best_is_pool ? best.name : v.heap;
  for (const ClassSummary& c : classes) {
    if (c.def.id != 0) start.by_class[c.def.id] = best_is_pool ? best.name : kHeapPolicy;
  }
  MixSpec mix = start;
  std::vector<ClassVerdict> rows = ClassRows(classes, v.why_not.empty(), min_share);
  if (v.why_not.empty()) {
    MixRunner runner(classes, infos, argv, settings, best_is_pool ? "" : best.preload);
    bool changed = true;
    // Each class's leaning in its last race, by class id.
    std::map<uint32_t, std::string> leanings;
    while (changed && v.sweeps < kMaxSweepsInProgram) {
      changed = false;
      ++v.sweeps;
      for (size_t i = 0; i < classes.size(); ++i) {
        if (!rows[i].searched) continue;
        const std::string alias = AliasName(classes[i].def);
        const std::string label = absl::StrFormat("in the program, class %s (sweep %d)",
                                                  alias.substr(0, alias.size() - 5), v.sweeps);
        const std::string before = PolicyOf(mix, classes[i].def.id);
        std::string leaning;
        const std::string after = RaceClass(runner, classes[i], mix, classes, infos, label, rows[i],
                                            settings.rss_slack, &leaning);
        leanings[classes[i].def.id] = leaning;
        if (after != before) {
          mix = With(mix, classes[i].def.id, after);
          changed = true;
        }
      }
    }
    v.mix_is_single = mix == start;
    // Classes whose moves each read faster but within the margin may
    // together be shown faster: the leanings race as a mix of their own.
    MixSpec leaning_mix = mix;
    for (const auto& [id, policy] : leanings) {
      if (!policy.empty()) leaning_mix = With(leaning_mix, id, policy);
    }
    const bool try_leanings =
        !(leaning_mix == mix) && !(leaning_mix == start) &&
        MixUnsafeReason(leaning_mix, classes, infos, HandOffs::kSequential).empty();
    // No class moved from std: nothing to race.
    if (try_leanings || !(v.mix_is_single && !best_is_pool && best.preload.empty())) {
      if (FinalRace(runner, mix, try_leanings ? &leaning_mix : nullptr, best, v)) {
        MarkLeanings(mix, leaning_mix, rows, classes);
        mix = leaning_mix;
      }
    }
    v.races = runner.races();
  }
  v.assignment = AdoptMix(mix, infos, classes, rows);
  v.classes = std::move(rows);
  v.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (settings.shipped != nullptr) v.shipped_builds = settings.shipped->builds();
  return v;
}

}  // namespace alloctrace
