// What one replay run produces, as plain data: the run's options (what the
// loop does with each block, how many passes) and its figures (each pass's
// times and counters, RSS, what failed and its kind if it failed). The child
// fills a RunResult (replay_loop.h, thread_replay.h) and sends it to the
// parent (run_result_wire.h); the measurement and the verdict read it.
// Nothing here runs anything.
//
// Thread-safety: plain structs.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_H_
#define ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloctrace/base/enum_words.h"

namespace alloctrace {

// What the loop does with blocks besides calling the allocator. kProgram is
// what programs do around each call: a constructor writes the new object
// (whole blocks up to kProgramTouchBytes; of a larger one its first and last
// cache lines), calloc's block is left as calloc zeroed it, and a destructor
// or list walk reads a block just before it is freed (its first and last
// bytes), so that free finds the block in cache as it does in the program.
// kWalk is kProgram plus the reads of a runtime whose garbage collector
// walks the live objects (live_walk.h, LiveWalk): every live block read
// in allocation order, a generation at a time; one thread, whole runs.
// --touch=auto is no touch of its own: it picks kWalk or kProgram per trace
// before any run (measure/measure.h, TouchFor).
enum class Touch { kNone, kFirst, kWhole, kProgram, kWalk };
inline constexpr EnumWord<Touch> kTouchWords[] = {{Touch::kNone, "none"},
                                                  {Touch::kFirst, "first"},
                                                  {Touch::kWhole, "whole"},
                                                  {Touch::kProgram, "program"},
                                                  {Touch::kWalk, "walk"}};
inline constexpr size_t kProgramTouchBytes = 256;

// What kind of failure ended a run, as the measurement acts on it; the
// failure's words, for the user, are RunError::words.
enum class RunErrorKind : uint8_t {
  kNone,
  // An op of the trace the allocator could not serve (it returned null):
  // every run of the policy fails the same way.
  kOpFailed,
  // A std::bad_alloc, or any failure under the child's data limit (ulimit
  // -d): what a memory limit is for, not a fault.
  kOutOfMemory,
  // A replay thread that stopped because another one failed: a
  // consequence, never a whole run's kind.
  kStopped,
  // Anything else (a thread that could not start, a malformed request, a
  // preload that did not take): another run may not fail.
  kOther,
};
inline constexpr EnumWord<RunErrorKind> kRunErrorKindWords[] = {
    {RunErrorKind::kNone, "none"},
    {RunErrorKind::kOpFailed, "op_failed"},
    {RunErrorKind::kOutOfMemory, "out_of_memory"},
    {RunErrorKind::kStopped, "stopped"},
    {RunErrorKind::kOther, "other"}};

// What failed, if anything: its kind and its words (kNone and "" if
// nothing did). A check of the child's own (a preload that did not take)
// sets words only: words without a kind are a failure of kind kOther.
struct RunError {
  RunErrorKind kind = RunErrorKind::kNone;  // as set; read through Kind()
  std::string words;

  // The failure's kind, kOther for words without one.
  RunErrorKind Kind() const {
    return kind == RunErrorKind::kNone && !words.empty() ? RunErrorKind::kOther : kind;
  }
  bool failed() const { return Kind() != RunErrorKind::kNone; }
  // Sets both, `w` copied into the room `words` has if it is enough (a
  // replay thread's is reserved before the threads start: thread_replay.h).
  void Assign(RunErrorKind k, const char* w) {
    kind = k;
    words.assign(w);
  }
};

// The defaults are the replayer's command line's (replayer/config.h).
struct RunOptions {
  Touch touch = Touch::kProgram;
  int rss_samples = 200;  // RSS readings over the cold pass (the course)
  // Passes: the cold one, then warm ones until they add up to
  // min_warm_seconds (wall), at least one, at most max_passes in all.
  int max_passes = 50;
  double min_warm_seconds = 0.005;
  // The run is its process's last work (a child about to end with
  // _Exit): a windowed run leaves its last window's heap for the process's
  // end to free (window_loop.h). Never carried in a request: the child
  // sets it.
  bool process_ends_after = false;
};

// One pass over the trace's ops.
struct PassFigures {
  double wall_seconds = 0;  // steady clock over the timed loop
  double cpu_seconds = 0;   // this thread's CPU time (user + system) over it
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
  int64_t involuntary_switches = 0;  // preempted (getrusage ru_nivcsw)
  int64_t voluntary_switches = 0;
  // Per-thread replay (thread_replay.h) only: wall_seconds is the
  // concurrent section's, cpu_seconds the threads' summed CPU time without
  // their waits; these are each thread's, and the wall time all of them
  // spent waiting at sync points.
  std::vector<double> thread_cpu_seconds;
  double wait_seconds = 0;
};

// One window of a windowed run (engine/windows.h): the memory ops it timed,
// the memory ops of the stratum it stands for, and its figures.
struct WindowFigures {
  uint64_t ops = 0;
  uint64_t weight = 0;
  PassFigures figures;
};

struct RunResult {
  uint64_t ops = 0;                 // memory ops (alloc, free, realloc) per pass
  std::vector<PassFigures> passes;  // [0] cold, then warm
  double seconds = 0;               // passes[0].wall_seconds
  double teardown_seconds = 0;      // freeing leftovers and destroying the allocator
  // What the run's malloc library adds to a process's start and end (CPU
  // seconds; 0 for the process's own allocator), counted once in the
  // cold pass's figure (measure/runs.h: RunNsPerOp): a trace is one run of
  // its program, which pays it once. Set by the measuring parent from
  // ProcessCost (measure/isolated_run.h), never sent by the child.
  double process_seconds = 0;
  int64_t baseline_rss = 0;  // bytes resident before the allocator was built
  int64_t peak_rss = 0;      // high-water mark in the cold pass, above baseline
  int64_t final_rss = 0;     // resident after the cold pass, above baseline
  int64_t minor_faults = 0;  // passes[0]'s
  int64_t major_faults = 0;
  int64_t migrations = 0;           // CPU migrations over the passes (0 if unknown)
  std::vector<int64_t> rss_course;  // above baseline, evenly spaced over the cold pass
  RunError error;                   // what failed, if anything
  // Replay threads: 1 for the serialized replay; for the per-thread one,
  // the trace's threads, the waits between them and the frees of an object
  // another thread allocated.
  uint32_t threads = 1;
  uint64_t sync_points = 0;
  uint64_t cross_thread_frees = 0;
  // A windowed run: each window's figures; passes[0] is then the estimate
  // of a whole cold pass drawn from them (WindowedEstimate), and the RSS
  // figures are the windows' (not a whole run's: see windows.h).
  std::vector<WindowFigures> windows;
  bool windowed() const { return !windows.empty(); }
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_H_
