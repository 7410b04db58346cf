#include "replayer/replay_program.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/io.h"
#include "format/arena_usage.h"
#include "format/trace_reader.h"

namespace alloctrace {

namespace {

struct SharedHeader {
  uint64_t magic;
  uint64_t num_ops, num_big, num_reallocs;
  uint64_t object_limit, arena_limit, memory_ops, live_at_end;
};
constexpr uint64_t kSharedMagic = 0x616c6c6f63763032;  // "allocv02"

}  // namespace

absl::StatusOr<int> ShareReplayView(const ReplayView& v) {
  auto failed = [](const char* call, int error) {
    return absl::InternalError(
        absl::StrCat("cannot share the replay program: ", call, ": ", std::strerror(error)));
  };
  // Not close-on-exec: the re-executed child maps it.
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "alloctrace-replay", 0));
  if (fd < 0) return failed("memfd_create", errno);
  uint64_t num_big = 0, num_reallocs = 0;
  for (size_t i = 0; i < v.num_ops; ++i) {
    if (v.ops[i].bytes == kBigSize) num_big = std::max<uint64_t>(num_big, v.ops[i].aux + 1);
    num_reallocs += v.ops[i].kind == ReplayKind::kRealloc;
  }
  const SharedHeader h{kSharedMagic, v.num_ops, num_big, num_reallocs,
                       v.object_limit, v.arena_limit, v.memory_ops, v.live_at_end};
  if (WriteAll(fd, &h, sizeof h) != 0 || WriteAll(fd, v.ops, v.num_ops * sizeof(ReplayOp)) != 0 ||
      WriteAll(fd, v.big_sizes, num_big * sizeof(uint64_t)) != 0 ||
      WriteAll(fd, v.reallocs, num_reallocs * sizeof(ReallocInfo)) != 0) {
    const int error = errno;
    close(fd);
    return failed("write", error);
  }
  return fd;
}

absl::StatusOr<ReplayView> MapSharedReplayView(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(SharedHeader))) {
    return absl::InvalidArgumentError("no shared replay program on the given fd");
  }
  void* m = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap: ", std::strerror(errno)));
  const auto* h = static_cast<const SharedHeader*>(m);
  const size_t need = sizeof *h + h->num_ops * sizeof(ReplayOp) +
                      h->num_big * sizeof(uint64_t) + h->num_reallocs * sizeof(ReallocInfo);
  if (h->magic != kSharedMagic || need != static_cast<size_t>(st.st_size)) {
    return absl::InvalidArgumentError("shared replay program is malformed");
  }
  const char* p = static_cast<const char*>(m) + sizeof *h;
  ReplayView v;
  v.ops = reinterpret_cast<const ReplayOp*>(p);
  v.num_ops = h->num_ops;
  p += h->num_ops * sizeof(ReplayOp);
  v.big_sizes = reinterpret_cast<const uint64_t*>(p);
  p += h->num_big * sizeof(uint64_t);
  v.reallocs = reinterpret_cast<const ReallocInfo*>(p);
  v.object_limit = static_cast<uint32_t>(h->object_limit);
  v.arena_limit = static_cast<uint32_t>(h->arena_limit);
  v.memory_ops = h->memory_ops;
  v.live_at_end = h->live_at_end;
  return v;
}

namespace {

// The op array is built in blocks and joined once at the end. A vector grown
// by doubling would copy every op again at each doubling and, during the
// last one, hold up to three times the final array (48 bytes an op).
// When the number of ops is known ahead (from the footer), the first block
// is that large and becomes the array itself: no join, no copy, and every
// page of the array is faulted in once instead of twice.
class OpBlocks {
 public:
  // `expected`: how many ops there will be, 0 if unknown. More ops than
  // that are still fine (they go to further blocks).
  explicit OpBlocks(size_t expected) {
    if (expected > 0) current_.reserve(expected);
  }
  // Appends an op, its fields stored straight into the array (no op
  // assembled field by field on the stack and then copied whole).
  void Append(uint32_t object, uint32_t bytes, uint32_t arena, ReplayKind kind,
              uint8_t align_log2, uint16_t aux) {
    if (ABSL_PREDICT_FALSE(current_.size() == populated_)) Populate();
    ReplayOp& op = current_.emplace_back();
    op.object = object;
    op.bytes = bytes;
    op.arena = arena;
    op.kind = kind;
    op.align_log2 = align_log2;
    op.aux = aux;
  }
  // Moves every op into *out (exactly sized), freeing each block once copied.
  void JoinInto(std::vector<ReplayOp>* out) {
    if (full_.empty()) {  // one block: it is the array
      *out = std::move(current_);
      return;
    }
    size_t total = current_.size();
    for (const std::vector<ReplayOp>& block : full_) total += block.size();
    out->clear();
    out->reserve(total);
    for (std::vector<ReplayOp>& block : full_) {
      out->insert(out->end(), block.begin(), block.end());
      std::vector<ReplayOp>().swap(block);
    }
    out->insert(out->end(), current_.begin(), current_.end());
    std::vector<ReplayOp>().swap(current_);
    full_.clear();
  }

 private:
  // Blocks double from 4 Ki ops (a small trace costs little) to 1 Mi ops
  // (16 MiB: the most a join holds beyond the final array).
  static constexpr size_t kFirstBlockOps = size_t{1} << 12;
  static constexpr size_t kMaxBlockOps = size_t{1} << 20;
  // Filling a fresh array takes a page fault every 256 ops; asking the
  // kernel to map the next stretch in one call (MADV_POPULATE_WRITE, Linux
  // 5.14) saves most of their cost. A stretch at a time, so no more memory
  // is committed than is about to be used. Where the call fails the pages
  // fault in as before.
  static constexpr size_t kPopulateOps = size_t{1} << 19;  // 8 MiB
  ABSL_ATTRIBUTE_NOINLINE void Populate() {
    if (current_.size() == current_.capacity()) NextBlock();
    const size_t end = std::min(current_.capacity(), current_.size() + kPopulateOps);
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t from = (reinterpret_cast<uintptr_t>(current_.data() + current_.size()) +
                            page - 1) & ~(page - 1);
    const uintptr_t to = reinterpret_cast<uintptr_t>(current_.data() + end) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
    if (from < to) madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#endif
    populated_ = end;
  }
  ABSL_ATTRIBUTE_NOINLINE void NextBlock() {
    const size_t next =
        current_.capacity() == 0 ? kFirstBlockOps : std::min(2 * current_.capacity(), kMaxBlockOps);
    if (!current_.empty()) full_.push_back(std::move(current_));
    current_ = std::vector<ReplayOp>();
    current_.reserve(next);
  }

  std::vector<std::vector<ReplayOp>> full_;
  std::vector<ReplayOp> current_;
  size_t populated_ = 0;  // ops of current_ mapped ahead
};

// Asks for the cache line at `address`, which may be any address (a
// prefetch never faults). GCC 12 silently drops __builtin_prefetch in the
// builder's loop, depending on what else is inlined there (a bounds check
// before it, or the reader's scout inlined into the loop), which cost over
// half the speed on traces with a million live objects; an asm statement
// is always kept.
inline void PrefetchAddress(uintptr_t address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 (%0)" : : "r"(address));
#else
  __builtin_prefetch(reinterpret_cast<const void*>(address));
#endif
}

// "reading PATH: 42% (12 M events)" on stderr, only when it is a terminal.
class Progress {
 public:
  explicit Progress(const std::string& path) : path_(path), on_(isatty(STDERR_FILENO) == 1) {}
  void Update(const TraceReader& reader) {
    if (!on_ || ++calls_ % 16 != 0) return;
    const double done = reader.file_size() == 0 ? 1.0 : double(reader.offset()) / reader.file_size();
    std::fprintf(stderr, "\r\033[Kreading %s: %d%% (%llu M events)", path_.c_str(),
                 static_cast<int>(100 * done),
                 static_cast<unsigned long long>(reader.events_read() / 1000000));
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  const std::string& path_;
  const bool on_;
  uint64_t calls_ = 0;
  bool shown_ = false;
};

}  // namespace

absl::StatusOr<ReplayProgram> LoadReplayProgram(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  ReplayProgram p;
  p.path = path;
  p.header = reader.header();
  Progress progress(path);
  // A program takes an op per event at most. The footer's count is only a
  // claim until it is checked at the end of the file (a trace whose footer
  // disagrees is refused then); so it is used only where a wrong count
  // costs nothing but speed, and not if the array could not fit in memory.
  const uint64_t expected_ops = reader.footer_events_hint();
  const uint64_t memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  OpBlocks ops(expected_ops <= memory / sizeof(ReplayOp) ? expected_ops : 0);
  // What an op takes from a shape, worked out once per shape instead of
  // once per event.
  struct ShapeOp {
    uint64_t bytes;
    ReplayKind alloc_kind;
    uint8_t align_log2;
  };
  // By the trace's shape index. Index kVariant + i is variant_ops[i]: a
  // shape with the alignment of the object a REALLOC replaced (a realloc
  // keeps its block's alignment), made only where that differs from the
  // shape's own, once per (shape, alignment).
  constexpr uint32_t kVariant = uint32_t{1} << 31;
  std::vector<ShapeOp> shape_ops, variant_ops;
  absl::flat_hash_map<std::pair<uint32_t, uint8_t>, uint32_t> variant_index;
  // By object id: what a later free or realloc of the object needs. The
  // reader keeps ids dense, so these are as long as the trace's id count.
  // One 8-byte record per id (sizes and alignments are in the shape
  // table, which stays in cache): a free costs one cache miss, and a
  // million live objects take 8 MB, not 16.
  struct ObjectInfo {
    uint32_t shape;  // index into shape_ops, or kVariant + index into variant_ops
    uint32_t arena;
  };
  std::vector<ObjectInfo> objects;
  uint64_t live_bytes = 0, live_objects = 0;
  // By dense arena index. Arenas destroyed while objects of theirs are still
  // live (possible in a whole-program trace) are destroyed in the replay
  // after their last free, so a pool released with its arena is never used
  // afterwards.
  // Threads and live blocks by arena (format/arena_usage.h).
  ArenaUsage usage;
  std::vector<uint8_t> arena_pending_destroy;
  uint64_t event_index = 0;

  // Adds a size of 4 GiB or more to big_sizes, for an op whose bytes are
  // kBigSize and aux its index (returned).
  auto add_big_size = [&](uint64_t bytes) -> absl::StatusOr<uint16_t> {
    if (p.big_sizes.size() >= 0xffff) {
      return absl::UnimplementedError(absl::StrCat(
          p.path, ": event ", event_index,
          ": more than 65535 allocations of 4 GiB or more (the replay program's limit)"));
    }
    p.big_sizes.push_back(bytes);
    return static_cast<uint16_t>(p.big_sizes.size() - 1);
  };

  // The record of the object an event frees, fetched from memory while the
  // decoder works through the ops before it (the reader's on_ahead): with a
  // million live objects the table is far larger than the caches, and
  // waiting for it is most of the builder's time otherwise.
  // The id is unvalidated and may lie past the table: the address is
  // computed as an integer (no out-of-range pointer) and a prefetch of any
  // address cannot fault.
  auto prefetch = [&](uint32_t object) {
    PrefetchAddress(reinterpret_cast<uintptr_t>(objects.data()) +
                    uintptr_t{object} * sizeof(ObjectInfo));
  };
  arena_pending_destroy.resize(1, 0);  // index 0: no arena
  // Tables by id grow as new ids appear (vector::resize grows the capacity
  // geometrically, so this is amortized linear); ids past them come only
  // with ALLOC, REALLOC (new object) and ARENA_CREATE.
  auto cover_object = [&](uint32_t object) {
    if (ABSL_PREDICT_FALSE(object >= objects.size())) objects.resize(size_t{object} + 1);
  };
  // The reader adds shapes as chunks define them; an event's shape is
  // below reader.shapes().size().
  auto add_shapes = [&]() -> absl::Status {
    const std::vector<Shape>& shapes = reader.shapes();
    if (shapes.size() > kVariant) {
      return absl::UnimplementedError(
          absl::StrCat(p.path, ": event ", event_index, ": more than ", kVariant,
                       " shapes (the replay program's limit)"));
    }
    for (size_t i = shape_ops.size(); i < shapes.size(); ++i) {
      const Shape& s = shapes[i];
      shape_ops.push_back(ShapeOp{s.bytes(),
                                  s.zeroed ? ReplayKind::kAllocZeroed : ReplayKind::kAlloc,
                                  static_cast<uint8_t>(__builtin_ctzll(s.align))});
    }
    return absl::OkStatus();
  };
  auto shape_op = [&](uint32_t shape) -> ShapeOp {
    return ABSL_PREDICT_TRUE(shape < kVariant) ? shape_ops[shape] : variant_ops[shape - kVariant];
  };
  // `shape` with alignment align_log2 instead of its own.
  auto variant = [&](uint32_t shape, uint8_t align_log2) -> uint32_t {
    const uint32_t next = kVariant + static_cast<uint32_t>(variant_ops.size());
    auto [it, added] = variant_index.try_emplace(std::make_pair(shape, align_log2), next);
    if (added) {
      ShapeOp v = shape_ops[shape];
      v.align_log2 = align_log2;
      variant_ops.push_back(v);
    }
    return it->second;
  };
  // Each case works out the op's fields as scalars; OpBlocks::Append
  // stores them.
  auto on_event = [&](const Event& e) -> absl::Status {
    ReplayKind kind;
    uint32_t object = 0, arena, bytes = 0;
    uint8_t align_log2 = 0;
    uint16_t aux = 0;
    // Sizes of 4 GiB or more go to big_sizes.
    auto fit = [&](uint64_t size) -> absl::Status {
      if (ABSL_PREDICT_TRUE(size < kBigSize)) {
        bytes = static_cast<uint32_t>(size);
        return absl::OkStatus();
      }
      absl::StatusOr<uint16_t> index = add_big_size(size);
      if (!index.ok()) return index.status();
      bytes = kBigSize;
      aux = *index;
      return absl::OkStatus();
    };
    switch (e.kind) {
      case OpKind::kAlloc: {
        if (ABSL_PREDICT_FALSE(e.shape >= shape_ops.size())) {
          if (absl::Status st = add_shapes(); !st.ok()) return st;
        }
        const ShapeOp s = shape_ops[e.shape];
        kind = s.alloc_kind;
        object = e.object;
        arena = e.arena;
        align_log2 = s.align_log2;
        if (absl::Status st = fit(s.bytes); !st.ok()) return st;
        cover_object(e.object);
        objects[e.object] = ObjectInfo{e.shape, e.arena};
        live_bytes += s.bytes;
        ++live_objects;
        ++p.allocs;
        usage.Alloc(e.arena, e.thread);
        break;
      }
      case OpKind::kFree: {
        const ObjectInfo o = objects[e.object];
        const ShapeOp s = shape_op(o.shape);
        kind = ReplayKind::kFree;
        object = e.object;
        // Freed into the arena it came from, with the size it was given.
        arena = o.arena;
        align_log2 = s.align_log2;
        if (absl::Status st = fit(s.bytes); !st.ok()) return st;
        live_bytes -= s.bytes;
        --live_objects;
        ++p.frees;
        usage.Free(arena, e.thread);
        if (usage.live(arena) == 0 && arena_pending_destroy[arena]) {
          ops.Append(object, bytes, arena, kind, align_log2, aux);
          arena_pending_destroy[arena] = 0;
          kind = ReplayKind::kArenaDestroy;
          object = bytes = align_log2 = aux = 0;
          ++p.arena_events;
        }
        break;
      }
      case OpKind::kRealloc: {
        if (ABSL_PREDICT_FALSE(e.shape >= shape_ops.size())) {
          if (absl::Status st = add_shapes(); !st.ok()) return st;
        }
        const ShapeOp s = shape_ops[e.shape];
        const ObjectInfo old = objects[e.old_object];
        const ShapeOp old_s = shape_op(old.shape);
        kind = ReplayKind::kRealloc;
        object = e.object;
        arena = old.arena;
        align_log2 = old_s.align_log2;
        // The realloc side table is consumed in order; bytes and aux are unused.
        p.reallocs.push_back({e.old_object, old_s.bytes, s.bytes});
        live_bytes += s.bytes - old_s.bytes;
        cover_object(e.object);
        objects[e.object] = ObjectInfo{
            s.align_log2 == old_s.align_log2 ? e.shape : variant(e.shape, old_s.align_log2),
            old.arena};
        ++p.reallocs_count;
        usage.Free(old.arena, e.thread);  // a use of the arena by this thread
        usage.Alloc(old.arena, e.thread);
        break;
      }
      case OpKind::kArenaCreate:
        if (e.arena >= arena_pending_destroy.size()) {
          arena_pending_destroy.resize(size_t{e.arena} + 1, 0);
        }
        kind = ReplayKind::kArenaCreate;
        arena = e.arena;
        ++p.arena_events;
        break;
      case OpKind::kArenaDestroy:
        if (usage.live(e.arena) > 0) {
          arena_pending_destroy[e.arena] = 1;
          ++event_index;
          return absl::OkStatus();
        }
        kind = ReplayKind::kArenaDestroy;
        arena = e.arena;
        ++p.arena_events;
        break;
      default:
        ++event_index;
        return absl::OkStatus();
    }
    ops.Append(object, bytes, arena, kind, align_log2, aux);
    p.peak_live_bytes = std::max(p.peak_live_bytes, live_bytes);
    p.peak_live_objects = std::max(p.peak_live_objects, live_objects);
    ++event_index;
    return absl::OkStatus();
  };
  if (absl::Status s =
          reader.StreamEvents([&]() { progress.Update(reader); }, on_event, prefetch);
      !s.ok()) {
    return s;
  }
  ops.JoinInto(&p.ops);
  p.object_limit = reader.object_id_limit();
  p.arena_limit = reader.arena_index_limit();
  p.threads = reader.threads_seen();
  p.arena_usage = usage.Summarize(reader);
  p.live_at_end = live_objects;
  if (!reader.has_footer()) p.cut_short = reader.cut_short();
  return p;
}

}  // namespace alloctrace
