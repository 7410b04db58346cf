// The trace's notes (words.h: TraceNotes): what a reader of any format
// should know about how the trace was replayed and where its figures stop.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "alloctrace/replayer/reports/words.h"

namespace alloctrace {

std::string OneHeapNote(const TraceReport& t) {
  if (t.no_memory_ops() || t.trace.arena_events != 0) return "";
  // In the program each container of a per-container pool (stack holding)
  // has its own pool; the replay has only the one arena to give it.
  return "one arena: the trace cannot tell containers apart (every allocation is from one "
         "heap), so a policy holding a pool per container (stack) gets one pool here, shared "
         "by all";
}

std::string ProcessCostNote(const TraceReport& t) {
  std::vector<std::string> costs;
  for (const PolicyResult& p : t.policies) {
    if (p.process_seconds == 0 || !p.ok() || t.no_memory_ops()) continue;
    costs.push_back(
        absl::StrFormat("%s %.1f ms (%+.1f ns/op)", p.name, 1e3 * p.process_seconds,
                        1e9 * p.process_seconds / static_cast<double>(t.trace.memory_ops)));
  }
  if (costs.empty()) return "";
  return absl::StrCat(
      "each malloc's cold figure counts, once over the trace's memory ops, the CPU time its "
      "library adds to starting and ending a process (the replayer started with it preloaded "
      "and without, paired): ",
      absl::StrJoin(costs, ", "),
      "; a trace of a part of a longer run does not pay it: --process_cost=false");
}

std::string CollectorNote(const TraceReport& t) {
  if (t.trace.collector.empty() || t.no_memory_ops()) return "";
  const std::string who = t.trace.collector == "cpython"
                              ? "CPython's cyclic garbage collector"
                              : absl::StrCat("a garbage collector (", t.trace.collector, ")");
  const std::string ran = absl::StrCat(
      "the trace's program ran ", who,
      " over its malloc blocks (the header's collector label), which reads the live objects at "
      "each collection, and where a malloc puts them speeds or slows those reads");
  if (!t.walked()) {
    std::string why;
    if (!t.auto_touch) {
      why = absl::StrCat("--touch=", WordOf(kTouchWords, t.touch),
                         " does not (--touch=auto or walk makes them)");
    } else if (t.replay_threads > 1) {
      why =
          "a replay per thread (--threads=each) does not: a walk replays on one thread "
          "(--threads=auto or one makes them)";
    } else if (t.sampling.windowed) {
      why =
          "a replay in sampled windows (--windows=always) does not: a walk replays whole "
          "runs (--windows=auto or never makes them)";
    } else {
      why = "this replay does not";
    }
    return absl::StrCat(ran, "; ", why);
  }
  return absl::StrCat(ran,
                      "; the replay makes them (--touch=walk): the live blocks read in "
                      "allocation order a generation at a time; --touch=program replays the "
                      "calls alone");
}

std::string PerThreadNote(const TraceReport& t) {
  if (t.replay_threads <= 1 && t.trace.threads > 1) {
    return absl::StrCat(
        "recorded on ", t.trace.threads,
        " threads, replayed on one thread in the recorded order: no two threads contend",
        t.walked() ? (t.auto_touch ? "; the walk (--touch=auto on this trace) replays on one "
                                     "thread, and --threads=each replays it per thread without it"
                                   : "; a walk (--touch=walk) replays on one thread")
        : t.trace.arena_events == 0
            ? "; the trace has no container arenas, so only a malloc can be adopted, and on "
              "such traces a one-thread replay ranked the mallocs as the program did more often "
              "than a per-thread one (docs/fidelity.md); --threads=each replays it per thread"
            : "; --threads=auto replays it per thread");
  }
  if (t.replay_threads <= 1) return "";
  return absl::StrCat(
      "replayed per thread: ", t.replay_threads, " threads run concurrently, ordered only at ",
      t.sync_points, " sync points (", t.cross_thread_frees, " cross-thread frees); ranked by ",
      ClockWords(t.clock),
      t.clock == TimingClock::kWall
          ? " of the concurrent section, what the program would feel"
          : " of the threads without their waits, the allocator's work however the threads "
            "share the cores",
      "; waits are timed apart and not charged to the allocators' CPU time");
}

namespace {

// Policies still in the race that the total budget stopped before the
// precision (rounds.h: "total budget of N s spent (--total_budget)").
std::string TotalBudgetNote(const TraceReport& t) {
  std::vector<std::string> cut;
  for (const PolicyResult& p : t.policies) {
    if (StoppedByTotalBudget(p)) {
      cut.push_back(p.name);
    }
  }
  if (cut.empty()) return "";
  constexpr size_t kNamed = 4;  // a long list would bury the note
  const size_t total = cut.size();
  std::string names = absl::StrJoin(cut.begin(), cut.begin() + std::min(kNamed, total), ", ");
  if (total > kNamed) absl::StrAppend(&names, " and ", total - kNamed, " more");
  std::string more = "--total_budget=SECONDS gives them more";
  if (t.budget_for_precision > kReachableBudgetSeconds) {
    absl::StrAppendFormat(&more,
                          "; at these rounds' pace and spread the precision is not reachable on "
                          "this machine in a run anyone would wait for (about %.0f hours)",
                          std::ceil(t.budget_for_precision / 3600));
  } else if (t.budget_for_precision > 0) {
    // Two significant figures: an estimate, not a measurement.
    const double seconds = t.budget_for_precision;
    const double step = seconds < 100 ? 1 : seconds < 1000 ? 10 : 100;
    absl::StrAppendFormat(&more,
                          "; at these rounds' pace and spread, about --total_budget=%.0f would "
                          "bring them to it, the intervals narrowing as the square root of the "
                          "runs",
                          std::ceil(seconds / step) * step);
  }
  return absl::StrCat("the total budget ran out before ", total,
                      total == 1 ? " policy" : " policies", " still in the race (", names,
                      ") reached the precision: their intervals are wider than asked, and "
                      "a tie among them may only mean too few runs (",
                      more, ")");
}

}  // namespace

std::vector<std::string> TraceNotes(const TraceReport& t) {
  std::vector<std::string> notes;
  if (std::string note = TotalBudgetNote(t); !note.empty()) notes.push_back(std::move(note));
  if (std::string note = OneHeapNote(t); !note.empty()) notes.push_back(std::move(note));
  if (!t.trace.arena_sharing.empty()) {
    notes.push_back(absl::StrCat(t.trace.arena_sharing,
                                 ": policies that are not thread-safe are not run, never "
                                 "recommended"));
  }
  if (!t.trace.arena_shape.empty()) notes.push_back(t.trace.arena_shape);
  for (const std::string& note : t.trace.class_table_notes) notes.push_back(note);
  for (const std::string& note : t.trace.left_out_notes) notes.push_back(note);
  if (std::string note = CollectorNote(t); !note.empty()) notes.push_back(std::move(note));
  if (std::string note = PerThreadNote(t); !note.empty()) notes.push_back(std::move(note));
  if (std::string note = ProcessCostNote(t); !note.empty()) notes.push_back(std::move(note));
  return notes;
}

}  // namespace alloctrace
