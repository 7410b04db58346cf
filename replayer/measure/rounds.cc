// The rounds core (rounds.h): the rounds in their order, the reference in
// every round, the race's looks, the budgets and their stretching; the
// stopping rule per contender is stopping_rule.cc.
#include "alloctrace/replayer/measure/rounds.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/replayer/measure/race.h"
#include "alloctrace/replayer/measure/stats.h"

namespace alloctrace {
namespace {

// Records `o`, the outcome of a run of `c` in `round`.
void Record(Contender& c, const RunOutcome& o, int round) {
  ++c.attempts;
  c.spent += o.seconds;
  switch (o.end) {
    case RunOutcome::End::kKept:
      ++c.kept;
      c.run_seconds.push_back(o.run_seconds > 0 ? o.run_seconds : o.seconds);
      if (o.figure > 0) c.figures[round] = o.figure;
      break;
    case RunOutcome::End::kFailed:
      ++c.failed;
      c.fatal |= o.fatal;
      if (c.first_error.empty()) c.first_error = absl::StrCat("run ", c.attempts, ": ", o.error);
      break;
    case RunOutcome::End::kStopped:
      break;
  }
}

// The state of one measurement while it runs.
class Rounds {
 public:
  Rounds(std::vector<Contender>& cs, ContenderRunner& runner, const RoundsSettings& s)
      : cs_(cs), runner_(runner), s_(s), rng_(s.seed) {
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (cs_[i].role == Role::kReference) ref_ = i;
      if (cs_[i].role == Role::kNoise) noise_ = i;
    }
    for (size_t i = 0; i < cs_.size(); ++i) entrants_ += IsOther(i) && !cs_[i].done;
    result_.total_budget = s.total_budget_seconds;
  }

  RoundsResult Run() {
    started_ = std::chrono::steady_clock::now();
    round_ = s_.first_round;
    while (RunOneRound()) {
    }
    if (!s_.progress_label.empty() && !s_.progress_lines) std::fprintf(stderr, "\r\033[K");
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (!IsNoise(i)) RecheckPrecise(cs_[i], i == ref_ ? nullptr : &cs_[ref_], s_.precision);
    }
    result_.rounds = round_ - s_.first_round;
    return result_;
  }

 private:
  bool IsNoise(size_t i) const { return i == noise_; }
  bool IsOther(size_t i) const { return i != ref_ && i != noise_; }
  bool Bounded() const { return s_.race && s_.total_budget_seconds > 0; }
  int TotalRuns() const {
    int runs = s_.runs_before;
    for (const Contender& c : cs_) runs += c.attempts;
    return runs;
  }
  bool RunsSpent() const {
    return Bounded() && s_.max_total_runs > 0 && TotalRuns() >= s_.max_total_runs;
  }
  // The most the total budget can stretch to: no run, not even the first
  // round's, goes past it (plus kBudgetRunAllowanceSeconds for the run
  // under way), whatever a trace costs per event.
  // Less what is kept for after the rounds (RoundsSettings::kept_seconds).
  double Cap() const {
    return std::max(s_.total_budget_seconds, s_.max_total_budget_seconds - Kept());
  }
  double Kept() const {
    if (!s_.kept_for) return s_.kept_seconds;
    double need = 0;
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (IsNoise(i) || cs_[i].eliminated || cs_[i].failed > 0) continue;
      const double seconds = s_.kept_for(i);
      if (seconds < 0) return s_.kept_seconds;
      need += seconds;
    }
    return std::min(s_.kept_seconds, need);
  }

  // The seconds the measurement has taken: its runs, and with a total
  // budget the replayer's own work between them too (the statistics after
  // each round, a windowed replay's window states), which grows with the
  // rounds: 358 rounds of one policy left on an 11 M-op trace spent some
  // 8 s there, and the command took 56 s for a 47 s cap. A runner whose
  // runs take less wall time than they report (a test's) is read by what
  // it reports.
  double TotalSpent() const {
    double spent = 0;
    for (const Contender& c : cs_) spent += c.spent;
    if (!Bounded()) return spent;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return std::max(spent, elapsed);
  }

  bool OthersActive() const {
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (IsOther(i) && !cs_[i].done) return true;
    }
    return false;
  }

  // The reference runs as long as anyone does, so every run has its pair.
  bool ReferenceActive(bool others_active) const {
    const Contender& r = cs_[ref_];
    return !r.fatal && (others_active || !r.done) && !(r.failed > 0 && r.attempts >= s_.min_runs);
  }

  // Who runs this round, in a shuffled order (the reference first in the
  // race's first round, so the race's time limit knows the pace).
  std::vector<size_t> Order(bool others_active, bool ref_active) {
    const RaceLeaders leaders =
        s_.race ? FindRaceLeaders(cs_) : RaceLeaders{cs_.size(), cs_.size(), cs_.size()};
    std::vector<size_t> order;
    for (size_t i = 0; i < cs_.size(); ++i) {
      const bool leads = i == leaders.fastest || i == leaders.freeing || i == leaders.apart;
      const bool runs =
          i == ref_ || IsNoise(i) ? ref_active : !cs_[i].done || (leads && others_active);
      if (runs) order.push_back(i);
    }
    std::shuffle(order.begin(), order.end(), rng_);
    if (s_.race && round_ == s_.first_round) {
      auto first = std::find(order.begin(), order.end(), ref_);
      if (first != order.end()) std::rotate(order.begin(), first, first + 1);
    }
    return order;
  }

  void RunContender(size_t i) {
    Contender& c = cs_[i];
    ChildLimits limits = s_.limits;
    RaceRunLimit race_limit;
    // The reference and its second run set pair every run: never stopped
    // by the race.
    if (s_.race && !IsNoise(i)) {
      race_limit = RaceTimeLimit(cs_, i, ref_, s_.limits.wall_seconds);
      if (race_limit.seconds > 0) limits.wall_seconds = race_limit.seconds;
    }
    // With a total budget, no run may outlast what is left of its cap.
    double budget_limit = 0;
    if (Bounded()) {
      const double left =
          std::max(kBudgetRunFloorSeconds, Cap() - TotalSpent() + kBudgetRunAllowanceSeconds);
      if (limits.wall_seconds <= 0 || left < limits.wall_seconds) {
        limits.wall_seconds = budget_limit = left;
      }
    }
    if (!s_.progress_label.empty() && !s_.progress_lines) {
      std::fprintf(stderr, "\r\033[K%s: round %d, %s (run %d)", s_.progress_label.c_str(),
                   round_ - s_.first_round + 1, c.name.c_str(), c.attempts + 1);
    }
    const RunOutcome o = runner_.Run(i, round_, limits, race_limit.seconds > 0 || budget_limit > 0);
    Record(c, o, round_);
    if (o.end == RunOutcome::End::kStopped) {
      if (budget_limit > 0) {
        c.done = c.eliminated = true;
        c.stop = Stop::kAtCap;
        c.stop_reason = absl::StrFormat(
            "stopped in round %d at %.1f s: its run would have outlasted the total budget's cap "
            "of %.0f s (%s)",
            round_ - s_.first_round + 1, budget_limit, Cap(), s_.budget_flag);
      } else {
        EliminateStopped(c, race_limit, round_ - s_.first_round);
      }
      stopped_spent_ += c.spent;
    }
  }

  // One round and what follows it; false once the measurement is over.
  bool RunOneRound() {
    const bool others_active = OthersActive();
    const bool ref_active = ReferenceActive(others_active);
    if (!others_active && !ref_active) return false;
    if (s_.stop_without_reference && cs_[ref_].failed > 0) return false;
    bool budget_spent = false;
    std::vector<double> spent_before(cs_.size());
    for (size_t i = 0; i < cs_.size(); ++i) spent_before[i] = cs_[i].spent;
    for (size_t i : Order(others_active, ref_active)) {
      // After the first round, the budget; in it, the cap (so that every
      // contender gets a run unless a trace is too costly for that). The
      // runs, in every round: a limit on their number is one.
      if (Bounded() && (TotalSpent() >= (round_ > s_.first_round ? result_.total_budget : Cap()) ||
                        RunsSpent())) {
        budget_spent = true;
        break;
      }
      RunContender(i);
      if (s_.stop_without_reference && i == ref_ && cs_[ref_].failed > 0) break;
    }
    ++round_;
    if (round_ == s_.first_round + 1 && Bounded()) Stretch();
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (!IsNoise(i)) UpdateDone(cs_[i], i == ref_ ? nullptr : &cs_[ref_], s_);
    }
    if (s_.race) Look();
    if (Bounded() && (stretched_ || s_.to_cap) && !budget_spent) Reach(spent_before);
    if (Bounded() && s_.race && !budget_spent && ReferenceUnresolved()) Resolve(spent_before);
    if (s_.progress_lines) ProgressLine();
    if (budget_spent || (Bounded() && TotalSpent() >= result_.total_budget) || RunsSpent()) {
      StopAll(RunsSpent() ? absl::StrFormat("total budget of %d runs spent", s_.max_total_runs)
                          : BudgetSpentWords());
      return false;
    }
    if (!others_active && cs_[ref_].done) return false;
    return round_ - s_.first_round < s_.max_runs * 3;  // a backstop, never reached in practice
  }

  // A long trace: the budget stretches, up to its cap, to stretch_rounds
  // rounds at the first's pace. Contenders the race's time limit stopped
  // run no more: their runs set no pace.
  void Stretch() {
    const double pace = TotalSpent() - stopped_spent_;
    const double stretched = std::min(Cap(), s_.stretch_rounds * pace + stopped_spent_);
    stretched_ = stretched > result_.total_budget;
    result_.total_budget = std::max(result_.total_budget, stretched);
  }

  // A stretched budget, once the race has looked: it stretches further,
  // within its cap, so that the contenders left reach reach_rounds rounds
  // at the pace of their own runs in the round just run (the race has
  // dropped the others, so the rounds left cost less than the first's).
  // Where even that goes past the cap, the budget stays: the verdict then
  // says how many rounds it rests on. With RoundsSettings::to_cap (a long
  // trace), the budget goes to its cap at once, stretched by the first
  // round or not (a cheap first round, 25 windowed runs of 65 ms on the
  // captured 5-thread trace, stretched nothing, and its 16 s bought 11
  // rounds with 12 policies left): those that run on (short of
  // the precision) run until they are precise or it is spent, so the rounds
  // a long trace affords go to the verdict, not to an early end (on the
  // captured 5-thread trace, 15 policies left in a noisy hour could not
  // reach 10 rounds within the cap, and the budget stopped them at 27 s of
  // 33, after 7).
  void Reach(const std::vector<double>& spent_before) {
    const int done = round_ - s_.first_round;
    if (done < s_.race_min_runs) return;
    if (s_.to_cap) {
      result_.total_budget = std::max(result_.total_budget, Cap());
      return;
    }
    if (done >= s_.reach_rounds) return;
    const double need = TotalSpent() + (s_.reach_rounds - done) * Pace(spent_before);
    if (need <= Cap()) result_.total_budget = std::max(result_.total_budget, need);
  }

  void Look() {
    const int done = round_ - s_.first_round;
    if (done >= 1 && done < s_.race_min_runs) {
      EliminateGrossLosers(cs_, FindRaceLeaders(cs_), ref_, s_.race_min_runs);
    }
    if (done < std::max(s_.race_min_runs, next_look_)) return;
    next_look_ = NextLookAfter(done);
    RaceLook(cs_, FindRaceLeaders(cs_), ref_, Margin(), ++looks_, entrants_, s_.race_min_runs);
  }

  // The margin of practical equivalence, as the verdict reads it.
  double Margin() const {
    return EquivalenceMargin(
        noise_ < cs_.size() ? NoiseMargin(PairedRatio(cs_[ref_].figures, cs_[noise_].figures)) : 0);
  }

  // Whether the reference, first in the fixed order, is unresolved for
  // want of rounds: its time over the leader's, paired, has a median more
  // than kEquivalenceMargin above 1, and is not shown slower (an interval
  // that reaches 1), or the verdict keeps it (a median within a margin
  // that a noise floor read from few rounds widened).
  bool ReferenceUnresolved() const {
    const size_t leader = FindRaceLeaders(cs_).fastest;
    if (leader >= cs_.size() || leader == ref_ || cs_[leader].done) return false;
    const Estimate r = PairedRatio(cs_[ref_].figures, cs_[leader].figures);
    return r.n >= s_.race_min_runs && r.median > 1 + kEquivalenceMargin &&
           (r.lo <= 1 || r.median <= 1 + Margin());
  }

  // Such a reference: the budget stretches, within its cap, by the round
  // just run's cost and half again (runs vary), round after round while it
  // stays so. Beside a busy core a per-thread replay's 16 s buys 8 to 11
  // rounds, too few to show glibc malloc at 1.2x to 1.3x mimalloc's time
  // slower: its median then moves from round to round by more than the
  // margin, and whether the verdict keeps it, first in the order, with it
  // (docs/fidelity.md).
  void Resolve(const std::vector<double>& spent_before) {
    const double need = TotalSpent() + 1.5 * Pace(spent_before);
    if (need > result_.total_budget) result_.total_budget = std::min(need, Cap());
  }

  // What the round just run cost those that run on (`spent_before`: each
  // contender's spent before it).
  double Pace(const std::vector<double>& spent_before) const {
    const bool ref_runs_on = ReferenceActive(OthersActive());
    double pace = 0;
    for (size_t i = 0; i < cs_.size(); ++i) {
      const bool runs_on = i == ref_ || IsNoise(i) ? ref_runs_on : !cs_[i].done;
      if (runs_on) pace += cs_[i].spent - spent_before[i];
    }
    return pace;
  }

  // "simple_map.trace: round 3 done: 12 of 20 contenders left, 8.1 s
  // spent (budget 16 s)", one line, for logs.
  void ProgressLine() const {
    int left = 0, all = 0;
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (!IsOther(i)) continue;
      ++all;
      left += !cs_[i].done;
    }
    const std::string budget =
        Bounded()
            ? absl::StrFormat(" (budget %.0f s, %.0f s left%s)", result_.total_budget,
                              std::max(0.0, result_.total_budget - TotalSpent()),
                              s_.max_total_runs > 0
                                  ? absl::StrFormat(", %d runs left",
                                                    std::max(0, s_.max_total_runs - TotalRuns()))
                                  : "")
            : "";
    std::fprintf(stderr, "%s: round %d done: %d of %d contenders left, %d runs, %.1f s spent%s\n",
                 s_.progress_label.c_str(), round_ - s_.first_round, left, all, TotalRuns(),
                 TotalSpent(), budget.c_str());
  }

  // "total budget of 16 s spent (--total_budget)", and the flag's own
  // value where the budget stretched past it: a user who asked for 5 s
  // reads why 23 were spent.
  std::string BudgetSpentWords() const {
    if (result_.total_budget <= s_.total_budget_seconds + 0.5) {
      return absl::StrFormat("total budget of %.0f s spent (%s)", result_.total_budget,
                             s_.budget_flag);
    }
    return absl::StrFormat(
        "total budget of %.0f s spent (%s=%g, stretched for the rounds this trace needed, at most "
        "%.0f s)",
        result_.total_budget, s_.budget_flag, s_.total_budget_seconds, Cap());
  }

  void StopAll(const std::string& reason) {
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (cs_[i].done || IsNoise(i)) continue;
      cs_[i].done = true;
      cs_[i].stop = Stop::kTotalBudget;
      cs_[i].stop_reason = reason;
      if (cs_[i].attempts == 0) {
        // The first round's runs spent the cap, or the runs, before its
        // turn: not a failure, a contender this trace left no time for.
        cs_[i].eliminated = true;
        cs_[i].stop = Stop::kNotRun;
        cs_[i].stop_reason =
            RunsSpent()
                ? absl::StrFormat(
                      "not run: the first round made the total budget of %d runs before its turn",
                      s_.max_total_runs)
                : absl::StrFormat(
                      "not run: the first round spent the total budget's cap of %.0f s before "
                      "its turn (%s)",
                      Cap(), s_.budget_flag);
      }
    }
  }

  std::vector<Contender>& cs_;
  ContenderRunner& runner_;
  const RoundsSettings& s_;
  std::mt19937_64 rng_;
  size_t ref_ = 0;
  bool stretched_ = false;  // the first round stretched the budget (Stretch)
  size_t noise_ = static_cast<size_t>(-1);
  int entrants_ = 0;
  int looks_ = 0;
  int next_look_ = 0;  // the round (done) of the race's next look
  int round_ = 0;
  double stopped_spent_ = 0;
  RoundsResult result_;
  std::chrono::steady_clock::time_point started_;  // when Run began
};

}  // namespace

int NextLookAfter(int done) { return std::max(done + 1, (9 * done + 7) / 8); }

RoundsResult RunRounds(std::vector<Contender>& contenders, ContenderRunner& runner,
                       const RoundsSettings& s) {
  return Rounds(contenders, runner, s).Run();
}

}  // namespace alloctrace
