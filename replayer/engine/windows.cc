// The windows of windows.h: their plans, the start states a rebuilt window
// needs, and their sharing with the children through a memfd.
#include "alloctrace/replayer/engine/windows.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/shared_arrays.h"

namespace alloctrace {
namespace {

bool IsMemoryOp(ReplayKind k) {
  return k == ReplayKind::kAlloc || k == ReplayKind::kAllocZeroed || k == ReplayKind::kFree ||
         k == ReplayKind::kRealloc;
}

uint64_t StratumBegin(uint64_t num_ops, int strata, int i) {
  return num_ops * static_cast<uint64_t>(i) / static_cast<uint64_t>(strata);
}

}  // namespace

WindowShape ServedShape(uint64_t num_ops) {
  WindowShape s;
  s.served = true;
  s.strata = static_cast<int>(std::clamp<uint64_t>(num_ops / kServedStratumOps, 4, 32));
  const uint64_t length = num_ops / static_cast<uint64_t>(s.strata);
  s.lead_ops = length / 4;
  s.window_ops = length - s.lead_ops;
  return s;
}

WindowShape ShapeFor(uint64_t num_ops, uint64_t rebuild_ops, bool per_thread) {
  WindowShape s;
  s.window_ops = std::clamp<uint64_t>(num_ops / 128, 4096, 65536);
  if (per_thread || 2 * rebuild_ops > s.window_ops) return ServedShape(num_ops);
  s.lead_ops = s.window_ops / 4;
  return s;
}

std::vector<int> StrataOfRound(const WindowShape& shape, int round) {
  if (shape.served) {
    const int k = round % shape.strata;
    return {k < 0 ? k + shape.strata : k};
  }
  std::vector<int> all(shape.strata);
  for (int i = 0; i < shape.strata; ++i) all[i] = i;
  return all;
}

uint64_t RebuildOps(const ReplayView& program, uint64_t peak_live_objects) {
  uint64_t live_arenas = 0, peak_arenas = 0;
  for (uint64_t i = 0; i < program.num_ops; ++i) {
    const ReplayKind k = program.ops[i].kind;
    if (k == ReplayKind::kArenaCreate) peak_arenas = std::max(peak_arenas, ++live_arenas);
    if (k == ReplayKind::kArenaDestroy && live_arenas > 0) --live_arenas;
  }
  return peak_live_objects + peak_arenas;
}

uint64_t WindowedRunOps(const WindowShape& shape, uint64_t rebuild_ops) {
  if (shape.served) return shape.lead_ops + shape.window_ops;  // nothing rebuilt
  return static_cast<uint64_t>(shape.strata) * (rebuild_ops + shape.lead_ops + shape.window_ops);
}

std::vector<uint64_t> StratumWeights(const ReplayView& program, const WindowShape& shape) {
  std::vector<uint64_t> weights(shape.strata, 0);
  for (int i = 0; i < shape.strata; ++i) {
    const uint64_t end = StratumBegin(program.num_ops, shape.strata, i + 1);
    for (uint64_t k = StratumBegin(program.num_ops, shape.strata, i); k < end; ++k) {
      weights[i] += IsMemoryOp(program.ops[k].kind);
    }
  }
  return weights;
}

std::vector<ReplayWindow> PlanWindows(uint64_t num_ops, const WindowShape& shape,
                                      const std::vector<uint64_t>& weights, uint64_t seed,
                                      int round) {
  // One generator per round, the same for every contender of it.
  std::seed_seq seq{seed, static_cast<uint64_t>(round), uint64_t{0x77696e646f77}};
  std::mt19937_64 rng(seq);
  std::vector<ReplayWindow> plan;
  uint64_t previous_end = 0;  // a lead-in never reaches into the window before it
  uint64_t total = 0, chosen = 0;
  for (uint64_t w : weights) total += w;
  for (int i : StrataOfRound(shape, round)) {
    const uint64_t from = StratumBegin(num_ops, shape.strata, i);
    const uint64_t to = StratumBegin(num_ops, shape.strata, i + 1);
    if (to <= from || weights[i] == 0) continue;  // a stratum of arena events only
    ReplayWindow w;
    if (shape.served) {  // the stratum, its first quarter untimed
      w.lead_begin = from;
      w.begin = from + (to - from) / 4;
      w.end = to;
      w.weight = weights[i];
      chosen += weights[i];
      plan.push_back(w);
      continue;
    }
    const uint64_t length = std::min(shape.window_ops, to - from);
    const uint64_t begin = from + (to - from == length ? 0 : rng() % (to - from - length + 1));
    w.begin = begin;
    w.end = begin + length;
    w.lead_begin = std::max(previous_end, begin - std::min(shape.lead_ops, begin));
    w.weight = weights[i];
    chosen += weights[i];
    previous_end = w.end;
    plan.push_back(w);
  }
  // A served round's stratum stands for the whole trace: its weight scaled
  // to the trace's memory ops.
  if (chosen > 0 && chosen < total) {
    for (ReplayWindow& w : plan) {
      w.weight = static_cast<uint64_t>(
          std::llround(static_cast<double>(w.weight) * static_cast<double>(total) /
                       static_cast<double>(chosen)));
    }
  }
  return plan;
}

std::string WindowsWord(const std::vector<ReplayWindow>& windows) {
  return absl::StrJoin(windows, ",", [](std::string* out, const ReplayWindow& w) {
    absl::StrAppend(out, w.lead_begin, ":", w.begin, ":", w.end, ":", w.weight);
  });
}

absl::StatusOr<std::vector<ReplayWindow>> ParseWindowsWord(const std::string& word,
                                                           uint64_t num_ops) {
  std::vector<ReplayWindow> out;
  const auto bad = absl::InvalidArgumentError(absl::StrCat("malformed windows '", word, "'"));
  uint64_t previous_end = 0;
  for (absl::string_view part : absl::StrSplit(word, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(part, ':');
    ReplayWindow w;
    if (f.size() != 4 || !absl::SimpleAtoi(f[0], &w.lead_begin) ||
        !absl::SimpleAtoi(f[1], &w.begin) || !absl::SimpleAtoi(f[2], &w.end) ||
        !absl::SimpleAtoi(f[3], &w.weight) || w.lead_begin > w.begin || w.begin >= w.end ||
        w.end > num_ops || w.lead_begin < previous_end) {
      return bad;
    }
    previous_end = w.end;
    out.push_back(w);
  }
  if (out.empty()) return bad;
  return out;
}

StateScanner::StateScanner(const ReplayView& program)
    : program_(program),
      objects_(program.object_limit + 1),
      live_objects_(program.object_limit + 1, program.num_ops),
      live_arenas_(program.arena_limit, program.num_ops) {}

void StateScanner::LiveSet::Insert(uint32_t id, uint64_t at) {
  Erase(id);
  since[id] = at;
  bits[at / 64] |= uint64_t{1} << (at % 64);
}

void StateScanner::LiveSet::Erase(uint32_t id) {
  const uint64_t at = since[id];
  if (at == kNotLive) return;
  bits[at / 64] &= ~(uint64_t{1} << (at % 64));
  since[id] = kNotLive;
}

template <typename F>
void StateScanner::LiveSet::ForEachBefore(uint64_t at, F f) const {
  for (uint64_t w = 0; w * 64 < at; ++w) {
    uint64_t word = bits[w];
    if (at - w * 64 < 64) word &= (uint64_t{1} << (at - w * 64)) - 1;
    while (word != 0) {
      f(w * 64 + static_cast<uint64_t>(__builtin_ctzll(word)));
      word &= word - 1;
    }
  }
}

void StateScanner::Apply(const ReplayOp& op) {
  const uint64_t at = position_;
  auto allocated = [&](uint32_t id, uint64_t bytes) {
    // A re-allocation of a live id moves it to the end of the order.
    live_objects_.Insert(id, at);
    objects_[id] = LiveObject{id, op.arena, bytes, op.align_log2};
  };
  switch (op.kind) {
    case ReplayKind::kAlloc:
    case ReplayKind::kAllocZeroed:
      allocated(op.object, op.bytes != kBigSize ? op.bytes : program_.big_sizes[op.aux]);
      break;
    case ReplayKind::kFree:
      live_objects_.Erase(op.object);
      break;
    case ReplayKind::kRealloc: {
      const ReallocInfo& info = program_.reallocs[realloc_index_++];
      live_objects_.Erase(info.old_object);
      allocated(op.object, info.new_bytes);
      break;
    }
    case ReplayKind::kArenaCreate:
      // Created again while live keeps its first creation's place.
      if (!live_arenas_.Has(op.arena)) live_arenas_.Insert(op.arena, at);
      break;
    case ReplayKind::kArenaDestroy:
      live_arenas_.Erase(op.arena);
      break;
  }
}

uint64_t StateScanner::Advance(uint64_t to) {
  uint64_t memory_ops = 0;
  for (; position_ < to && position_ < program_.num_ops; ++position_) {
    const ReplayOp& op = program_.ops[position_];
    memory_ops += IsMemoryOp(op.kind);
    Apply(op);
  }
  return memory_ops;
}

TraceState StateScanner::StateAt(uint64_t at) {
  Advance(at);
  TraceState s;
  s.realloc_index = realloc_index_;
  live_arenas_.ForEachBefore(position_,
                             [&](uint64_t i) { s.arenas.push_back(program_.ops[i].arena); });
  live_objects_.ForEachBefore(
      position_, [&](uint64_t i) { s.objects.push_back(objects_[program_.ops[i].object]); });
  return s;
}

WindowStates StartStates(const ReplayView& program, const std::vector<ReplayWindow>& windows) {
  WindowStates out;
  StateScanner scanner(program);
  for (const ReplayWindow& w : windows) {
    const TraceState s = scanner.StateAt(w.lead_begin);
    out.arenas.insert(out.arenas.end(), s.arenas.begin(), s.arenas.end());
    out.objects.insert(out.objects.end(), s.objects.begin(), s.objects.end());
    out.arena_end.push_back(out.arenas.size());
    out.object_end.push_back(out.objects.size());
    out.realloc_index.push_back(s.realloc_index);
  }
  return out;
}

WindowStatesView ViewOf(const WindowStates& s) {
  return WindowStatesView{s.arenas.data(),     s.objects.data(),       s.arena_end.data(),
                          s.object_end.data(), s.realloc_index.data(), s.arena_end.size()};
}

StateRef StateOf(const WindowStatesView& s, size_t i) {
  const uint64_t a0 = i == 0 ? 0 : s.arena_end[i - 1];
  const uint64_t o0 = i == 0 ? 0 : s.object_end[i - 1];
  return StateRef{s.arenas + a0, s.arena_end[i] - a0, s.objects + o0, s.object_end[i] - o0,
                  s.realloc_index[i]};
}

std::vector<uint32_t> StreamOpsBefore(const ReplayProgram& program, const ThreadSchedule& schedule,
                                      uint64_t at) {
  const uint32_t threads = static_cast<uint32_t>(schedule.streams.size());
  at = std::min<uint64_t>(at, program.ops.size());
  std::vector<uint32_t> done(threads, 0);
  uint64_t from = 0;
  const uint64_t k = at / kStreamCountEvery;
  if (schedule.stream_counts.size() ==
      (program.ops.size() / kStreamCountEvery + 1) * size_t{threads}) {
    const uint32_t* counts = schedule.stream_counts.data() + k * threads;
    done.assign(counts, counts + threads);
    from = k * kStreamCountEvery;
  }
  for (uint64_t i = from; i < at; ++i) ++done[schedule.stream_of[program.op_threads[i]]];
  return done;
}

std::vector<uint32_t> ArenasAfter(const ReplayView& program, const StateRef& start, uint64_t from,
                                  uint64_t to) {
  absl::flat_hash_set<uint32_t> arenas(start.arenas, start.arenas + start.num_arenas);
  for (uint64_t i = from; i < to && i < program.num_ops; ++i) {
    const ReplayOp& op = program.ops[i];
    if (op.kind == ReplayKind::kArenaCreate) arenas.insert(op.arena);
    if (op.kind == ReplayKind::kArenaDestroy) arenas.erase(op.arena);
  }
  return std::vector<uint32_t>(arenas.begin(), arenas.end());
}

uint64_t MemoryOpsIn(const ReplayView& program, uint64_t from, uint64_t to) {
  uint64_t n = 0;
  for (uint64_t i = from; i < to && i < program.num_ops; ++i) n += IsMemoryOp(program.ops[i].kind);
  return n;
}

namespace {

constexpr uint64_t kStatesKind = 0x77696e7374617433;  // "winstat3": its layout's version
constexpr char kStatesWhat[] = "window states";

}  // namespace

absl::StatusOr<int> ShareWindowStates(const WindowStates& s) {
  return WriteSharedArrays("alloctrace-windows", kStatesWhat, kStatesKind, {s.arena_end.size()},
                           {SharedSection::Of(s.arenas.data(), s.arenas.size()),
                            SharedSection::Of(s.objects.data(), s.objects.size()),
                            SharedSection::Of(s.arena_end.data(), s.arena_end.size()),
                            SharedSection::Of(s.object_end.data(), s.object_end.size()),
                            SharedSection::Of(s.realloc_index.data(), s.realloc_index.size())});
}

absl::StatusOr<WindowStatesView> MapSharedWindowStates(int fd) {
  absl::StatusOr<MappedArrays> m = MapSharedArrays(fd, kStatesWhat, kStatesKind);
  if (!m.ok()) return m.status();
  const bool sized = m->Has(1, {sizeof(uint32_t), sizeof(LiveObject), sizeof(uint64_t),
                                sizeof(uint64_t), sizeof(uint64_t)});
  const uint64_t n = sized ? m->scalars[0] : 0;
  if (!sized || m->sections[2].count != n || m->sections[3].count != n ||
      m->sections[4].count != n ||
      (n > 0 && (m->As<uint64_t>(2)[n - 1] != m->sections[0].count ||
                 m->As<uint64_t>(3)[n - 1] != m->sections[1].count))) {
    return absl::InvalidArgumentError("shared window states are malformed");
  }
  for (uint64_t i = 1; i < n; ++i) {
    if (m->As<uint64_t>(2)[i] < m->As<uint64_t>(2)[i - 1] ||
        m->As<uint64_t>(3)[i] < m->As<uint64_t>(3)[i - 1]) {
      return absl::InvalidArgumentError("shared window states are malformed");
    }
  }
  return WindowStatesView{m->As<uint32_t>(0), m->As<LiveObject>(1), m->As<uint64_t>(2),
                          m->As<uint64_t>(3), m->As<uint64_t>(4),   n};
}

void WindowedEstimate(const std::vector<ReplayWindow>& windows, RunResult* r) {
  PassFigures estimate;
  uint64_t total = 0;
  for (size_t i = 0; i < r->windows.size() && i < windows.size(); ++i) {
    const WindowFigures& w = r->windows[i];
    if (w.ops == 0) continue;
    const double scale = static_cast<double>(windows[i].weight) / static_cast<double>(w.ops);
    estimate.wall_seconds += w.figures.wall_seconds * scale;
    estimate.cpu_seconds += w.figures.cpu_seconds * scale;
    estimate.minor_faults +=
        static_cast<int64_t>(static_cast<double>(w.figures.minor_faults) * scale);
    estimate.major_faults +=
        static_cast<int64_t>(static_cast<double>(w.figures.major_faults) * scale);
    estimate.involuntary_switches += w.figures.involuntary_switches;
    estimate.voluntary_switches += w.figures.voluntary_switches;
    estimate.wait_seconds += w.figures.wait_seconds * scale;
    total += windows[i].weight;
  }
  r->ops = total;
  r->passes = {estimate};
  r->seconds = estimate.wall_seconds;
  r->minor_faults = estimate.minor_faults;
  r->major_faults = estimate.major_faults;
}

}  // namespace alloctrace
