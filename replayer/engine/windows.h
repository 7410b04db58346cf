// Sampled windows of a replay program: the way a long trace is measured in
// a fraction of a whole run's time (after SMARTS and SimPoint, which
// estimate a whole program from many short sampled windows).
//
// A round's plan (PlanWindows) cuts the trace's ops into equal strata. A
// window is either rebuilt or served (ShapeFor says which). Rebuilt: a run
// replays one window at a random offset in each stratum, the same windows
// for every contender of the round (so their times pair), new ones each
// round (so the rounds sample the trace); a window is replayed from the
// trace's state at its start, built untimed: the arenas live there created
// and the objects live there allocated, in their allocation order, through
// a fresh allocator; then a lead-in of the ops just before the window,
// untimed (the allocator's free lists and caches shaped by the trace, not
// only by the rebuilt heap); then the window's ops, timed. Served
// (window_server.h): each contender's one replay of the trace runs on from
// round to round, a stratum a round. The run's figure is the estimate of
// the whole trace's time: each window's time per memory op times its
// stratum's memory ops, summed, scaled to the trace's memory ops where a
// run samples one stratum (WindowedEstimate).
//
// What a rebuilt window cannot see is its heap's history before the
// lead-in (holes the trace made long before), and no window sees a whole
// run's peak resident memory: the measurement takes peak RSS and page
// faults from whole runs of the contenders it ends with.
//
// Thread-safety: pure functions and a scanner used by one thread.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_WINDOWS_H_
#define ALLOCTRACE_REPLAYER_ENGINE_WINDOWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/thread_schedule.h"

namespace alloctrace {

// One window: ops [lead_begin, begin) replayed untimed, [begin, end) timed,
// standing for `weight` memory ops of the trace (its stratum's).
struct ReplayWindow {
  uint64_t lead_begin = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t weight = 0;
};

// How a plan cuts a trace.
struct WindowShape {
  int strata = 16;              // a window in each: all in a run (rebuilt), or one a round (served)
  uint64_t window_ops = 65536;  // ops timed per window (fewer if the stratum is shorter)
  uint64_t lead_ops = 16384;    // ops replayed untimed before it
  // Served (window_server.h): each contender's windows come from one
  // replay of the trace that runs on from round to round, a window a round,
  // the strata in trace order; a window is the last three quarters of its
  // stratum, after lead_ops (the first quarter) replayed untimed.
  bool served = false;
};

// The windows of a trace of `num_ops` ops, replayed per thread or not
// (`per_thread`), whose rebuilt windows would rebuild up to `rebuild_ops`
// objects and arenas (RebuildOps). Served (ServedShape) for a per-thread
// replay, and where a rebuilt window would rebuild more than half the ops
// it times. Otherwise rebuilt: 16 strata; windows of 1/128 of the trace,
// between 4096 and 65536 ops (about an eighth of the trace timed, and
// never so short that a window's time is a clock's tick); a lead-in of a
// quarter window; a run replays a window of each stratum.
//
// Where the heap is large, rebuilding it is most of what a run costs (on
// a trace of 11 M ops and 2.8 M arenas, 100,000 objects and arenas live,
// 7 windows of 280,000 ops a run spent 39% of a run rebuilding, 31%
// freeing what was left and 10% replaying ops, and cost 0.9x a whole
// run), and a rebuilt heap is young and compact where the trace's own is
// aged by millions of ops: on lru_cache 2000000 a quarter-window lead-in
// read slab/st/single 1.18x glibc malloc's speed where whole runs read 1.6
// to 2.1x (docs/results.md). A served window starts on the trace's own
// heap. A per-thread replay's served child keeps its replay threads, one
// per stream, through the rounds, as a whole run's live through the trace,
// where a rebuilt run would start them afresh for a few windows: on
// traces of 128 threads the default command ran 9 to 16 rounds served, 1
// to 12 rebuilt, in about the same time, at 2 to 7 times the memory
// (docs/results.md, "Many threads").
WindowShape ShapeFor(uint64_t num_ops, uint64_t rebuild_ops = 0, bool per_thread = false);
// Served windows over `num_ops` ops: strata of at least kServedStratumOps
// ops, 4 to 32 of them, each a window after a lead-in of a quarter of it.
// A round costs each contender a stratum's ops (a cycle of rounds, one
// replay of the trace) and times three quarters of them. Between its turns
// the other contenders' replays evict a server's heap from the caches,
// where a whole run's stays: before its lead-in a server reads its private
// memory back in (os_stats.h: WarmPrivateMemory). On lru_cache 2000000
// (slab/st/single, mimalloc, jemalloc against glibc malloc; sets
// interleaved with whole runs of 8 rounds), lead-ins of 3/8 of a
// 440,000-op stratum alone read slab/st/single 1.49, 1.37 and 1.37x where
// whole runs read 1.78, 2.15 and 1.59x, and every policy nearer 1 than
// its whole runs; with the memory read back first, 1.66, 1.66 and 1.50x
// against 1.44, 1.59 and 1.66x (mimalloc 1.33, 1.34, 1.20 against 1.38,
// 1.16, 1.34; jemalloc 1.30, 1.32, 1.32 against 1.19, 1.19, 1.36).
// A window and a whole run time one compiled loop (ReplayOps): separate
// copies read the ratios up to a tenth apart. With it, six such sets read
// the served ratios within about 4% of whole runs (slab/st/single 1.68x
// against 1.74x, mimalloc 1.29x against 1.35x). Strata of 1/8 ran 24 to 184
// rounds where 32 strata run 360 to 500; a lead-in longer than a quarter
// did not move the ratios (docs/results.md).
WindowShape ServedShape(uint64_t num_ops);
inline constexpr uint64_t kServedStratumOps = 262144;

// What a window rebuilds at most: the trace's peak of live objects
// (`peak_live_objects`) plus its peak of live arenas.
uint64_t RebuildOps(const ReplayView& program, uint64_t peak_live_objects);

// The ops a windowed run replays, untimed and timed: each of its rebuilt
// windows rebuilds the heap live at its start (at most `rebuild_ops`) and
// replays its lead-in and its own ops; a served round replays a stratum. A
// windowed run saves time only where this is well below the trace's ops.
uint64_t WindowedRunOps(const WindowShape& shape, uint64_t rebuild_ops);

// The memory ops (alloc, free, realloc) of each stratum of `shape`, in
// order: the plans' weights, counted once.
std::vector<uint64_t> StratumWeights(const ReplayView& program, const WindowShape& shape);

// Round `round`'s windows, drawn from `seed`, in trace order: one per
// stratum (rebuilt), or the round's stratum (served: StrataOfRound), its
// weight scaled so that it stands for all of the trace's memory ops.
std::vector<ReplayWindow> PlanWindows(uint64_t num_ops, const WindowShape& shape,
                                      const std::vector<uint64_t>& weights, uint64_t seed,
                                      int round);

// The strata whose windows round `round` replays: all of them (rebuilt),
// or one, in trace order (served: round modulo the strata).
std::vector<int> StrataOfRound(const WindowShape& shape, int round);

// The windows as one word ("lead:begin:end:weight,..."), and back
// (InvalidArgument for anything else, or windows out of order).
std::string WindowsWord(const std::vector<ReplayWindow>& windows);
absl::StatusOr<std::vector<ReplayWindow>> ParseWindowsWord(const std::string& word,
                                                           uint64_t num_ops);

// An object live at a point of the trace, as it was last allocated.
struct LiveObject {
  uint32_t object;
  uint32_t arena;
  uint64_t bytes;
  uint8_t align_log2;
};

// The trace's state at an op index: the arenas live there (in the order
// they were created), the objects live there (in the order they were
// allocated), and how many reallocs came before it (the index of the next
// in the program's realloc table).
struct TraceState {
  std::vector<uint32_t> arenas;
  std::vector<LiveObject> objects;
  size_t realloc_index = 0;
};

// Walks a program forward once, giving its state at increasing op indexes.
// An op costs a few array writes: each live object (arena) keeps the index
// of the op that allocated (created) it, and a bit per op index marks the
// ops whose object (arena) is still live, so a state is a walk over those
// bits, in trace order, with no sort. Memory: a bit per op and 8 bytes per
// object and arena id. Not thread-safe.
class StateScanner {
 public:
  explicit StateScanner(const ReplayView& program);
  // The state at op index `at`, which is at least the previous call's.
  TraceState StateAt(uint64_t at);
  // Moves to op index `to` (at least the current position); returns the
  // memory ops walked.
  uint64_t Advance(uint64_t to);

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  static constexpr uint64_t kNotLive = ~uint64_t{0};
  // The live ids, each with the op index that (last) inserted it, and a
  // bit set at that op index.
  struct LiveSet {
    LiveSet(size_t ids, uint64_t num_ops) : since(ids, kNotLive), bits((num_ops + 63) / 64, 0) {}
    void Insert(uint32_t id, uint64_t at);
    void Erase(uint32_t id);
    bool Has(uint32_t id) const { return since[id] != kNotLive; }
    // The op indexes below `at` whose id is still live, in order.
    template <typename F>
    void ForEachBefore(uint64_t at, F f) const;
    std::vector<uint64_t> since;  // by id
    std::vector<uint64_t> bits;   // by op index
  };
  void Apply(const ReplayOp& op);

  const ReplayView& program_;
  uint64_t position_ = 0;
  size_t realloc_index_ = 0;
  std::vector<LiveObject> objects_;  // by id; meaningful while live
  LiveSet live_objects_;
  LiveSet live_arenas_;
};

// Each stream's ops before op index `at` (from the schedule's checkpoints,
// then a walk of at most kStreamCountEvery ops): where a served per-thread
// window (thread_window_server.h) starts or ends in each stream.
std::vector<uint32_t> StreamOpsBefore(const ReplayProgram& program, const ThreadSchedule& schedule,
                                      uint64_t at);

// The states a round's windows start from (each at its lead_begin), as
// arrays: window i's arenas are arenas[arena_end[i-1], arena_end[i]) (from
// 0 for the first), its objects likewise, its realloc_index that index.
// The parent makes them once per round (StartStates) and shares them with
// every child of the round (ShareWindowStates, MapSharedWindowStates), so
// a child rebuilds a window's heap without walking the trace up to it
// (measured on an 11 M-op trace of 2.8 M arenas: that walk, a bit per op
// and 24 bytes per object id, was most of a windowed run's time).
struct WindowStates {
  std::vector<uint32_t> arenas;
  std::vector<LiveObject> objects;
  std::vector<uint64_t> arena_end, object_end, realloc_index;  // one per window
};
WindowStates StartStates(const ReplayView& program, const std::vector<ReplayWindow>& windows);

// WindowStates as a child maps them, or as a run reads its own.
struct WindowStatesView {
  const uint32_t* arenas = nullptr;
  const LiveObject* objects = nullptr;
  const uint64_t* arena_end = nullptr;
  const uint64_t* object_end = nullptr;
  const uint64_t* realloc_index = nullptr;
  size_t windows = 0;
};
WindowStatesView ViewOf(const WindowStates& states);

// Window i's start state, by reference into `states`.
struct StateRef {
  const uint32_t* arenas = nullptr;
  size_t num_arenas = 0;
  const LiveObject* objects = nullptr;
  size_t num_objects = 0;
  size_t realloc_index = 0;
};
StateRef StateOf(const WindowStatesView& states, size_t i);

// A memfd holding `states` that children inherit (the caller closes it),
// and the mapping of one: as ShareReplayView and MapSharedReplayView
// (replay_program.h), with their errors.
absl::StatusOr<int> ShareWindowStates(const WindowStates& states);
absl::StatusOr<WindowStatesView> MapSharedWindowStates(int fd);

// The arenas live after ops [from, to) run from `start`, in no particular
// order: a window's blocks in any other arena went with it.
std::vector<uint32_t> ArenasAfter(const ReplayView& program, const StateRef& start, uint64_t from,
                                  uint64_t to);

// The memory ops (alloc, free, realloc) among ops [from, to).
uint64_t MemoryOpsIn(const ReplayView& program, uint64_t from, uint64_t to);

// A windowed run's figures: the passes[0] of `r` (and its ops) become the
// stratified estimate of a whole cold pass from `windows`' figures (each
// window's time per memory op times its weight, summed), so a windowed run
// reads as a whole run everywhere a run is read.
void WindowedEstimate(const std::vector<ReplayWindow>& windows, RunResult* r);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_WINDOWS_H_
