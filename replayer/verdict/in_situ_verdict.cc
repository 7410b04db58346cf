#include "alloctrace/replayer/verdict/in_situ_verdict.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {
namespace {

const InSituPolicy* Find(const InSituSummary& s, const std::string& name) {
  for (const InSituPolicy& p : s.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// p's ranked figure (`clock`) per round.
std::map<int, double> FiguresByRound(const InSituPolicy& p, TimingClock clock) {
  std::map<int, double> by_round;
  for (const InSituRun& r : p.runs)
    by_round[r.round] = clock == TimingClock::kWall ? r.wall_s : r.cpu_s;
  return by_round;
}

// b's time over a's by `clock`, paired by round (>1: a is faster).
Estimate PairedSlowdown(const InSituPolicy& a, const InSituPolicy& b, TimingClock clock) {
  return PairedRatio(FiguresByRound(b, clock), FiguresByRound(a, clock));
}

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

std::string TimeWords(TimingClock clock) {
  return clock == TimingClock::kWall ? "wall time" : "CPU time (user + system)";
}

std::string Times(const Estimate& e) {
  if (!e.has_data()) return "-";
  return absl::StrFormat("%.2fx [%.2f, %.2f]", e.median, e.lo, e.hi);
}

}  // namespace

std::string InSituNameOf(const std::string& replay_name, const std::string& reference) {
  return replay_name == "malloc" || replay_name == "new" ? reference : replay_name;
}

void DecideInSitu(InSituSummary& s, const std::string& replay_pick, double rss_slack) {
  std::vector<size_t> ok;
  for (size_t i = 0; i < s.policies.size(); ++i) {
    if (s.policies[i].ok()) ok.push_back(i);
  }
  s.rule = absl::StrCat("in situ: the fastest policy (median ", TimeWords(s.clock),
                        " of the program) among those whose median peak RSS is ",
                        RssSlackWords(rss_slack),
                        "; of the policies tied with it (the 95% CI of the ratio paired by "
                        "round includes 1; no noise floor is measured in situ), the replay's "
                        "pick if its peak RSS is within a page or 2% of the smallest, else the "
                        "one with the smallest peak RSS (within a page or 2%), preferring the "
                        "reference, then our pools, the mallocs, the baselines and the "
                        "article's grid; a policy that never frees its blocks is "
                        "recommended over the fastest that frees only when shown more than ",
                        static_cast<int>(std::lround(100 * kNeverFreesMargin)), "% faster");
  s.replay_pick = replay_pick.empty() ? "" : InSituNameOf(replay_pick, s.reference);
  if (ok.empty()) {
    s.sentence = absl::StrCat("In situ, no policy completed its runs of ",
                              s.argv.empty() ? "the program" : s.argv[0],
                              ": nothing can be "
                              "ranked (see the FAILED rows and ",
                              s.log_path, ").");
    return;
  }
  const std::vector<size_t> fastest = InSituTiedGroup(s, ok);
  for (size_t i : fastest) {
    s.policies[i].tied_fastest = true;
    s.fastest.push_back(s.policies[i].name);
  }
  size_t smallest_i = ok[0];
  for (size_t i : ok) {
    if (s.policies[i].peak_rss_bytes.median < s.policies[smallest_i].peak_rss_bytes.median) {
      smallest_i = i;
    }
  }
  const double smallest = s.policies[smallest_i].peak_rss_bytes.median;
  auto within_slack = [&](const InSituPolicy& p) {
    return WithinRssSlack(p.peak_rss_bytes.median, smallest, rss_slack);
  };
  std::vector<size_t> cand;
  for (size_t i : ok) {
    if (within_slack(s.policies[i])) cand.push_back(i);
  }
  // The replay's group rule, the never-freeing margin with it (summary.h).
  const RecommendableGroup recommendable =
      FastestRecommendable(InSituSpeedFigures(s, cand), /*noise_margin=*/0);
  std::vector<size_t> group;
  for (size_t k : recommendable.members) group.push_back(cand[k]);
  if (group.empty()) group = cand;  // every ok policy has a figure: not reached
  if (recommendable.passed_over) {
    s.passed_over = NeverFreesWords(s.policies[cand[*recommendable.passed_over]].name,
                                    s.policies[group[0]].name, recommendable.edge);
  }
  const InSituPolicy& best = s.policies[group[0]];  // the fastest within the slack
  // The replay's pick, when the program cannot tell it from the best (tied,
  // its peak RSS within a page or 2%), stands; else the replay's order.
  std::vector<GroupMember> members;
  for (size_t i : group) {
    const InSituPolicy& p = s.policies[i];
    members.push_back(
        {p.name, p.peak_rss_bytes.median, RecommendationPreference(p.name, p.family)});
  }
  const InSituPolicy& rec = s.policies[group[PickFromGroup(members, s.replay_pick)]];
  s.recommended = rec.name;
  s.adopt = rec.adopt;
  auto speed = [&](const InSituPolicy& p) {
    return p.reference
               ? std::string("the reference")
               : absl::StrCat(Times(p.vs_reference), " the reference ", s.reference, "'s speed");
  };
  const std::string rec_speed = speed(rec);
  // What the speed alone says of p: fastest, tied with the fastest, or slower.
  const InSituPolicy& first = s.policies[fastest[0]];
  auto standing = [&](const InSituPolicy& p) {
    if (&p == &first) return absl::StrCat("is fastest, ", speed(p));
    if (p.tied_fastest) {
      return absl::StrCat("is tied with the fastest, ", first.name, ", ", speed(p));
    }
    return absl::StrCat("is slower than the fastest, ", first.name, " (",
                        Times(PairedSlowdown(first, p, s.clock)), " its ", TimeWords(s.clock),
                        "), ", speed(p));
  };
  auto over_slack = [&](const InSituPolicy& p) {
    return absl::StrCat("peak RSS (", Mib(p.peak_rss_bytes.median),
                        ") is over the slack of the smallest (", s.policies[smallest_i].name, "'s ",
                        Mib(smallest), ")");
  };
  // The fastest, if its memory left it out (said where the pick is another).
  const std::string first_left_out =
      within_slack(first) ? ""
                          : absl::StrCat(" ", first.name, ", the fastest (", speed(first),
                                         "), is left out: its ", over_slack(first), ".");
  // What else the rule left out: a faster policy that never frees.
  const std::string aside =
      s.passed_over.empty()
          ? first_left_out
          : absl::StrCat(first_left_out, " Not recommended: ", s.passed_over, ".");
  if (s.replay_pick.empty()) {
    s.sentence = absl::StrCat("In situ, ", rec.name, " is recommended: ", rec_speed, ", ",
                              Mib(rec.peak_rss_bytes.median), " peak RSS.", aside);
    return;
  }
  const InSituPolicy* pick = Find(s, s.replay_pick);
  if (pick == nullptr || !pick->ok()) {
    s.replay_pick_held = false;
    s.sentence = absl::StrCat("The replay picked ", s.replay_pick, ", which did not run in situ (",
                              pick == nullptr ? "not a candidate" : pick->failure, "); in situ ",
                              rec.name, " is recommended, ", rec_speed, ".", aside);
    return;
  }
  // Held: the pick is in the group the recommendation is made from.
  s.replay_pick_held =
      std::any_of(group.begin(), group.end(), [&](size_t i) { return &s.policies[i] == pick; });
  s.pick_vs_best = PairedSlowdown(rec, *pick, s.clock);
  if (pick == &rec) {
    const bool fast = pick == &first || pick->tied_fastest;
    s.sentence = absl::StrCat("Replay picked ", pick->name, "; in situ ", pick->name, " ",
                              fast ? standing(*pick) : absl::StrCat("is recommended, ", rec_speed),
                              ".", aside, " The pick held.");
  } else if (s.replay_pick_held) {
    s.sentence = absl::StrCat("Replay picked ", pick->name, "; in situ it is tied with ", rec.name,
                              " (", Times(s.pick_vs_best), " its ", TimeWords(s.clock),
                              "). The pick "
                              "held; recommended: ",
                              rec.name, ", the smaller peak RSS.", aside);
  } else if (!within_slack(*pick)) {
    // Left out for its memory, whatever its speed: say both.
    s.sentence = absl::StrCat(
        "Replay picked ", pick->name, "; in situ ", pick->name, " ", standing(*pick), ", but its ",
        over_slack(*pick), ": ", rec.name, " is recommended, ", rec_speed, ", ",
        Mib(rec.peak_rss_bytes.median), " peak RSS. ",
        pick->tied_fastest ? "The pick held on speed, not on memory." : "The pick did not hold.",
        aside);
  } else {
    // Within the slack but not tied with its fastest: slower than it. Said
    // against the recommended policy, or the fastest if the recommended one
    // (picked for its memory from the tied group) is not faster than the pick.
    const InSituPolicy& winner = s.pick_vs_best.median > 1 ? rec : best;
    const Estimate e = &winner == &rec ? s.pick_vs_best : PairedSlowdown(winner, *pick, s.clock);
    const std::string recommended =
        &winner == &rec ? absl::StrCat(rec.name, ": ", rec_speed)
                        : absl::StrCat("recommended: ", rec.name, ", tied with ", winner.name,
                                       rec.peak_rss_bytes.median < winner.peak_rss_bytes.median
                                           ? " and of smaller peak RSS, "
                                           : " and preferred by the rule, ",
                                       rec_speed);
    if (e.has_data() && e.median > 1) {
      s.sentence = absl::StrCat("In situ ", winner.name, " beats the replay's pick ", pick->name,
                                absl::StrFormat(" by %.0f%% [%.0f, %.0f]", 100 * (e.median - 1),
                                                100 * (e.lo - 1), 100 * (e.hi - 1)),
                                " (", TimeWords(s.clock), " of the program); ", recommended,
                                ". The pick did not hold.", aside);
    } else {
      s.sentence =
          absl::StrCat("Replay picked ", pick->name, "; in situ ", pick->name, " is not tied with ",
                       winner.name, " (", Times(PairedSlowdown(winner, *pick, s.clock)), " its ",
                       TimeWords(s.clock), "); ", recommended, ". The pick did not hold.", aside);
    }
  }
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
  v.sentence = absl::StrCat(in_situ->sentence, " (The replay alone: ", v.sentence, ")");
  v.recommended = in_situ->recommended;
  v.adopt = in_situ->adopt;
  v.rule = in_situ->rule;
}

}  // namespace alloctrace
