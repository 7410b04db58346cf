#include "alloctrace/replayer/in_situ/in_situ.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/engine/os_stats.h"
#include "alloctrace/replayer/in_situ/in_situ_run.h"
#include "alloctrace/tracer/policy_switch.h"

namespace alloctrace {
namespace {

using Clock = std::chrono::steady_clock;

// The parent's view of one policy while it measures.
struct Slot {
  InSituCandidate c;
  std::string preload_path;
  InSituPolicy p;
  double spent = 0;
  bool done = false;
};

double Figure(const InSituRun& r, const std::string& clock) {
  return clock == "wall" ? r.wall_s : r.cpu_s;
}

std::vector<double> Figures(const InSituPolicy& p, const std::string& clock) {
  std::vector<double> v;
  for (const InSituRun& r : p.runs) v.push_back(Figure(r, clock));
  return v;
}

// The reference's figure over p's, per round both ran.
std::vector<double> PairedRatios(const InSituPolicy& ref, const InSituPolicy& p,
                                 const std::string& clock) {
  std::map<int, double> by_round;
  for (const InSituRun& r : ref.runs) by_round[r.round] = Figure(r, clock);
  std::vector<double> v;
  for (const InSituRun& r : p.runs) {
    auto it = by_round.find(r.round);
    if (it != by_round.end() && Figure(r, clock) > 0) v.push_back(it->second / Figure(r, clock));
  }
  return v;
}

bool Precise(const Slot& s, const Slot& ref, const InSituSettings& set) {
  constexpr int kStopResamples = 500;
  if (MedianWithCi(Figures(s.p, set.clock), kStopResamples).HalfWidth() > set.precision) {
    return false;
  }
  if (&s == &ref) return true;
  return MedianWithCi(PairedRatios(ref.p, s.p, set.clock), kStopResamples).HalfWidth() <=
         set.precision;
}

void UpdateDone(Slot& s, const Slot& ref, const InSituSettings& set) {
  if (s.done) return;
  const int n = static_cast<int>(s.p.runs.size());
  if (n >= set.min_runs && Precise(s, ref, set)) {
    s.done = true;
    s.p.stop_reason = "precise";
  } else if (n >= set.min_runs && s.spent >= set.budget_seconds) {
    s.done = true;
    s.p.stop_reason = absl::StrFormat("budget of %.0f s spent", set.budget_seconds);
  } else if (n >= set.max_runs) {
    s.done = true;
    s.p.stop_reason = absl::StrCat("--max_runs=", set.max_runs, " reached");
  }
}

// One run of `s` in round `round`; false if it failed (then `s` is done).
bool RunSlot(Slot& s, int round, const std::vector<std::string>& argv, double timeout,
             const InSituSettings& set, LogFile& log, bool* acknowledged) {
  ProgramRun spec;
  spec.launcher = set.launcher;
  spec.argv = argv;
  spec.policy = s.c.policy;
  if (!s.preload_path.empty()) {
    spec.preload = s.preload_path;
    spec.probe = set.probe_library;
  }
  spec.timeout_seconds = timeout;
  ++s.p.attempts;
  const std::string header =
      absl::StrCat("run ", s.p.attempts, " of ", s.p.name, " (round ", round + 1, ")");
  ChildOutcome o = RunProgram(spec, log, header);
  s.spent += o.run.wall_s;
  if (acknowledged != nullptr) *acknowledged = !o.acknowledged_policy.empty();
  std::string error = o.error;
  if (error.empty() && s.c.pool_policy && o.acknowledged_policy != s.c.policy) {
    error = absl::StrCat("the program did not take ALLOCTRACE_POLICY=", s.c.policy,
                         o.acknowledged_policy.empty()
                             ? " (no TraceAllocator was constructed)"
                             : absl::StrCat(" (it acknowledged '", o.acknowledged_policy, "')"));
  }
  if (error.empty() && !spec.preload.empty()) {
    if (o.malloc_provider.empty()) {
      error = absl::StrCat("LD_PRELOAD of ", s.c.preload,
                           " could not be verified (the preload check did not report: a "
                           "static or setuid program ignores LD_PRELOAD)");
    } else if (!absl::StrContains(o.malloc_provider, s.c.preload)) {
      error = absl::StrCat("LD_PRELOAD of ", s.c.preload, " did not take effect (malloc is from ",
                           o.malloc_provider, ")");
    }
  }
  if (!error.empty()) {
    s.p.status = "FAILED";
    s.p.failure = absl::StrCat("run ", s.p.attempts, ": ", error);
    s.p.stderr_tail = o.stderr_tail;
    s.p.stop_reason = "failed";
    s.done = true;
    return false;
  }
  o.run.round = round;
  s.p.runs.push_back(o.run);
  return true;
}

void Summarize(InSituSummary& out, std::vector<Slot>& slots, size_t ref_index,
               const std::string& clock) {
  const InSituPolicy& ref = slots[ref_index].p;
  for (Slot& s : slots) {
    InSituPolicy& p = s.p;
    if (p.status == "ok" && p.runs.empty() && !s.c.skipped.empty()) {
      p.status = "skipped";
      p.failure = s.c.skipped;
    }
    if (!p.ok()) continue;
    std::vector<double> cpu, rss, minflt, majflt;
    for (const InSituRun& r : p.runs) {
      cpu.push_back(r.cpu_s);
      rss.push_back(static_cast<double>(r.peak_rss_bytes));
      minflt.push_back(static_cast<double>(r.minor_faults));
      majflt.push_back(static_cast<double>(r.major_faults));
    }
    std::vector<double> wall;
    for (const InSituRun& r : p.runs) wall.push_back(r.wall_s);
    p.wall_s = MedianWithCi(wall);
    p.cpu_s = MedianWithCi(cpu);
    p.peak_rss_bytes = MedianWithCi(rss);
    p.minor_faults = Median(minflt);
    p.major_faults = Median(majflt);
    p.ranked = clock == "wall" ? p.wall_s : p.cpu_s;
    if (&p != &ref && ref.ok()) p.vs_reference = MedianWithCi(PairedRatios(ref, p, clock));
  }
  for (Slot& s : slots) out.policies.push_back(std::move(s.p));
  auto rank = [](const InSituPolicy& p) { return p.ok() ? 0 : p.status == "FAILED" ? 1 : 2; };
  std::stable_sort(out.policies.begin(), out.policies.end(),
                   [&](const InSituPolicy& a, const InSituPolicy& b) {
                     if (rank(a) != rank(b)) return rank(a) < rank(b);
                     return rank(a) == 0 && a.ranked.median < b.ranked.median;
                   });
  for (const InSituPolicy& p : out.policies) out.failed_policies += p.status == "FAILED";
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

absl::StatusOr<InSituSummary> MeasureInSitu(const std::vector<std::string>& argv,
                                            std::vector<InSituCandidate> candidates,
                                            const InSituSettings& set) {
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
  absl::StatusOr<LogFile> log = LogFile::Open(out.log_path);
  if (!log.ok()) return log.status();

  // The reference first; it also finds out whether the program is
  // instrumented (round 0, with ALLOCTRACE_POLICY=std acknowledged or not).
  std::vector<Slot> slots;
  Slot ref;
  ref.c.name = "std";
  ref.c.policy = policy_switch::kStdName;
  ref.c.reference = true;
  ref.p.name = "std";
  ref.p.reference = true;
  slots.push_back(ref);
  const double first_timeout = set.timeout_seconds > 0 ? set.timeout_seconds : 300;
  bool instrumented = false;
  const bool ref_ok = RunSlot(slots[0], 0, argv, first_timeout, set, *log, &instrumented);
  out.instrumented = instrumented;
  if (!instrumented) {
    // An uninstrumented program's reference is glibc malloc: nothing set.
    slots[0].c.name = slots[0].p.name = "malloc";
    slots[0].c.policy.clear();
  }
  out.reference = slots[0].p.name;
  // What the verdict's Adopt line says when the reference is recommended:
  // glibc malloc as it is, or std::allocator (ALLOCTRACE_POLICY=std is plain
  // operator new). Left empty, that line was blank.
  slots[0].p.adopt = CandidateFor(instrumented ? "new" : "malloc").adopt;
  // Round 0 is a warm-up (page cache, dynamic loading): not counted.
  const double first_wall = slots[0].p.runs.empty() ? 0 : slots[0].p.runs[0].wall_s;
  slots[0].p.runs.clear();
  slots[0].spent = 0;
  const double timeout =
      set.timeout_seconds > 0 ? set.timeout_seconds : std::max(10.0, 10 * first_wall);

  for (InSituCandidate& c : candidates) {
    if (c.name == "malloc" || c.name == "std" || c.name == "new") continue;  // the reference
    Slot s;
    s.c = c;
    s.p.name = c.name;
    s.p.adopt = c.adopt;
    s.p.frees_blocks = c.frees_blocks;
    s.p.family = c.family;
    if (s.c.skipped.empty() && !ref_ok) {
      s.c.skipped = absl::StrCat("not run: the reference ", out.reference, " failed");
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
    if (s.c.skipped.empty() && instrumented && c.policy.empty()) {
      s.c.policy = policy_switch::kStdName;  // a malloc under the std switch
    }
    s.done = !s.c.skipped.empty();
    slots.push_back(std::move(s));
  }

  std::mt19937_64 rng(set.seed);
  int round = 1;
  std::vector<size_t> order;
  while (ref_ok) {
    Slot& r = slots[0];
    bool others = false;
    for (size_t i = 1; i < slots.size(); ++i) others |= !slots[i].done;
    if (!others && r.done) break;
    if (r.p.status == "FAILED") break;  // no pairs to make
    order.clear();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (i == 0 || !slots[i].done) order.push_back(i);  // the reference pairs every round
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      if (set.progress) {
        std::fprintf(stderr, "\r\033[Kin situ: round %d, %s", round + 1, slots[i].p.name.c_str());
      }
      RunSlot(slots[i], round, argv, timeout, set, *log, nullptr);
      if (slots[0].p.status == "FAILED") break;
    }
    ++round;
    for (Slot& s : slots) UpdateDone(s, slots[0], set);
    if (round > set.max_runs + 1) break;  // a backstop
  }
  if (set.progress) std::fprintf(stderr, "\r\033[K");
  out.rounds = round;
  for (Slot& s : slots) {
    if (!s.done && s.p.stop_reason.empty() && s.c.skipped.empty()) {
      s.p.stop_reason = "stopped with the others";
    }
  }
  Summarize(out, slots, 0, set.clock);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace alloctrace
