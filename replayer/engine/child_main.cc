#include "alloctrace/replayer/engine/child_main.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/child_request.h"
#include "alloctrace/replayer/engine/run_result_wire.h"
#include "alloctrace/replayer/engine/windows.h"

namespace alloctrace {
namespace {

// Which library serves malloc in this process (the file dladdr names).
std::string MallocProvider() {
  Dl_info info;
  void* (*m)(size_t) = &malloc;
  if (dladdr(reinterpret_cast<void*>(m), &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

// A data limit the child inherited (ulimit -d) as a phrase, "" if none. (The
// replayer's own limit is on resident memory: the parent kills a child past
// it.)
std::string MemoryLimitWords() {
  struct rlimit lim;
  if (getrlimit(RLIMIT_DATA, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return "";
  return absl::StrFormat("the data limit (ulimit -d) of %.0f MiB",
                         static_cast<double>(lim.rlim_cur) / (1 << 20));
}

void MaybeInjectFault(const std::string& policy, int attempt) {
  const char* spec = std::getenv("ALLOCTRACE_TEST_FAULT");
  if (spec == nullptr) return;
  const std::vector<std::string> parts = absl::StrSplit(spec, ':');
  if (parts.size() != 3 || parts[0] != policy || parts[1] != std::to_string(attempt)) return;
  if (parts[2] == "segv") raise(SIGSEGV);
  if (parts[2] == "hang") {
    while (true) pause();
  }
  if (parts[2] == "exit") _exit(7);
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "replayer (child run): %s\n", message.c_str());
  return code;
}

// Why the policy's preload (`preload`, "" for none) did not take effect, or
// "".
std::string PreloadError(const std::string& preload) {
  const std::string provider = MallocProvider();
  if (preload.empty() || provider.find(preload) != std::string::npos) return "";
  return absl::StrCat("LD_PRELOAD of ", preload, " did not take effect (malloc is from ", provider,
                      ")");
}

// A serving child's life (window_server.h); its exit status. What stops it
// before its first window (a preload that did not take, no memory) is its
// first answer.
int Serve(const RunnablePolicy& policy, const std::string& preload, const ReplayView& program,
          const std::optional<ThreadScheduleView>& schedule, const RunOptions& options,
          int command_fd, int result_fd) {
  RunResult r;
  r.error.words = PreloadError(preload);
  if (!r.error.failed() &&
      (schedule ? policy.serve_thread_windows == nullptr : policy.serve_windows == nullptr)) {
    r.error.words = "it cannot serve windows";
  }
  if (!r.error.failed()) {
    try {
      if (schedule) {
        return policy.serve_thread_windows(program, *schedule, options, command_fd, result_fd);
      }
      return policy.serve_windows(program, options, command_fd, result_fd);
    } catch (const std::bad_alloc&) {
      const std::string limit = MemoryLimitWords();
      r.error = {RunErrorKind::kOutOfMemory,
                 absl::StrCat("out of memory (std::bad_alloc)",
                              limit.empty() ? "" : absl::StrCat(" under ", limit))};
    }
  }
  return WriteAll(result_fd, FramedRunResult(r)) == 0 ? 0 : 1;
}

// The run itself, its failures in the result.
// `preload`: the library the request's policy (a mix's rest) is preloaded
// with, "" for none.
RunResult Run(const RunnablePolicy& policy, const std::string& preload, const ReplayView& program,
              const std::optional<ThreadScheduleView>& schedule,
              const std::vector<ReplayWindow>& windows, const WindowStatesView* states,
              const RunOptions& options) {
  RunResult r;
  r.error.words = PreloadError(preload);
  if (r.error.failed()) return r;
  try {
    if (!windows.empty() && schedule) {
      r.error.words = "a per-thread replay's windows are served only (thread_window_server.h)";
    } else if (!windows.empty()) {
      r = policy.run_windows(program, windows, states, options);
    } else if (schedule) {
      r = policy.run_per_thread(program, *schedule, options);
    } else {
      r = policy.run(program, options);
    }
    if (r.error.failed()) {
      const std::string limit = MemoryLimitWords();
      // An op that fails under a data limit failed for want of memory.
      if (!limit.empty()) {
        absl::StrAppend(&r.error.words, ", under ", limit);
        r.error.kind = RunErrorKind::kOutOfMemory;
      }
    }
  } catch (const std::bad_alloc&) {
    r = RunResult();
    const std::string limit = MemoryLimitWords();
    r.error = {RunErrorKind::kOutOfMemory,
               absl::StrCat("out of memory (std::bad_alloc)",
                            limit.empty() ? "" : absl::StrCat(" under ", limit))};
  }
  return r;
}

}  // namespace

int ChildMain(int argc, char** argv, const std::map<std::string, RunnablePolicy>& policies) {
  absl::StatusOr<ChildRequest> request = ParseChildArgs(argc, argv);
  if (!request.ok()) return Fail(2, std::string(request.status().message()));
  auto policy = policies.find(request->policy);
  if (policy == policies.end()) return Fail(2, absl::StrCat("unknown policy ", request->policy));
  // The parent decoded the trace; this process maps the result and so
  // allocates nothing before the run but what the runtime does. A windowed
  // run maps in what its windows read, a whole run all of it.
  const bool whole = request->windows.empty();  // a serving child replays it all too
  absl::StatusOr<ReplayView> program = MapSharedReplayView(request->program_fd, whole);
  if (!program.ok()) return Fail(1, std::string(program.status().message()));
  std::optional<ThreadScheduleView> schedule;
  if (request->schedule_fd >= 0) {
    absl::StatusOr<ThreadScheduleView> v = MapSharedThreadSchedule(request->schedule_fd);
    if (!v.ok()) return Fail(1, std::string(v.status().message()));
    schedule = *std::move(v);
  }
  std::vector<ReplayWindow> windows;
  if (!request->windows.empty()) {
    absl::StatusOr<std::vector<ReplayWindow>> w =
        ParseWindowsWord(request->windows, program->num_ops);
    if (!w.ok()) return Fail(2, std::string(w.status().message()));
    windows = *std::move(w);
  }
  std::optional<WindowStatesView> states;
  if (request->states_fd >= 0) {
    absl::StatusOr<WindowStatesView> v = MapSharedWindowStates(request->states_fd);
    if (!v.ok()) return Fail(1, std::string(v.status().message()));
    if (v->windows != windows.size()) return Fail(2, "window states do not match the windows");
    states = *v;
  }
  // A mix: its plan from the policies' makers, and MixAllocator's loops.
  RunnablePolicy runnable = policy->second;
  MixPlan plan;
  if (!request->mix.empty()) {
    absl::StatusOr<MixSpec> spec = ParseMixSpecWord(request->mix);
    if (!spec.ok()) return Fail(2, std::string(spec.status().message()));
    std::map<std::string, MakeErasedFn> makers;
    for (const auto& [name, p] : policies) makers[name] = p.make_erased;
    absl::StatusOr<MixPlan> made = MakeMixPlan(*spec, *program, makers);
    if (!made.ok()) return Fail(2, std::string(made.status().message()));
    plan = *std::move(made);
    MixAllocator::UsePlan(&plan);
    runnable = MixRunnablePolicy();
  }
  MaybeInjectFault(request->policy, request->attempt);
  // The child's work ends with the run: a windowed run leaves its last
  // window's heap to the process's end, which frees it at once (_Exit: no
  // destructors, no exit handlers, nothing left to do but the result,
  // written and closed first).
  RunOptions options = request->options;
  options.process_ends_after = true;
  if (request->command_fd >= 0) {
    const int code = Serve(runnable, policy->second.info.preload, *program, schedule, options,
                           request->command_fd, request->result_fd);
    std::fflush(nullptr);
    std::_Exit(code);
  }
  const RunResult r = Run(runnable, policy->second.info.preload, *program, schedule, windows,
                          states ? &*states : nullptr, options);
  const int code = WriteRunResult(request->result_fd, r) ? 0 : 1;
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace alloctrace
