// The recommendation (summary.h: Recommend, step 4 of Summarize) and what
// decides it besides the figures: which policies are contenders and whose
// peak RSS can be compared, the preference and fixed order among equals.
// Apart from summary.cc, which computes each policy's figures and the
// ties, so each file keeps one job.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/verdict/choice.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

// bump never frees (it is the harness floor); an eliminated policy was shown
// slower than the race's leader, so, as the article policies a screen left
// out, it neither joins the fastest group nor sets the smallest peak RSS
// the recommendation is held to (its row keeps its figures).
// A screened-out article policy is not one either (ScreenArticlePolicies).
bool IsContender(const PolicyResult& p) {
  return p.ok() && p.role != Role::kFloor && !p.eliminated && !p.screened_out;
}

// A windowed measurement takes peak RSS from whole runs of the policies
// left at the end, the cheapest (the fastest) first while its reserve
// lasts; a policy it had no time for has only its windows' peaks, which a
// whole run's cannot be compared with (a window rebuilds its heap: the
// 11 M-op trace's tcmalloc peaked at 4.9 MiB in windows, 0.86 MiB whole).
// Where some contender ran whole, the memory rule weighs only those that
// did: the others are neither the smallest nor recommended.
bool AnyContenderRanWhole(const TraceReport& t) {
  for (const PolicyResult& p : t.policies) {
    if (IsContender(p) && p.whole_runs > 0) return true;
  }
  return false;
}

bool RssComparable(const PolicyResult& p, bool any_whole) {
  return IsContender(p) && (!any_whole || p.whole_runs > 0);
}

int RecommendationPreference(const std::string& name, allocators::Family family) {
  if (name == "malloc" || name == "std") return 0;  // nothing to change
  switch (family) {
    case allocators::Family::kOurs:
      return 1;
    case allocators::Family::kExternal:
      return 2;
    case allocators::Family::kBaseline:
      return 3;
    case allocators::Family::kArticle:
      break;
  }
  return 4;  // the article's grid
}

int RecommendationPreference(const PolicyResult& p) {
  return RecommendationPreference(p.name, p.family);
}

int FixedOrder(const std::string& name, allocators::Family family) {
  int place = 99;
  auto find = [&](const auto& list) {
    for (size_t i = 0; i < std::size(list); ++i) {
      if (name == list[i]) place = static_cast<int>(i);
    }
  };
  find(kOurPoolsInOrder);
  find(kExternalMallocsInOrder);
  return 100 * RecommendationPreference(name, family) + place;
}

namespace {

// "slab/st/single" for "slab/st/stack" ("pool/.../stack/free" likewise):
// the same policy held in one pool per process; "" for any other name.
std::string SingleTwin(const std::string& name) {
  const size_t at = name.find("/stack");
  if (at == std::string::npos) return "";
  const size_t end = at + 6;
  if (end != name.size() && name[end] != '/') return "";
  return absl::StrCat(name.substr(0, at), "/single", name.substr(end));
}

// What a program adopts without touching its code: glibc malloc, or a
// malloc by preload or link.
bool AdoptableUnchanged(const PolicyResult& p) {
  return p.name == "malloc" || p.family == allocators::Family::kExternal;
}

bool AnyPolicy(const PolicyResult&) { return true; }

struct Pick {
  const PolicyResult* rec = nullptr;  // null: nothing to recommend
  Choice choice;
  std::vector<size_t> cand;  // indexes into t.policies; choice's indexes are into it
  const PolicyResult& At(size_t k, const TraceReport& t) const { return t.policies[cand[k]]; }
};

// The choice (choice.h) among the contenders `allowed` admits whose peak
// RSS can be compared (AnyContenderRanWhole).
Pick PickAmong(const TraceReport& t, const ReportContext& ctx,
               bool (*allowed)(const PolicyResult&)) {
  Pick out;
  const bool any_whole = AnyContenderRanWhole(t);
  for (size_t i = 0; i < t.policies.size(); ++i) {
    if (RssComparable(t.policies[i], any_whole) && allowed(t.policies[i])) out.cand.push_back(i);
  }
  const std::vector<SpeedFigures> speed =
      ReplaySpeedFigures(t.policies, out.cand, ctx.RankingFor(t.clock));
  std::vector<ChoiceCandidate> candidates;
  for (size_t k = 0; k < out.cand.size(); ++k) {
    const PolicyResult& p = t.policies[out.cand[k]];
    candidates.push_back({p.name, speed[k], p.peak_rss.median, true, FixedOrder(p.name, p.family)});
  }
  out.choice = Choose(candidates, NoiseMargin(t.noise_floor), ctx.rss_slack);
  if (out.choice.pick == Choice::kNone) return out;
  out.rec = &out.At(out.choice.pick, t);
  // On a trace whose blocks all live in one arena, a pool per container
  // (stack) and one per process (single) are the same replay: the pick
  // between them is this rule, never the noise.
  if (t.trace.arenas_used <= 1) {
    if (const std::string single = SingleTwin(out.rec->name); !single.empty()) {
      for (const PolicyResult& p : t.policies) {
        if (p.name == single && RssComparable(p, any_whole)) out.rec = &p;
      }
    }
  }
  return out;
}

}  // namespace

void Recommend(TraceReport* t, const ReportContext& ctx) {
  Verdict& v = t->verdict;
  // A trace with no container arenas (a whole program captured, or nothing
  // but the global heap) can adopt a pool only by rewriting its containers:
  // the recommendation is among what it adopts unchanged, and the best of
  // all a separate line.
  const bool unchanged_only = t->trace.arena_events == 0;
  const Pick pick = PickAmong(*t, ctx, unchanged_only ? AdoptableUnchanged : AnyPolicy);
  if (pick.rec == nullptr) return;
  const Choice& c = pick.choice;
  v.recommended = pick.rec->name;
  v.adopt = pick.rec->adopt;
  v.equivalence_margin = c.margin;
  for (size_t k : c.equivalent) v.equivalent.push_back(pick.At(k, *t).name);
  if (c.fastest != c.pick) {
    v.faster = pick.At(c.fastest, *t).name;
    v.pick_vs_faster = c.pick_vs_fastest;
  }
  if (c.memory_passed_over != Choice::kNone) {
    v.memory_passed_over = pick.At(c.memory_passed_over, *t).name;
  }
  if (c.never_frees_passed_over != Choice::kNone) {
    v.passed_over_name = pick.At(c.never_frees_passed_over, *t).name;
    v.passed_over_kept = pick.At(c.pick, *t).name;
    v.passed_over_edge = c.never_frees_edge;
  }
  if (unchanged_only) {
    const Pick any = PickAmong(*t, ctx, AnyPolicy);
    if (any.rec != nullptr && any.rec != pick.rec) {
      v.if_instrumented = any.rec->name;
      v.if_instrumented_vs_malloc = any.rec->vs_malloc;
    }
  }
}

}  // namespace alloctrace
