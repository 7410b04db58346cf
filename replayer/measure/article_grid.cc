// The article grid's entry into the replay's set (article_grid.h): the
// grid by storage kind, the race's way and the screen's, and the note of
// what the default set left out.
#include "alloctrace/replayer/measure/article_grid.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace::measure_internal {
namespace {

// The article policies the default set left out of a trace, counted by
// reason, for the trace's note (GridLeftOutNote): a row each would bury
// the table under dozens of rows that say the same.
struct GridLeftOut {
  int per_arena = 0;    // PoolPerArenaReason
  int locked_twin = 0;  // LockedTwinReason
  int stack_twin = 0;   // StackTwinReason
  int other = 0;        // not thread-safe on the trace, library missing
};

// The article policies of storage `kind` that may serve the trace; those
// left out are counted in *left_out.
std::vector<Entry> ArticleGrid(const std::string& kind, const PolicyInfos& policies,
                               const ReplayProgram& program, GridLeftOut* left_out) {
  std::vector<Entry> grid;
  absl::StatusOr<std::vector<std::string>> names =
      allocators::SelectAllocators(absl::StrCat("pool/", kind, "/*"));
  if (!names.ok()) return grid;
  for (const std::string& name : *names) {
    Entry e = MakeEntry(policies, name, name, program, /*default_set=*/true);
    switch (e.skip) {
      case Skip::kNone:
        grid.push_back(std::move(e));
        break;
      case Skip::kPoolPerArena:
        ++left_out->per_arena;
        break;
      case Skip::kLockedTwin:
        ++left_out->locked_twin;
        break;
      case Skip::kStackTwin:
        ++left_out->stack_twin;
        break;
      case Skip::kOther:
        ++left_out->other;
        break;
    }
  }
  return grid;
}

// What the default set left out of the article grid, and why, as the
// trace's note ("" if nothing).
std::string GridLeftOutNote(const GridLeftOut& g) {
  std::vector<std::string> parts;
  if (g.per_arena > 0) {
    parts.push_back(absl::StrCat(
        g.per_arena,
        " that keep a pool per arena (the stack holding: most of the trace's arenas hold one "
        "block, so their pools alone call glibc malloc as often as glibc malloc is called)"));
  }
  if (g.locked_twin > 0) {
    parts.push_back(absl::StrCat(g.locked_twin,
                                 " thread-safe ones (mt: the trace was recorded on one thread, "
                                 "where each is its st twin plus a lock, never faster)"));
  }
  if (g.stack_twin > 0) {
    parts.push_back(absl::StrCat(g.stack_twin,
                                 " that keep a pool per arena (stack: the trace's blocks all live "
                                 "in one arena, where each is the same replay as its single twin, "
                                 "which runs)"));
  }
  if (g.other > 0) {
    parts.push_back(absl::StrCat(g.other, " that may not serve the trace"));
  }
  if (parts.empty()) return "";
  return absl::StrCat("the default set leaves out ", absl::StrJoin(parts, " and "),
                      " of the article's policies; --policies=NAME (or a glob, e.g. "
                      "'pool/*') runs them");
}

// With the race: the article grid enters it like any other policy.
void AddArticleGridToRace(std::vector<Entry>& entries, const PolicyInfos& policies,
                          const ReplayProgram& program, GridLeftOut* left_out) {
  for (const std::string& kind : allocators::ArticleStorageKinds()) {
    std::vector<Entry> grid = ArticleGrid(kind, policies, program, left_out);
    const int size = static_cast<int>(grid.size());
    for (Entry& e : grid) {
      if (Has(entries, e.policy)) continue;
      e.runs.note =
          absl::StrFormat("one of the %d %s-storage article policies in the race", size, kind);
      e.runs.screen_kind = kind;
      entries.push_back(std::move(e));
    }
  }
}

// Without the race: the fastest article policy of each storage kind in a
// screen of s.screen_runs shuffled rounds joins the set; a policy that
// fails in the screen joins it as failed (never hidden).
void ScreenArticleGrid(std::vector<Entry>& entries, const PolicyInfos& policies,
                       const ReplayProgram& program, const MeasureSettings& s,
                       const Ranking& ranking, const RunnerFor& runner_for, GridLeftOut* left_out) {
  // The screen's order has a sequence of its own; the rounds draw theirs
  // from the seed itself.
  std::mt19937_64 rng(s.rounds.seed ^ 0x73637265656eULL);
  for (const std::string& kind : allocators::ArticleStorageKinds()) {
    std::vector<Entry> screened = ArticleGrid(kind, policies, program, left_out);
    if (screened.empty()) continue;
    std::unique_ptr<ContenderRunner> runner = runner_for(screened);
    std::vector<size_t> order(screened.size());
    for (int round = 0; round < s.screen_runs; ++round) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i : order) {
        if (screened[i].runs.failed == 0) runner->Run(i, -1 - round, s.rounds.limits, false);
      }
    }
    size_t best = screened.size();
    double best_ns = 0;
    for (size_t i = 0; i < screened.size(); ++i) {
      Entry& e = screened[i];
      if (e.runs.failed > 0) {
        e.runs.note = "failed in the screen of the article grid";
        e.runs.stop = Stop::kFailed;
        e.runs.stop_reason = "failed";
        e.runs.runs.clear();
        entries.push_back(std::move(e));
        continue;
      }
      const double ns = Median(RankFigures(e.runs, ranking));
      if (best == screened.size() || ns < best_ns) {
        best = i;
        best_ns = ns;
      }
    }
    if (best == screened.size()) continue;
    Entry e = MakeEntry(policies, screened[best].policy, screened[best].policy, program);
    e.runs.note =
        absl::StrFormat("the fastest of the %d %s-storage article policies in a %d-run screen",
                        static_cast<int>(screened.size()), kind, s.screen_runs);
    e.runs.screen_kind = kind;
    entries.push_back(std::move(e));
  }
}

}  // namespace

void EnterArticleGrid(std::vector<Entry>& entries, const PolicyInfos& policies,
                      const ReplayProgram& program, const MeasureSettings& s,
                      const Ranking& ranking, const RunnerFor& runner_for, TraceFacts* trace) {
  GridLeftOut left_out;
  if (s.rounds.race) {
    AddArticleGridToRace(entries, policies, program, &left_out);
  } else {
    ScreenArticleGrid(entries, policies, program, s, ranking, runner_for, &left_out);
  }
  if (std::string note = GridLeftOutNote(left_out); !note.empty()) {
    trace->left_out_notes.push_back(std::move(note));
  }
}

}  // namespace alloctrace::measure_internal
