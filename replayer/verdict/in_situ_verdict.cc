#include "alloctrace/replayer/verdict/in_situ_verdict.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/verdict/choice.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

const InSituPolicy* FindInSitu(const InSituSummary& s, const std::string& name) {
  for (const InSituPolicy& p : s.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::map<int, double> FiguresByRound(const InSituPolicy& p, TimingClock clock) {
  std::map<int, double> by_round;
  for (const InSituRun& r : p.runs)
    by_round[r.round] = clock == TimingClock::kWall ? r.wall_s : r.cpu_s;
  return by_round;
}

void OrderInSituPolicies(std::vector<InSituPolicy>& policies) {
  auto rank = [](const InSituPolicy& p) {
    return p.ok() ? 0 : p.status == RunStatus::kFailed ? 1 : 2;
  };
  double ref_median = 0;
  for (const InSituPolicy& p : policies) {
    if (p.reference && p.ok()) ref_median = p.ranked.median;
  }
  std::vector<double> speed;
  for (const InSituPolicy& p : policies) {
    if (!p.ok()) {
      speed.push_back(0);
    } else if (p.reference) {
      speed.push_back(1);
    } else if (p.vs_reference.has_data()) {
      speed.push_back(p.vs_reference.median);
    } else {
      speed.push_back(ref_median > 0 && p.ranked.median > 0 ? ref_median / p.ranked.median
                                                            : 1 / std::max(p.ranked.median, 1e-12));
    }
  }
  std::vector<size_t> order(policies.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int ra = rank(policies[a]), rb = rank(policies[b]);
    if (ra != rb) return ra < rb;
    return ra == 0 && speed[a] > speed[b];
  });
  std::vector<InSituPolicy> sorted;
  for (size_t i : order) sorted.push_back(std::move(policies[i]));
  policies = std::move(sorted);
}

Estimate PairedSlowdown(const InSituPolicy& a, const InSituPolicy& b, TimingClock clock) {
  return PairedRatio(FiguresByRound(b, clock), FiguresByRound(a, clock));
}

namespace {

// The speed figures of `members` (indexes into s.policies, all ok), paired
// by round, the reference std or malloc.
std::vector<SpeedFigures> InSituSpeedFigures(const InSituSummary& s,
                                             const std::vector<size_t>& members) {
  std::vector<SpeedFigures> figures;
  for (size_t i : members) {
    const InSituPolicy& p = s.policies[i];
    SpeedFigures f;
    f.median = p.ranked;
    f.by_round = FiguresByRound(p, s.clock);
    f.vs_reference = p.vs_reference;
    f.reference = p.reference;
    f.frees_blocks = p.frees_blocks;
    figures.push_back(std::move(f));
  }
  return figures;
}

}  // namespace

std::string InSituNameOf(const std::string& replay_name, const std::string& reference) {
  return replay_name == "malloc" || replay_name == "new" ? reference : replay_name;
}

namespace {

// How the replay's pick fared against the choice `c` made (indexes into
// `ok`).
void JudgePick(InSituSummary& s, const std::vector<size_t>& ok, const Choice& c,
               InSituDecision& d) {
  using Outcome = InSituDecision::Outcome;
  const InSituPolicy* pick = FindInSitu(s, s.replay_pick);
  if (pick == nullptr || !pick->ok()) {
    if (pick != nullptr) d.pick = static_cast<size_t>(pick - s.policies.data());
    d.outcome = Outcome::kPickNotRun;
    s.replay_pick_held = false;
    return;
  }
  d.pick = static_cast<size_t>(pick - s.policies.data());
  auto among = [&](const std::vector<size_t>& set) {
    return std::any_of(set.begin(), set.end(), [&](size_t k) { return ok[k] == d.pick; });
  };
  const InSituPolicy& rec = s.policies[d.recommended];
  // Held: the program cannot tell the pick from the recommendation, by
  // speed (the equivalent) and memory (what step 3 kept).
  s.replay_pick_held = among(c.kept);
  s.pick_vs_best = PairedSlowdown(rec, *pick, s.clock);
  d.pick_vs_fastest = PairedSlowdown(s.policies[d.fastest], *pick, s.clock);
  if (d.pick == d.recommended) {
    d.outcome = Outcome::kPickIsBest;
  } else if (s.replay_pick_held) {
    d.outcome = Outcome::kPickTied;
  } else if (among(c.equivalent)) {
    d.outcome = Outcome::kPickOverSlack;  // as fast, but left out for its memory
  } else {
    // Shown slower than the fastest by more than the margin. Held against
    // the recommended policy, or the fastest if the recommended one (chosen
    // by preference among the equivalent) is not faster than the pick.
    d.outcome = Outcome::kPickSlower;
    d.winner = s.pick_vs_best.median > 1 ? d.recommended : d.fastest;
    d.pick_vs_winner = PairedSlowdown(s.policies[d.winner], *pick, s.clock);
  }
}

}  // namespace

void DecideInSitu(InSituSummary& s, const std::string& replay_pick, double rss_slack) {
  using Outcome = InSituDecision::Outcome;
  InSituDecision& d = s.decision;
  d = InSituDecision();
  s.rss_slack = rss_slack;
  s.fastest.clear();
  s.replay_pick = replay_pick.empty() ? "" : InSituNameOf(replay_pick, s.reference);
  // The candidates: every policy that ran, but those the race eliminated
  // (shown slower than its leader, perhaps after a single run 40x slower:
  // not to be read as tied for want of rounds), as the replay's verdict.
  std::vector<size_t> ok;
  for (size_t i = 0; i < s.policies.size(); ++i) {
    if (s.policies[i].ok() && !s.policies[i].eliminated) ok.push_back(i);
  }
  if (ok.empty()) {  // (the race never eliminates the reference: not reached)
    for (size_t i = 0; i < s.policies.size(); ++i) {
      if (s.policies[i].ok()) ok.push_back(i);
    }
  }
  if (ok.empty()) return;  // kNothingRan
  const double noise_margin = NoiseMargin(s.noise_floor);
  const std::vector<SpeedFigures> speed = InSituSpeedFigures(s, ok);
  std::vector<ChoiceCandidate> candidates;
  d.smallest = ok[0];
  for (size_t k = 0; k < ok.size(); ++k) {
    const InSituPolicy& p = s.policies[ok[k]];
    candidates.push_back(
        {p.name, speed[k], p.peak_rss_bytes.median, true, FixedOrder(p.name, p.family)});
    if (p.peak_rss_bytes.median < s.policies[d.smallest].peak_rss_bytes.median) {
      d.smallest = ok[k];
    }
  }
  const Choice c = Choose(candidates, noise_margin, rss_slack);
  // The tied group among those the choice measured enough to compare: a
  // candidate the race stopped after 2 runs 4x slower is not "tied" for
  // want of a third.
  std::vector<SpeedFigures> measured_speed;
  for (size_t k : c.measured) measured_speed.push_back(speed[k]);
  for (size_t j : FastestTiedGroup(measured_speed, noise_margin)) {
    s.policies[ok[c.measured[j]]].tied_fastest = true;
    s.fastest.push_back(s.policies[ok[c.measured[j]]].name);
  }
  d.margin = c.margin;
  d.recommended = ok[c.pick];
  d.fastest = ok[c.fastest];
  for (size_t k : c.equivalent) d.equivalent.push_back(ok[k]);
  if (c.memory_passed_over != Choice::kNone) d.memory_passed_over = ok[c.memory_passed_over];
  if (c.never_frees_passed_over != Choice::kNone) {
    d.passed_over = ok[c.never_frees_passed_over];
    d.passed_over_edge = c.never_frees_edge;
  }
  s.recommended = s.policies[d.recommended].name;
  s.adopt = s.policies[d.recommended].adopt;
  if (s.replay_pick.empty()) {
    d.outcome = Outcome::kRecommended;
    return;
  }
  JudgePick(s, ok, c, d);
}

namespace {

void AddOnce(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// Whether the program can run `p` in situ: the reference, a malloc by
// preload, or a pool of the catalog (ours or the article's) through the
// switch.
bool RunsInSitu(const PolicyResult& p) {
  return p.name == "malloc" || p.name == "new" || p.family == allocators::Family::kExternal ||
         p.family == allocators::Family::kOurs || p.family == allocators::Family::kArticle;
}

}  // namespace

std::vector<std::string> SearchCandidates(const TraceReport& replay, int leaders) {
  std::vector<std::string> names;
  for (const PolicyResult& p : replay.policies) {
    if (static_cast<int>(names.size()) >= leaders) break;
    if (p.ok() && p.ns_per_op.has_data() && RunsInSitu(p)) AddOnce(names, p.name);
  }
  if (!replay.verdict.recommended.empty()) AddOnce(names, replay.verdict.recommended);
  for (const char* m : kExternalMallocsInOrder) AddOnce(names, m);
  if (replay.trace.arena_events == 0) return names;
  for (const char* pool : kOurPoolsInOrder) {
    for (const PolicyResult& p : replay.policies) {
      if (p.name == pool && p.ok()) AddOnce(names, pool);
    }
  }
  for (const PolicyResult& p : replay.policies) {
    if (p.ok() && p.ns_per_op.has_data() && p.family == allocators::Family::kArticle) {
      AddOnce(names, p.name);  // the fastest of the grid (policies are in ranking order)
      break;
    }
  }
  return names;
}

std::vector<std::string> FamilyCandidates() {
  std::vector<std::string> names(std::begin(kExternalMallocsInOrder),
                                 std::end(kExternalMallocsInOrder));
  names.insert(names.end(), std::begin(kOurPoolsInOrder), std::end(kOurPoolsInOrder));
  return names;
}

ClassRaceDecision DecideClassRace(const InSituSummary& race, double rss_slack) {
  ClassRaceDecision out;
  out.policy = race.reference;
  std::vector<size_t> ok;
  for (size_t i = 0; i < race.policies.size(); ++i) {
    if (race.policies[i].ok()) ok.push_back(i);
  }
  const InSituPolicy* held = FindInSitu(race, race.reference);
  if (held == nullptr || !held->ok()) {
    out.note = "the held policy's runs failed: held";
    return out;
  }
  // The held policy is the race's reference: vs_reference is each one's gain.
  double fastest = 1;
  for (size_t i : ok) {
    const InSituPolicy& p = race.policies[i];
    if (!p.reference && p.vs_reference.n >= kMinPairedRounds && p.vs_reference.median > fastest) {
      fastest = p.vs_reference.median;
      out.leaning = p.name;
    }
  }
  const std::vector<SpeedFigures> speed = InSituSpeedFigures(race, ok);
  std::vector<ChoiceCandidate> candidates;
  for (size_t k = 0; k < ok.size(); ++k) {
    const InSituPolicy& p = race.policies[ok[k]];
    // The held policy first in the order: it stays unless shown slower.
    const int order = p.reference ? -1 : FixedOrder(p.name, p.family);
    candidates.push_back({p.name, speed[k], p.peak_rss_bytes.median, true, order});
  }
  const Choice c = Choose(candidates, NoiseMargin(race.noise_floor), rss_slack);
  const InSituPolicy& pick = race.policies[ok[c.pick]];
  if (pick.reference) {
    out.note = absl::StrFormat(
        "its race in the program did not show a policy faster than %s by more than %.0f%%: held",
        race.reference, 100 * c.margin);
    return out;
  }
  out.gain = PairedSlowdown(pick, *held, race.clock);
  if (out.gain.n < kMinPairedRounds || out.gain.lo <= 1) {
    out.note = absl::StrCat(
        pick.name, " was chosen over ", race.reference, " but not shown faster (",
        absl::StrFormat("%.2fx [%.2f, %.2f]", out.gain.median, out.gain.lo, out.gain.hi),
        " its speed): held");
    out.gain = Estimate();
    return out;
  }
  out.policy = pick.name;
  out.moved = true;
  return out;
}

void ApplyInSitu(TraceReport& replay, std::shared_ptr<const InSituSummary> in_situ) {
  replay.in_situ = in_situ;
  Verdict& v = replay.verdict;
  if (in_situ->recommended.empty()) return;
  v.replay_recommended = v.recommended;
  v.recommended = in_situ->recommended;
  v.adopt = in_situ->adopt;
}

}  // namespace alloctrace
