#include "alloctrace/replayer/in_situ/in_situ.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/in_situ/in_situ_run.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/tracer/policy_switch.h"

namespace alloctrace {
namespace {

using Clock = std::chrono::steady_clock;

// The parent's view of one candidate while it measures.
struct Slot {
  InSituCandidate c;
  std::string preload_path;
  InSituPolicy p;
};

double Figure(const InSituRun& r, TimingClock clock) {
  return clock == TimingClock::kWall ? r.wall_s : r.cpu_s;
}

// Why a run that exited cleanly is still not what it claims to be: the
// program did not take its policy, or its preloaded malloc did not serve.
std::string Unverified(const Slot& s, const ChildOutcome& o, bool preloaded) {
  if (!s.c.program.empty() && !o.acknowledged_policy.empty()) {
    return absl::StrCat("the shipped build still has TraceAllocator in it (it acknowledged '",
                        o.acknowledged_policy, "'): the build command did not paste $",
                        kEnvAliases);
  }
  if (s.c.pool_policy && o.acknowledged_policy != s.c.policy) {
    return absl::StrCat("the program did not take ALLOCTRACE_POLICY=", s.c.policy,
                        o.acknowledged_policy.empty()
                            ? " (no TraceAllocator was constructed)"
                            : absl::StrCat(" (it acknowledged '", o.acknowledged_policy, "')"));
  }
  if (!preloaded) return "";
  if (o.malloc_provider.empty()) {
    return absl::StrCat("LD_PRELOAD of ", s.c.preload,
                        " could not be verified (the preload check did not report: a static or "
                        "setuid program ignores LD_PRELOAD)");
  }
  if (!absl::StrContains(o.malloc_provider, s.c.preload)) {
    return absl::StrCat("LD_PRELOAD of ", s.c.preload, " did not take effect (malloc is from ",
                        o.malloc_provider, ")");
  }
  return "";
}

// In situ's runs for the rounds: the program once under a candidate.
class InSituRunner : public ContenderRunner {
 public:
  InSituRunner(std::vector<Slot>& slots, const std::vector<std::string>& argv,
               const InSituSettings& set, LogFile& log)
      : slots_(slots), argv_(argv), set_(set), log_(log) {}

  void set_timeout(double seconds) { timeout_ = seconds; }

  RunOutcome Run(size_t i, int round, const ChildLimits& limits, bool race_limited) override {
    Slot& s = slots_[i];
    ProgramRun run;
    run.launcher = set_.launcher;
    run.argv = argv_;
    if (!s.c.program.empty()) run.argv[0] = s.c.program;
    run.policy = s.c.policy;
    if (!s.preload_path.empty()) {
      run.preload = s.preload_path;
      run.probe = set_.probe_library;
    }
    // The race's limit (20x the fastest candidate's run) when it is the
    // lower: a run stopped there is an elimination, not a failure.
    const bool raced = race_limited && limits.wall_seconds > 0 &&
                       (timeout_ <= 0 || limits.wall_seconds < timeout_);
    run.timeout_seconds = raced ? limits.wall_seconds : timeout_;
    ++s.p.attempts;
    const std::string header =
        absl::StrCat("run ", s.p.attempts, " of ", s.p.name, " (round ", round + 1, ")");
    ChildOutcome o = RunProgram(run, log_, header);
    last_acknowledged_ = !o.acknowledged_policy.empty();
    RunOutcome out;
    out.seconds = o.run.wall_s;
    if (raced && o.timed_out) {
      out.end = RunOutcome::End::kStopped;
      return out;
    }
    out.error = o.error.empty() ? Unverified(s, o, !run.preload.empty()) : o.error;
    if (!out.error.empty()) {
      // A failed run of the program is final: its policy stops.
      out.end = RunOutcome::End::kFailed;
      out.fatal = true;
      s.p.status = RunStatus::kFailed;
      s.p.failure = absl::StrCat("run ", s.p.attempts, ": ", out.error);
      s.p.stderr_tail = o.stderr_tail;
      return out;
    }
    o.run.round = round;
    s.p.runs.push_back(o.run);
    out.figure = Figure(o.run, set_.clock);
    return out;
  }

  // Whether the last run's program acknowledged ALLOCTRACE_POLICY.
  bool last_acknowledged() const { return last_acknowledged_; }

 private:
  std::vector<Slot>& slots_;
  const std::vector<std::string>& argv_;
  const InSituSettings& set_;
  LogFile& log_;
  double timeout_ = 0;
  bool last_acknowledged_ = false;
};

// The summary's figures of each candidate, ranked: ok by median, then
// FAILED, then skipped; and the noise floor from the noise slot (the
// last), which is no policy of the summary.
void Summarize(InSituSummary& out, std::vector<Slot>& slots, TimingClock clock) {
  const std::map<int, double> ref = FiguresByRound(slots[0].p, clock);
  if (slots.back().c.noise) {
    out.noise_floor = PairedRatio(ref, FiguresByRound(slots.back().p, clock));
    slots.pop_back();
  }
  for (Slot& s : slots) {
    InSituPolicy& p = s.p;
    if (p.status == RunStatus::kOk && p.runs.empty() && !s.c.skipped.empty()) {
      p.status = RunStatus::kSkipped;
      p.failure = s.c.skipped;
    }
    if (!p.ok()) continue;
    std::vector<double> wall, cpu, rss, minflt, majflt;
    for (const InSituRun& r : p.runs) {
      wall.push_back(r.wall_s);
      cpu.push_back(r.cpu_s);
      rss.push_back(
          static_cast<double>(r.start_rss_bytes > 0 && r.start_rss_bytes < r.peak_rss_bytes
                                  ? r.peak_rss_bytes - r.start_rss_bytes
                                  : r.peak_rss_bytes));
      minflt.push_back(static_cast<double>(r.minor_faults));
      majflt.push_back(static_cast<double>(r.major_faults));
    }
    p.wall_s = MedianWithCi(wall);
    p.cpu_s = MedianWithCi(cpu);
    p.peak_rss_bytes = MedianWithCi(rss);
    p.minor_faults = Median(minflt);
    p.major_faults = Median(majflt);
    p.ranked = clock == TimingClock::kWall ? p.wall_s : p.cpu_s;
    if (&s != &slots[0] && slots[0].p.ok()) {
      p.vs_reference = PairedRatio(ref, FiguresByRound(p, clock));
    }
  }
  for (Slot& s : slots) out.policies.push_back(std::move(s.p));
  OrderInSituPolicies(out.policies);
  for (const InSituPolicy& p : out.policies) out.failed_policies += p.status == RunStatus::kFailed;
}

// The slot of candidate `c`, skipped (with why) if it cannot run here.
Slot SlotFor(const InSituCandidate& c, bool ref_ok, bool instrumented, const std::string& ref_name,
             const InSituSettings& set) {
  Slot s;
  s.c = c;
  s.p.name = c.name;
  s.p.adopt = c.adopt;
  s.p.frees_blocks = c.frees_blocks;
  s.p.family = c.family;
  if (s.c.skipped.empty() && !ref_ok) {
    s.c.skipped = absl::StrCat("not run: the reference ", ref_name, " failed");
  }
  if (s.c.skipped.empty() && c.pool_policy && !instrumented) {
    s.c.skipped =
        "the program is not instrumented (it did not acknowledge ALLOCTRACE_POLICY: no "
        "TraceAllocator was constructed), so a pool policy cannot serve it";
  }
  if (s.c.skipped.empty() && !c.preload.empty()) {
    s.preload_path = FindPreloadLibrary(c.preload);
    if (s.preload_path.empty()) s.c.skipped = absl::StrCat(c.preload, " is not installed");
    if (set.probe_library.empty()) s.c.skipped = "the preload check library is missing";
  }
  if (s.c.skipped.empty() && instrumented && c.policy.empty() && c.program.empty()) {
    s.c.policy = policy_switch::kStdName;  // a malloc under the std switch
  }
  return s;
}

// The reference's slot: std, the switch's plain operator new (malloc, if
// the program turns out not to be instrumented).
Slot ReferenceSlot() {
  Slot ref;
  ref.c.name = ref.p.name = "std";
  ref.c.policy = policy_switch::kStdName;
  ref.c.reference = ref.p.reference = true;
  return ref;
}

}  // namespace

InSituCandidate CandidateFor(const std::string& name) {
  InSituCandidate c;
  c.name = name;
  if (name == policy_switch::kStdName) {
    c.policy = policy_switch::kStdName;
    return c;
  }
  allocators::AllocatorInfo info;
  for (const allocators::AllocatorInfo& i : allocators::AllAllocators()) {
    if (i.name == name) info = i;
  }
  c.adopt = info.adopt;
  c.frees_blocks = info.frees_blocks;
  c.family = info.family;
  if (policy_switch::Find(name) != nullptr) {
    c.policy = name;
    c.pool_policy = true;
  } else if (!info.preload.empty()) {
    c.preload = info.preload;
  } else if (name != "malloc") {
    c.skipped = absl::StrCat(
        name,
        " cannot run in situ: only the catalog's pool policies (ALLOCTRACE_POLICY) and "
        "preloaded mallocs can");
  }
  return c;
}

namespace {

// The slot every ratio pairs with: std (malloc if the program turns out
// not to be instrumented), or `reference` (a per-container race's held
// mix). NotFound if its malloc is not installed.
absl::StatusOr<Slot> ReferenceSlotFor(const InSituCandidate* reference, const InSituSettings& set) {
  Slot ref = ReferenceSlot();
  if (reference == nullptr) return ref;
  ref.c = *reference;
  ref.c.reference = true;
  ref.p.name = reference->name;
  ref.p.adopt = reference->adopt;
  ref.p.frees_blocks = reference->frees_blocks;
  ref.p.family = reference->family;
  if (!reference->preload.empty()) {
    ref.preload_path = FindPreloadLibrary(reference->preload);
    if (ref.preload_path.empty() || set.probe_library.empty()) {
      return absl::NotFoundError(absl::StrCat(reference->preload, " is not installed"));
    }
  }
  return ref;
}

// The reference's second run set, the noise floor's (Summarize takes it
// out again). Its runs are its own: the reference's warm-up is not one.
Slot NoiseSlot(const Slot& reference) {
  Slot noise = reference;
  noise.c.reference = noise.p.reference = false;
  noise.c.noise = true;
  noise.p.name = noise.c.name = absl::StrCat(reference.p.name, " (again)");
  noise.p.attempts = 0;
  return noise;
}

// `c` as its shipped build: the executable `shipped` built for its policy
// or assignment (a malloc's: std::allocator, preloaded), no switch; or
// skipped with the build's failure.
void Ship(InSituCandidate& c, ShippedBuilds& shipped) {
  if (!c.skipped.empty()) return;
  absl::StatusOr<std::string> program =
      shipped.For(c.pool_policy ? c.policy : std::string(policy_switch::kStdName));
  if (!program.ok()) {
    c.skipped = std::string(program.status().message());
    return;
  }
  c.program = *program;
  c.policy.clear();
  c.pool_policy = false;
}

std::vector<Contender> ContendersOf(const std::vector<Slot>& slots, bool ref_ok) {
  std::vector<Contender> contenders;
  for (const Slot& s : slots) {
    Contender c;
    c.name = s.p.name;
    c.role = s.c.reference ? Role::kReference : s.c.noise ? Role::kNoise : Role::kCandidate;
    c.frees_blocks = s.c.frees_blocks;
    c.done = !s.c.skipped.empty() || ((s.c.reference || s.c.noise) && !ref_ok);
    contenders.push_back(std::move(c));
  }
  return contenders;
}

RoundsSettings RoundsFor(const InSituSettings& set) {
  RoundsSettings rounds;
  rounds.min_runs = set.min_runs;
  rounds.max_runs = set.max_runs;
  rounds.precision = set.precision;
  rounds.budget_seconds = set.budget_seconds;
  rounds.race = set.race;
  rounds.total_budget_seconds = set.race ? set.total_budget_seconds : 0;
  rounds.max_total_budget_seconds = rounds.total_budget_seconds;
  rounds.max_total_runs = set.race ? set.max_total_runs : 0;
  rounds.budget_flag = "--in_situ_budget";
  rounds.seed = set.seed;
  rounds.first_round = 1;
  rounds.stop_without_reference = true;
  rounds.progress_lines = set.progress_lines;
  if (set.progress || set.progress_lines) rounds.progress_label = set.progress_label;
  return rounds;
}

// Each slot's stop reason from its contender, and the runs in all.
void RecordStops(std::vector<Slot>& slots, const std::vector<Contender>& contenders,
                 InSituSummary& out) {
  for (size_t i = 0; i < slots.size(); ++i) {
    InSituPolicy& p = slots[i].p;
    out.runs += p.attempts;
    if (p.status == RunStatus::kFailed) {
      p.stop_reason = "failed";
    } else if (slots[i].c.skipped.empty()) {
      p.stop_reason = contenders[i].done ? contenders[i].stop_reason : "stopped with the others";
      p.eliminated = contenders[i].eliminated;
      if (contenders[i].eliminated && p.runs.empty()) {
        // Stopped in its first run at the race's time limit (a program
        // that hangs under it), or never run (the first round spent the
        // budget before its turn): an outcome, said in its row.
        p.status =
            contenders[i].stop == Stop::kNotRun ? RunStatus::kSkipped : RunStatus::kOverLimit;
        p.failure = p.stop_reason;
      }
    }
  }
}

}  // namespace

absl::StatusOr<InSituSummary> MeasureInSitu(const std::vector<std::string>& argv,
                                            std::vector<InSituCandidate> candidates,
                                            const InSituSettings& set,
                                            const InSituCandidate* reference) {
  const Clock::time_point start = Clock::now();
  InSituSummary out;
  out.argv = argv;
  out.clock = set.clock;
  out.log_path =
      set.log_path.empty() ? absl::StrCat("alloctrace-insitu.", getpid(), ".log") : set.log_path;
  if (set.launcher.empty() || access(set.launcher.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(
        "in_situ_launcher is missing: ", set.launcher,
        " (bazel build //replayer builds it beside the replayer; cmake --install puts it in "
        "libexec/alloctrace/)"));
  }
  absl::StatusOr<LogFile> log = LogFile::Open(out.log_path, set.append_log);
  if (!log.ok()) return log.status();
  absl::StatusOr<Slot> ref = ReferenceSlotFor(reference, set);
  if (!ref.ok()) return ref.status();
  if (set.shipped != nullptr) {
    Ship(ref->c, *set.shipped);
    if (!ref->c.skipped.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the reference ", ref->c.name, ": ", ref->c.skipped));
    }
    for (InSituCandidate& c : candidates) Ship(c, *set.shipped);
  }

  // Round 0, a warm-up not counted (page cache, dynamic loading): the
  // reference, which also finds out whether the program is instrumented
  // (ALLOCTRACE_POLICY=std acknowledged or not).
  std::vector<Slot> slots = {*std::move(ref)};
  InSituRunner runner(slots, argv, set, *log);
  runner.set_timeout(set.timeout_seconds > 0 ? set.timeout_seconds : 300);
  const bool ref_ok = runner.Run(0, 0, ChildLimits{}, false).end == RunOutcome::End::kKept;
  // A shipped build is the program's own code with the lines pasted: what
  // the switch would serve, it serves.
  out.instrumented = set.shipped != nullptr || runner.last_acknowledged();
  if (reference == nullptr) {
    if (!out.instrumented) {
      // An uninstrumented program's reference is glibc malloc: nothing set.
      slots[0].c.name = slots[0].p.name = "malloc";
      slots[0].c.policy.clear();
    }
    // The Adopt line when the reference is recommended: glibc malloc as it
    // is, or std::allocator (ALLOCTRACE_POLICY=std is plain operator new).
    slots[0].p.adopt = CandidateFor(out.instrumented ? "new" : "malloc").adopt;
  }
  out.reference = slots[0].p.name;
  const double first_wall = slots[0].p.runs.empty() ? 0 : slots[0].p.runs[0].wall_s;
  slots[0].p.runs.clear();
  runner.set_timeout(set.timeout_seconds > 0 ? set.timeout_seconds
                                             : std::max(10.0, 10 * first_wall));
  for (const InSituCandidate& c : candidates) {
    const bool is_reference = reference != nullptr
                                  ? c.name == reference->name
                                  : c.name == "malloc" || c.name == "std" || c.name == "new";
    if (is_reference) continue;
    slots.push_back(SlotFor(c, ref_ok, out.instrumented, out.reference, set));
  }
  slots.push_back(NoiseSlot(slots[0]));

  std::vector<Contender> contenders = ContendersOf(slots, ref_ok);
  RoundsSettings rounds = RoundsFor(set);
  // --in_situ_runs counts every run of the program, the warm-up's too.
  rounds.runs_before = slots[0].p.attempts;
  if (ref_ok) out.rounds = 1 + RunRounds(contenders, runner, rounds).rounds;
  out.budget_seconds = rounds.total_budget_seconds;
  out.max_total_runs = rounds.max_total_runs;
  RecordStops(slots, contenders, out);
  Summarize(out, slots, set.clock);
  if (set.shipped != nullptr) {
    out.shipped_builds = set.shipped->builds();
    out.shipped_build_seconds = set.shipped->seconds();
    out.build_log = set.shipped->log_path();
  }
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace alloctrace
