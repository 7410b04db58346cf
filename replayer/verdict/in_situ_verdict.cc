#include "alloctrace/replayer/verdict/in_situ_verdict.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

Estimate PairedSlowdown(const InSituPolicy& a, const InSituPolicy& b, TimingClock clock) {
  return PairedRatio(FiguresByRound(b, clock), FiguresByRound(a, clock));
}

namespace {

// The replay's FastestTiedGroup over `members` (indexes into s.policies, all
// ok): paired by round, the reference std or malloc. No noise floor is
// measured in situ (no second reference run set), so the margin is 0: a tie
// is a paired ratio whose 95% CI includes 1 (or fewer than 3 paired rounds).
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

std::vector<size_t> InSituTiedGroup(const InSituSummary& s, const std::vector<size_t>& members) {
  std::vector<size_t> group;
  for (size_t k : FastestTiedGroup(InSituSpeedFigures(s, members), /*noise_margin=*/0)) {
    group.push_back(members[k]);
  }
  return group;
}

}  // namespace

std::string InSituNameOf(const std::string& replay_name, const std::string& reference) {
  return replay_name == "malloc" || replay_name == "new" ? reference : replay_name;
}

namespace {

// The policies with runs, their fastest tied group (marked), the smallest
// peak RSS, and the group the recommendation is made from.
struct Groups {
  std::vector<size_t> ok, fastest, within_slack, recommendable;
  size_t smallest = InSituDecision::kNone;
  RecommendableGroup rule;  // indexes into within_slack
};

Groups GroupsOf(InSituSummary& s) {
  Groups g;
  for (size_t i = 0; i < s.policies.size(); ++i) {
    if (s.policies[i].ok()) g.ok.push_back(i);
  }
  if (g.ok.empty()) return g;
  g.fastest = InSituTiedGroup(s, g.ok);
  g.smallest = g.ok[0];
  for (size_t i : g.ok) {
    if (s.policies[i].peak_rss_bytes.median < s.policies[g.smallest].peak_rss_bytes.median) {
      g.smallest = i;
    }
  }
  const double smallest = s.policies[g.smallest].peak_rss_bytes.median;
  for (size_t i : g.ok) {
    if (WithinRssSlack(s.policies[i].peak_rss_bytes.median, smallest, s.rss_slack)) {
      g.within_slack.push_back(i);
    }
  }
  // The replay's group rule, the never-freeing margin with it (summary.h).
  g.rule = FastestRecommendable(InSituSpeedFigures(s, g.within_slack), /*noise_margin=*/0);
  for (size_t k : g.rule.members) g.recommendable.push_back(g.within_slack[k]);
  if (g.recommendable.empty()) g.recommendable = g.within_slack;  // not reached: all have figures
  return g;
}

// How the replay's pick fared against the recommendation `d` made.
void JudgePick(InSituSummary& s, const Groups& g, InSituDecision& d) {
  using Outcome = InSituDecision::Outcome;
  const InSituPolicy* pick = FindInSitu(s, s.replay_pick);
  if (pick == nullptr || !pick->ok()) {
    if (pick != nullptr) d.pick = static_cast<size_t>(pick - s.policies.data());
    d.outcome = Outcome::kPickNotRun;
    s.replay_pick_held = false;
    return;
  }
  d.pick = static_cast<size_t>(pick - s.policies.data());
  const InSituPolicy& rec = s.policies[d.recommended];
  // Held: the pick is in the group the recommendation is made from.
  s.replay_pick_held =
      std::find(g.recommendable.begin(), g.recommendable.end(), d.pick) != g.recommendable.end();
  s.pick_vs_best = PairedSlowdown(rec, *pick, s.clock);
  d.pick_vs_fastest = PairedSlowdown(s.policies[d.fastest], *pick, s.clock);
  if (d.pick == d.recommended) {
    d.outcome = Outcome::kPickIsBest;
  } else if (s.replay_pick_held) {
    d.outcome = Outcome::kPickTied;
  } else if (std::find(g.within_slack.begin(), g.within_slack.end(), d.pick) ==
             g.within_slack.end()) {
    d.outcome = Outcome::kPickOverSlack;  // left out for its memory, whatever its speed
  } else {
    // Within the slack but not tied with its fastest: slower than it. Held
    // against the recommended policy, or the fastest if the recommended one
    // (picked for its memory from the tied group) is not faster than the pick.
    d.outcome = Outcome::kPickSlower;
    d.winner = s.pick_vs_best.median > 1 ? d.recommended : d.best;
    d.pick_vs_winner = PairedSlowdown(s.policies[d.winner], *pick, s.clock);
  }
}

}  // namespace

void DecideInSitu(InSituSummary& s, const std::string& replay_pick, double rss_slack) {
  using Outcome = InSituDecision::Outcome;
  InSituDecision& d = s.decision;
  d = InSituDecision();
  s.rss_slack = rss_slack;
  s.replay_pick = replay_pick.empty() ? "" : InSituNameOf(replay_pick, s.reference);
  const Groups g = GroupsOf(s);
  if (g.ok.empty()) return;  // kNothingRan
  for (size_t i : g.fastest) {
    s.policies[i].tied_fastest = true;
    s.fastest.push_back(s.policies[i].name);
  }
  d.fastest = g.fastest[0];
  d.smallest = g.smallest;
  d.best = g.recommendable[0];  // the fastest within the slack
  d.fastest_over_slack =
      std::find(g.within_slack.begin(), g.within_slack.end(), d.fastest) == g.within_slack.end();
  if (g.rule.passed_over) {
    d.passed_over = g.within_slack[*g.rule.passed_over];
    d.passed_over_edge = g.rule.edge;
  }
  // The replay's pick, when the program cannot tell it from the best (tied,
  // its peak RSS within a page or 2%), stands; else the replay's order.
  std::vector<GroupMember> members;
  for (size_t i : g.recommendable) {
    const InSituPolicy& p = s.policies[i];
    members.push_back(
        {p.name, p.peak_rss_bytes.median, RecommendationPreference(p.name, p.family)});
  }
  d.recommended = g.recommendable[PickFromGroup(members, s.replay_pick)];
  s.recommended = s.policies[d.recommended].name;
  s.adopt = s.policies[d.recommended].adopt;
  if (s.replay_pick.empty()) {
    d.outcome = Outcome::kRecommended;
    return;
  }
  JudgePick(s, g, d);
}

std::vector<std::string> ConfirmCandidates(const TraceReport& replay, int n) {
  std::vector<std::string> names;
  for (const PolicyResult& p : replay.policies) {
    if (static_cast<int>(names.size()) >= n) break;
    if (p.ok() && p.name != "bump") names.push_back(p.name);
  }
  const std::string& pick = replay.verdict.recommended;
  if (!pick.empty() && std::find(names.begin(), names.end(), pick) == names.end()) {
    names.push_back(pick);
  }
  return names;
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
