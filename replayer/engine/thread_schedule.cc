#include "alloctrace/replayer/engine/thread_schedule.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"

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
  // freed the id last, a fresh slot, waiting only for that thread's free
  // kReuseWindow frees earlier (while fresh slots last).
  uint32_t Allocated(uint32_t id, const Where& here) {
    uint32_t slot = slot_of_[id];
    const Where last = objects_[slot];
    if (last.thread == kNone || last.thread == here.thread ||
        objects_.size() >= size_t{p_.object_limit} + 1 + kMaxExtraSlots) {
      Touch(slot, here, false);
      return slot;
    }
    slot = static_cast<uint32_t>(objects_.size());
    objects_.push_back(here);
    slot_of_[id] = slot;
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
  return Builder(program, stream_of, std::max<uint32_t>(threads, 1)).Build();
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

// The shared file: this header, the leftovers, a (num_ops, num_waits) pair
// per stream, each stream's ops and waits, then the realloc slots (the
// arrays in order of their alignment).
struct SharedHeader {
  uint64_t magic, threads, sync_points, cross_thread_frees;
  uint64_t slot_limit, num_reallocs, num_leftovers;
};
constexpr uint64_t kScheduleMagic = 0x616c6c6f63743032;  // "alloct02"

}  // namespace

absl::StatusOr<int> ShareThreadSchedule(const ThreadSchedule& s) {
  auto failed = [](const char* call, int error) {
    return absl::InternalError(
        absl::StrCat("cannot share the thread schedule: ", call, ": ", std::strerror(error)));
  };
  // Not close-on-exec: the re-executed child maps it.
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "alloctrace-schedule", 0));
  if (fd < 0) return failed("memfd_create", errno);
  const SharedHeader h{kScheduleMagic,       s.streams.size(), s.sync_points,
                       s.cross_thread_frees, s.slot_limit,     s.realloc_old_slots.size(),
                       s.leftovers.size()};
  std::vector<uint64_t> sizes;
  for (const ThreadStream& t : s.streams) {
    sizes.push_back(t.ops.size());
    sizes.push_back(t.waits.size());
  }
  bool ok = WriteAll(fd, &h, sizeof h) == 0 &&
            WriteAll(fd, s.leftovers.data(), s.leftovers.size() * sizeof(LeftoverBlock)) == 0 &&
            WriteAll(fd, sizes.data(), sizes.size() * sizeof(uint64_t)) == 0;
  for (const ThreadStream& t : s.streams) {
    ok = ok && WriteAll(fd, t.ops.data(), t.ops.size() * sizeof(ReplayOp)) == 0 &&
         WriteAll(fd, t.waits.data(), t.waits.size() * sizeof(SyncWait)) == 0;
  }
  ok = ok &&
       WriteAll(fd, s.realloc_old_slots.data(), s.realloc_old_slots.size() * sizeof(uint32_t)) == 0;
  if (!ok) {
    const int error = errno;
    close(fd);
    return failed("write", error);
  }
  return fd;
}

absl::StatusOr<ThreadScheduleView> MapSharedThreadSchedule(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(SharedHeader))) {
    return absl::InvalidArgumentError("no shared thread schedule on the given fd");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap: ", std::strerror(errno)));
  const char* base = static_cast<const char*>(m);
  const auto* h = reinterpret_cast<const SharedHeader*>(base);
  if (h->magic != kScheduleMagic || h->threads == 0 || h->threads > kMaxReplayThreads ||
      h->num_leftovers > size / sizeof(LeftoverBlock) ||
      h->num_reallocs > size / sizeof(uint32_t) ||
      sizeof *h + h->num_leftovers * sizeof(LeftoverBlock) + 2 * sizeof(uint64_t) * h->threads +
              h->num_reallocs * sizeof(uint32_t) >
          size) {
    return absl::InvalidArgumentError("shared thread schedule is malformed");
  }
  ThreadScheduleView v;
  v.slot_limit = static_cast<uint32_t>(h->slot_limit);
  v.num_leftovers = h->num_leftovers;
  v.leftovers = reinterpret_cast<const LeftoverBlock*>(base + sizeof *h);
  size_t offset = sizeof *h + h->num_leftovers * sizeof(LeftoverBlock);
  const uint64_t* sizes = reinterpret_cast<const uint64_t*>(base + offset);
  offset += 2 * sizeof(uint64_t) * h->threads;
  v.sync_points = h->sync_points;
  v.cross_thread_frees = h->cross_thread_frees;
  for (uint64_t t = 0; t < h->threads; ++t) {
    StreamView s;
    s.num_ops = sizes[2 * t];
    s.num_waits = sizes[2 * t + 1];
    const size_t need = s.num_ops * sizeof(ReplayOp) + s.num_waits * sizeof(SyncWait);
    if (s.num_ops > size || s.num_waits > size || need > size - offset) {
      return absl::InvalidArgumentError("shared thread schedule is malformed");
    }
    s.ops = reinterpret_cast<const ReplayOp*>(base + offset);
    s.waits = reinterpret_cast<const SyncWait*>(base + offset + s.num_ops * sizeof(ReplayOp));
    offset += need;
    v.streams.push_back(s);
  }
  v.realloc_old_slots = reinterpret_cast<const uint32_t*>(base + offset);
  if (offset + h->num_reallocs * sizeof(uint32_t) != size) {
    return absl::InvalidArgumentError("shared thread schedule is malformed");
  }
  return v;
}

}  // namespace alloctrace
