#include "alloctrace/replayer/engine/thread_schedule.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/shared_arrays.h"

namespace alloctrace {
namespace {

constexpr uint32_t kNone = ~uint32_t{0};

// An op of a stream: its thread and its index there.
struct Where {
  uint32_t thread = kNone;
  uint32_t op = 0;
};

class Builder {
 public:
  // `stream_of`: by the trace's dense thread index (op_threads), the
  // stream its ops go to, below `threads`.
  Builder(const ReplayProgram& p, const std::vector<uint32_t>& stream_of, uint32_t threads)
      : p_(p), stream_of_(stream_of), threads_(threads), known_(size_t{threads} * threads, 0) {
    s_.streams.resize(threads);
    objects_.resize(size_t{p.object_limit} + 1);
    allocated_on_.resize(objects_.size(), kNone);
    slot_of_.resize(size_t{p.object_limit} + 1);
    for (uint32_t id = 0; id < slot_of_.size(); ++id) slot_of_[id] = id;
    frees_.resize(threads);
    arenas_.resize(p.arena_limit);
  }

  ThreadSchedule Build() {
    uint32_t realloc_index = 0;
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      const uint32_t t = stream_of_[p_.op_threads[i]];
      ThreadStream& stream = s_.streams[t];
      const Where here{t, static_cast<uint32_t>(stream.ops.size())};
      const ReplayOp& op = p_.ops[i];
      stream.ops.push_back(op);
      ReplayOp& mine = stream.ops.back();
      switch (op.kind) {
        case ReplayKind::kAlloc:
        case ReplayKind::kAllocZeroed:
          mine.object = Allocated(op.object, here);
          TouchArena(op.arena, here);
          break;
        case ReplayKind::kFree:
          mine.object = slot_of_[op.object];
          Touch(mine.object, here, true);
          frees_[t].push_back(here.op);
          TouchArena(op.arena, here);
          break;
        case ReplayKind::kRealloc: {
          const uint32_t old = p_.reallocs[realloc_index].old_object;
          const uint32_t old_slot = slot_of_[old];
          mine.bytes = realloc_index++;
          s_.realloc_old_slots.push_back(old_slot);
          Touch(old_slot, here, true);
          frees_[t].push_back(here.op);
          mine.object = op.object != old ? Allocated(op.object, here) : old_slot;
          TouchArena(op.arena, here);
          break;
        }
        case ReplayKind::kArenaCreate:
        case ReplayKind::kArenaDestroy:
          ArenaEvent(op.arena, here);
          break;
      }
    }
    s_.slot_limit = static_cast<uint32_t>(objects_.size());
    if (p_.live_at_end > 0) FindLeftovers();
    return std::move(s_);
  }

 private:
  struct ArenaState {
    Where event;                                      // last arena event or first use
    std::vector<std::pair<uint32_t, uint32_t>> uses;  // (thread, op) since it
  };

  // Makes `here` wait for `done` unless it is on the same thread or its
  // thread already waited for as far on done's thread.
  void Wait(const Where& here, const Where& done) {
    if (done.thread == kNone || done.thread == here.thread) return;
    uint32_t& known = known_[size_t{here.thread} * threads_ + done.thread];
    const uint32_t count = done.op + 1;
    if (known >= count) return;
    known = count;
    ThreadStream& waiter = s_.streams[here.thread];
    waiter.waits.push_back(SyncWait{here.op, done.thread, count});
    SetFlag(waiter.ops[here.op], kWaitFlag);
    SetFlag(s_.streams[done.thread].ops[done.op], kPublishFlag);
    ++s_.sync_points;
  }
  static void SetFlag(ReplayOp& op, uint8_t flag) {
    op.kind = static_cast<ReplayKind>(static_cast<uint8_t>(op.kind) | flag);
  }

  // An allocation of trace id `id` at `here`: its slot. If another thread
  // freed the id last, a fresh slot (while fresh slots last); it waits for
  // that thread's free kReuseWindow frees earlier only if this thread
  // allocated what that free freed: a hand-off, whose consumer the
  // producer must not outrun. An id that merely passes between threads
  // that share nothing costs no wait.
  uint32_t Allocated(uint32_t id, const Where& here) {
    uint32_t slot = slot_of_[id];
    const Where last = objects_[slot];
    if (last.thread == kNone || last.thread == here.thread ||
        objects_.size() >= size_t{p_.object_limit} + 1 + kMaxExtraSlots) {
      Touch(slot, here, false);
      allocated_on_[slot] = here.thread;
      return slot;
    }
    const bool handed_off = allocated_on_[slot] == here.thread;
    slot = static_cast<uint32_t>(objects_.size());
    objects_.push_back(here);
    allocated_on_.push_back(here.thread);
    slot_of_[id] = slot;
    if (!handed_off) return slot;
    // `last` is a free (ids are reused only once freed), in frees_ of its thread.
    const std::vector<uint32_t>& frees = frees_[last.thread];
    const size_t k =
        static_cast<size_t>(std::lower_bound(frees.begin(), frees.end(), last.op) - frees.begin());
    if (k >= kReuseWindow) Wait(here, Where{last.thread, frees[k - kReuseWindow]});
    return slot;
  }

  // An op on pointer table slot `slot`: waits for whoever touched it last.
  // `frees`: the op frees it (counted if another thread allocated it).
  void Touch(uint32_t slot, const Where& here, bool frees) {
    Where& last = objects_[slot];
    if (frees && last.thread != kNone && last.thread != here.thread) ++s_.cross_thread_frees;
    Wait(here, last);
    last = here;
  }

  void TouchArena(uint32_t arena, const Where& here) {
    if (arena == 0) return;  // always exists, never created or destroyed
    ArenaState& a = arenas_[arena];
    if (a.event.thread == kNone) {
      // Never created: its first use creates it (allocator_concept.h), so
      // it stands in for the creation.
      a.event = here;
    } else {
      Wait(here, a.event);
    }
    for (auto& use : a.uses) {
      if (use.first == here.thread) {
        use.second = here.op;
        return;
      }
    }
    a.uses.emplace_back(here.thread, here.op);
  }

  void ArenaEvent(uint32_t arena, const Where& here) {
    ArenaState& a = arenas_[arena];
    Wait(here, a.event);
    for (const auto& use : a.uses) Wait(here, Where{use.first, use.second});
    a.uses.clear();
    a.event = here;
  }

  // The slots whose last op allocated them: what the trace leaves live.
  void FindLeftovers() {
    for (uint32_t slot = 0; slot < objects_.size(); ++slot) {
      const Where& last = objects_[slot];
      if (last.thread == kNone) continue;
      const ReplayOp& op = s_.streams[last.thread].ops[last.op];
      const auto kind = static_cast<ReplayKind>(static_cast<uint8_t>(op.kind) & kKindMask);
      if (op.object != slot) continue;  // a realloc that freed the slot
      uint64_t bytes;
      if (kind == ReplayKind::kRealloc) {
        bytes = p_.reallocs[op.bytes].new_bytes;
      } else if (kind == ReplayKind::kAlloc || kind == ReplayKind::kAllocZeroed) {
        bytes = op.bytes != kBigSize ? op.bytes : p_.big_sizes[op.aux];
      } else {
        continue;  // freed
      }
      s_.leftovers.push_back(LeftoverBlock{slot, op.arena, bytes, op.align_log2});
    }
  }

  const ReplayProgram& p_;
  const std::vector<uint32_t>& stream_of_;
  const uint32_t threads_;
  ThreadSchedule s_;
  // known_[b * threads + a]: ops of thread a that thread b has waited for.
  std::vector<uint32_t> known_;
  std::vector<Where> objects_;                // by slot: the last op that touched it
  std::vector<uint32_t> allocated_on_;        // by slot: the thread that allocated it last
  std::vector<uint32_t> slot_of_;             // by trace object id: its slot now
  std::vector<std::vector<uint32_t>> frees_;  // by thread: its frees' ops, in order
  std::vector<ArenaState> arenas_;
};

}  // namespace

absl::StatusOr<ThreadSchedule> BuildThreadSchedule(const ReplayProgram& program) {
  if (program.threads > kMaxReplayThreads) {
    return absl::ResourceExhaustedError(
        absl::StrCat(program.path, ": the trace names ", program.threads,
                     " threads; the per-thread replay runs at most ", kMaxReplayThreads,
                     " (one OS thread each); --threads=one replays it on one thread"));
  }
  if (program.op_threads.size() != program.ops.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(program.path, ": no thread per op (a one-thread trace)"));
  }
  // One stream per thread that made an op, numbered in order of its first
  // op: the decoder's dense thread indexes also count threads that made no
  // memory op (as a trace's thread 0 when its events are on threads 1 and
  // 2), which would otherwise get empty streams or lie past the count.
  constexpr uint32_t kNone = ~uint32_t{0};
  std::vector<uint32_t> stream_of;
  uint32_t threads = 0;
  for (uint32_t t : program.op_threads) {
    // Dense indexes are below the trace's distinct thread count.
    if (t >= stream_of.size()) stream_of.resize(size_t{t} + 1, kNone);
    if (stream_of[t] == kNone) {
      if (threads == kMaxReplayThreads) {
        return absl::ResourceExhaustedError(absl::StrCat(
            program.path, ": the trace's memory ops are on more than ", kMaxReplayThreads,
            " threads; the per-thread replay runs at most ", kMaxReplayThreads,
            " (one OS thread each); --threads=one replays it on one thread"));
      }
      stream_of[t] = threads++;
    }
  }
  ThreadSchedule schedule = Builder(program, stream_of, std::max<uint32_t>(threads, 1)).Build();
  const uint32_t streams = static_cast<uint32_t>(schedule.streams.size());
  std::vector<uint32_t> done(streams, 0);
  for (uint64_t i = 0; i <= program.ops.size(); ++i) {
    if (i % kStreamCountEvery == 0) {
      schedule.stream_counts.insert(schedule.stream_counts.end(), done.begin(), done.end());
    }
    if (i < program.ops.size()) ++done[stream_of[program.op_threads[i]]];
  }
  schedule.stream_of = std::move(stream_of);
  return schedule;
}

ThreadScheduleView ViewOf(const ThreadSchedule& s) {
  ThreadScheduleView v;
  for (const ThreadStream& t : s.streams) {
    v.streams.push_back(StreamView{t.ops.data(), t.ops.size(), t.waits.data(), t.waits.size()});
  }
  v.slot_limit = s.slot_limit;
  v.realloc_old_slots = s.realloc_old_slots.data();
  v.leftovers = s.leftovers.data();
  v.num_leftovers = s.leftovers.size();
  v.sync_points = s.sync_points;
  v.cross_thread_frees = s.cross_thread_frees;
  return v;
}

namespace {

constexpr uint64_t kScheduleKind = 0x7363686564756c33;  // "schedul3": its layout's version
constexpr char kWhat[] = "thread schedule";

}  // namespace

// The shared file's scalars: the threads, sync points, cross-thread frees
// and slot limit; its sections: the leftovers, the realloc slots, then each
// stream's ops and waits.
absl::StatusOr<int> ShareThreadSchedule(const ThreadSchedule& s) {
  std::vector<SharedSection> sections = {
      SharedSection::Of(s.leftovers.data(), s.leftovers.size()),
      SharedSection::Of(s.realloc_old_slots.data(), s.realloc_old_slots.size())};
  for (const ThreadStream& t : s.streams) {
    sections.push_back(SharedSection::Of(t.ops.data(), t.ops.size()));
    sections.push_back(SharedSection::Of(t.waits.data(), t.waits.size()));
  }
  return WriteSharedArrays("alloctrace-schedule", kWhat, kScheduleKind,
                           {s.streams.size(), s.sync_points, s.cross_thread_frees, s.slot_limit},
                           sections);
}

absl::StatusOr<ThreadScheduleView> MapSharedThreadSchedule(int fd) {
  absl::StatusOr<MappedArrays> m = MapSharedArrays(fd, kWhat, kScheduleKind);
  if (!m.ok()) return m.status();
  const uint64_t threads = m->scalars.empty() ? 0 : m->scalars[0];
  std::vector<size_t> sizes = {sizeof(LeftoverBlock), sizeof(uint32_t)};
  for (uint64_t t = 0; t < threads && t <= kMaxReplayThreads; ++t) {
    sizes.push_back(sizeof(ReplayOp));
    sizes.push_back(sizeof(SyncWait));
  }
  if (threads == 0 || threads > kMaxReplayThreads || !m->Has(4, sizes)) {
    return absl::InvalidArgumentError("shared thread schedule is malformed");
  }
  ThreadScheduleView v;
  v.sync_points = m->scalars[1];
  v.cross_thread_frees = m->scalars[2];
  v.slot_limit = static_cast<uint32_t>(m->scalars[3]);
  v.leftovers = m->As<LeftoverBlock>(0);
  v.num_leftovers = m->sections[0].count;
  v.realloc_old_slots = m->As<uint32_t>(1);
  for (uint64_t t = 0; t < threads; ++t) {
    StreamView stream;
    stream.ops = m->As<ReplayOp>(2 + 2 * t);
    stream.num_ops = m->sections[2 + 2 * t].count;
    stream.waits = m->As<SyncWait>(3 + 2 * t);
    stream.num_waits = m->sections[3 + 2 * t].count;
    v.streams.push_back(stream);
  }
  return v;
}

}  // namespace alloctrace
