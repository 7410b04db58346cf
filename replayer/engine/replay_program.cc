// Over 500 lines, one job: a trace decoded into the replay program in one
// pass (replay_program.h), its steps (ids, arenas, reallocs, checks) named
// functions of this file.
#include "alloctrace/replayer/engine/replay_program.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/inspect/arena_usage.h"
#include "alloctrace/inspect/class_stats.h"

namespace alloctrace {

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
  void Append(uint32_t object, uint32_t bytes, uint32_t arena, ReplayKind kind, uint8_t align_log2,
              uint16_t aux) {
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
    const uintptr_t from =
        (reinterpret_cast<uintptr_t>(current_.data() + current_.size()) + page - 1) & ~(page - 1);
    const uintptr_t to = reinterpret_cast<uintptr_t>(current_.data() + end) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
    if (from < to) madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#else
    (void)from;  // headers older than Linux 5.14: the pages fault in as written
    (void)to;
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
    const double done =
        reader.file_size() == 0 ? 1.0 : double(reader.offset()) / reader.file_size();
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

// Builds a ReplayProgram from the events of one trace, in the order the
// reader streams them: OnEvent dispatches to one method per event kind, each
// of which works out the op's fields (as scalars of an OpFields, which
// OpBlocks::Append stores) and keeps the tables by object, shape and arena
// that later events need.
//
// Contract: events come from `reader` as StreamEvents hands them over, so
// ids are dense (below the reader's limits), a free or realloc names a live
// object, and an event's shape is below reader.shapes().size(). A returned
// error names the file and the event's index; the builder is not used after
// one. Finish, after the last event, completes the program.
class ProgramBuilder {
 public:
  ProgramBuilder(TraceReader& reader, ReplayProgram& p)
      : reader_(reader), p_(p), ops_(ExpectedOps(reader)) {
    arena_pending_destroy_.resize(1, 0);  // index 0: no arena
  }

  // One event (the reader's on_event). The On* methods return false after
  // setting error_, so the common path builds no absl::Status of its own.
  absl::Status OnEvent(const Event& e) {
    OpFields op;
    switch (e.kind) {
      case OpKind::kAlloc:
        if (ABSL_PREDICT_FALSE(!OnAlloc(e, op))) return std::move(error_);
        break;
      case OpKind::kFree:
        if (ABSL_PREDICT_FALSE(!OnFree(e, op))) return std::move(error_);
        break;
      case OpKind::kRealloc:
        if (ABSL_PREDICT_FALSE(!OnRealloc(e, op))) return std::move(error_);
        break;
      case OpKind::kArenaCreate:
        OnArenaCreate(e, op);
        break;
      case OpKind::kArenaDestroy:
        if (!OnArenaDestroy(e, op)) {
          ++event_index_;
          return absl::OkStatus();
        }
        break;
      default:
        ++event_index_;
        return absl::OkStatus();
    }
    Append(op, e.thread);
    p_.peak_live_bytes = std::max(p_.peak_live_bytes, live_bytes_);
    p_.peak_live_objects = std::max(p_.peak_live_objects, live_objects_);
    ++event_index_;
    return absl::OkStatus();
  }

  // The record of the object an event frees, fetched from memory while the
  // decoder works through the ops before it (the reader's on_ahead): with a
  // million live objects the table is far larger than the caches, and
  // waiting for it is most of the builder's time otherwise.
  // The id is unvalidated and may lie past the table: the address is
  // computed as an integer (no out-of-range pointer) and a prefetch of any
  // address cannot fault.
  void Prefetch(uint32_t object) const {
    PrefetchAddress(reinterpret_cast<uintptr_t>(objects_.data()) +
                    uintptr_t{object} * sizeof(ObjectInfo));
  }

  // After the last event: the op array, and what the reader counted.
  void Finish() {
    ops_.JoinInto(&p_.ops);
    p_.object_limit = reader_.object_id_limit();
    p_.arena_limit = reader_.arena_index_limit();
    p_.threads = reader_.threads_seen();
    p_.arena_usage = usage_.Summarize(reader_);
    p_.arena_classes.resize(p_.arena_limit, 0);
    TidyClassTable();
    p_.live_at_end = live_objects_;
    if (!reader_.has_footer()) p_.cut_short = reader_.cut_short();
    const uint64_t start = p_.header.start_unix_ns();
    const uint64_t end = reader_.has_footer() ? reader_.footer().end_unix_ns() : 0;
    const uint64_t cpu = reader_.has_footer() ? reader_.footer().program_cpu_ns() : 0;
    if (cpu > 0) {
      p_.recorded_seconds = 1e-9 * static_cast<double>(cpu);
      p_.recorded_cpu = true;
    } else if (start > 0 && end > start) {
      p_.recorded_seconds = 1e-9 * static_cast<double>(end - start);
    }
  }

 private:
  // What an op takes from a shape, worked out once per shape instead of
  // once per event.
  struct ShapeOp {
    uint64_t bytes;
    ReplayKind alloc_kind;
    uint8_t align_log2;
  };
  // By object id: what a later free or realloc of the object needs. One
  // 8-byte record per id (sizes and alignments are in the shape table,
  // which stays in cache): a free costs one cache miss, and a million live
  // objects take 8 MB, not 16.
  struct ObjectInfo {
    uint32_t shape;  // index into shape_ops_, or kVariant + index into variant_ops_
    uint32_t arena;
  };
  // The fields of the op an event makes (kind and arena are always set).
  struct OpFields {
    uint32_t object = 0, bytes = 0, arena;
    ReplayKind kind;
    uint8_t align_log2 = 0;
    uint16_t aux = 0;
  };
  // Shape index kVariant + i is variant_ops_[i]: a shape with the alignment
  // of the object a REALLOC replaced (a realloc keeps its block's
  // alignment), made only where that differs from the shape's own, once per
  // (shape, alignment).
  static constexpr uint32_t kVariant = uint32_t{1} << 31;

  // A program takes an op per event at most. The footer's count is only a
  // claim until it is checked at the end of the file (a trace whose footer
  // disagrees is refused then); so it is used only where a wrong count
  // costs nothing but speed, and not if the array could not fit in memory.
  static size_t ExpectedOps(const TraceReader& reader) {
    const uint64_t expected_ops = reader.footer_events_hint();
    const uint64_t memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return expected_ops <= memory / sizeof(ReplayOp) ? expected_ops : 0;
  }

  bool OnAlloc(const Event& e, OpFields& op) {
    if (ABSL_PREDICT_FALSE(e.shape >= shape_ops_.size()) && !AddShapes()) return false;
    const ShapeOp s = shape_ops_[e.shape];
    op.kind = s.alloc_kind;
    op.object = e.object;
    op.arena = e.arena;
    op.align_log2 = s.align_log2;
    if (!Fit(s.bytes, op)) return false;
    CoverObject(e.object);
    objects_[e.object] = ObjectInfo{e.shape, e.arena};
    live_bytes_ += s.bytes;
    ++live_objects_;
    ++p_.allocs;
    usage_.Alloc(e.arena, e.thread);
    return true;
  }

  // Arenas destroyed while objects of theirs are still live (possible in a
  // whole-program trace) are destroyed in the replay after their last free,
  // so a pool released with its arena is never used afterwards: such a
  // free makes two ops, the free and the destroy.
  bool OnFree(const Event& e, OpFields& op) {
    const ObjectInfo o = objects_[e.object];
    const ShapeOp s = ShapeOpOf(o.shape);
    op.kind = ReplayKind::kFree;
    op.object = e.object;
    // Freed into the arena it came from, with the size it was given.
    op.arena = o.arena;
    op.align_log2 = s.align_log2;
    if (!Fit(s.bytes, op)) return false;
    live_bytes_ -= s.bytes;
    --live_objects_;
    ++p_.frees;
    usage_.Free(op.arena, e.thread);
    if (usage_.live(op.arena) == 0 && arena_pending_destroy_[op.arena]) {
      Append(op, e.thread);
      arena_pending_destroy_[op.arena] = 0;
      op.kind = ReplayKind::kArenaDestroy;
      op.object = op.bytes = op.align_log2 = op.aux = 0;
      ++p_.arena_events;
    }
    return true;
  }

  bool OnRealloc(const Event& e, OpFields& op) {
    if (ABSL_PREDICT_FALSE(e.shape >= shape_ops_.size()) && !AddShapes()) return false;
    const ShapeOp s = shape_ops_[e.shape];
    const ObjectInfo old = objects_[e.old_object];
    const ShapeOp old_s = ShapeOpOf(old.shape);
    op.kind = ReplayKind::kRealloc;
    op.object = e.object;
    op.arena = old.arena;
    op.align_log2 = old_s.align_log2;
    // The realloc side table is consumed in order; bytes and aux are unused.
    p_.reallocs.push_back({e.old_object, old_s.bytes, s.bytes});
    live_bytes_ += s.bytes - old_s.bytes;
    CoverObject(e.object);
    objects_[e.object] = ObjectInfo{
        s.align_log2 == old_s.align_log2 ? e.shape : Variant(e.shape, old_s.align_log2), old.arena};
    ++p_.reallocs_count;
    usage_.Free(old.arena, e.thread);  // a use of the arena by this thread
    usage_.Alloc(old.arena, e.thread);
    return true;
  }

  void OnArenaCreate(const Event& e, OpFields& op) {
    if (e.arena >= arena_pending_destroy_.size()) {
      arena_pending_destroy_.resize(size_t{e.arena} + 1, 0);
    }
    op.kind = ReplayKind::kArenaCreate;
    op.arena = e.arena;
    ++p_.arena_events;
    if (e.arena >= arena_created_.size()) {
      arena_created_.resize(size_t{e.arena} + 1, 0);
      p_.arena_classes.resize(size_t{e.arena} + 1, 0);
    }
    if (!arena_created_[e.arena]) {
      arena_created_[e.arena] = 1;
      p_.arena_classes[e.arena] = e.shape;
    } else if (p_.arena_classes[e.arena] != e.shape) {
      ++p_.arena_class_conflicts;
    }
  }

  // The reader's class table as ReplayProgram::classes keeps it: classes
  // no arena uses left out, classes of one name merged into the lowest id.
  void TidyClassTable() {
    ClassTableCheck check = CheckClassTable(reader_.classes(), p_.arena_classes);
    p_.classes = std::move(check.kept);
    p_.class_table_notes = std::move(check.notes);
    if (check.merged_into.empty()) return;
    for (uint32_t& id : p_.arena_classes) {
      auto it = check.merged_into.find(id);
      if (it != check.merged_into.end()) id = it->second;
    }
  }

  // Returns false if the arena still holds live objects: its destroy then
  // waits for their last free (OnFree) and makes no op now.
  bool OnArenaDestroy(const Event& e, OpFields& op) {
    if (usage_.live(e.arena) > 0) {
      arena_pending_destroy_[e.arena] = 1;
      return false;
    }
    op.kind = ReplayKind::kArenaDestroy;
    op.arena = e.arena;
    ++p_.arena_events;
    return true;
  }

  // Stores `op`, made by an event of `thread`, and the thread of the op:
  // until a second thread shows up op_threads stays empty (every op so far
  // was thread 0's); then it is filled with zeros up to the ops before and
  // kept from there on.
  void Append(const OpFields& op, uint32_t thread) {
    ops_.Append(op.object, op.bytes, op.arena, op.kind, op.align_log2, op.aux);
    ++ops_appended_;
    if (ABSL_PREDICT_TRUE(thread == 0 && p_.op_threads.empty())) return;
    if (p_.op_threads.empty()) p_.op_threads.resize(ops_appended_ - 1, 0);
    p_.op_threads.push_back(thread);
  }

  // Sets op.bytes to `size`; a size of 4 GiB or more goes to big_sizes,
  // op.bytes being kBigSize and op.aux its index. False (error_ set) past
  // the program's limit.
  bool Fit(uint64_t size, OpFields& op) {
    if (ABSL_PREDICT_TRUE(size < kBigSize)) {
      op.bytes = static_cast<uint32_t>(size);
      return true;
    }
    op.bytes = kBigSize;
    return AddBigSize(size, &op.aux);
  }

  // Adds a size of 4 GiB or more to big_sizes and sets *index to its index;
  // false (error_ set) if there are too many.
  ABSL_ATTRIBUTE_NOINLINE bool AddBigSize(uint64_t bytes, uint16_t* index) {
    if (p_.big_sizes.size() >= 0xffff) {
      error_ = absl::UnimplementedError(absl::StrCat(
          p_.path, ": event ", event_index_,
          ": more than 65535 allocations of 4 GiB or more (the replay program's limit)"));
      return false;
    }
    p_.big_sizes.push_back(bytes);
    *index = static_cast<uint16_t>(p_.big_sizes.size() - 1);
    return true;
  }

  // The reader adds shapes as chunks define them; an event's shape is
  // below reader_.shapes().size(). False (error_ set) past the program's
  // limit.
  ABSL_ATTRIBUTE_NOINLINE bool AddShapes() {
    const std::vector<Shape>& shapes = reader_.shapes();
    if (shapes.size() > kVariant) {
      error_ =
          absl::UnimplementedError(absl::StrCat(p_.path, ": event ", event_index_, ": more than ",
                                                kVariant, " shapes (the replay program's limit)"));
      return false;
    }
    for (size_t i = shape_ops_.size(); i < shapes.size(); ++i) {
      const Shape& s = shapes[i];
      shape_ops_.push_back(ShapeOp{s.bytes(),
                                   s.zeroed ? ReplayKind::kAllocZeroed : ReplayKind::kAlloc,
                                   static_cast<uint8_t>(__builtin_ctzll(s.align))});
    }
    return true;
  }

  ShapeOp ShapeOpOf(uint32_t shape) const {
    return ABSL_PREDICT_TRUE(shape < kVariant) ? shape_ops_[shape] : variant_ops_[shape - kVariant];
  }

  // `shape` with alignment align_log2 instead of its own.
  uint32_t Variant(uint32_t shape, uint8_t align_log2) {
    const uint32_t next = kVariant + static_cast<uint32_t>(variant_ops_.size());
    auto [it, added] = variant_index_.try_emplace(std::make_pair(shape, align_log2), next);
    if (added) {
      ShapeOp v = shape_ops_[shape];
      v.align_log2 = align_log2;
      variant_ops_.push_back(v);
    }
    return it->second;
  }

  // Tables by id grow as new ids appear (vector::resize grows the capacity
  // geometrically, so this is amortized linear); ids past them come only
  // with ALLOC, REALLOC (new object) and ARENA_CREATE.
  void CoverObject(uint32_t object) {
    if (ABSL_PREDICT_FALSE(object >= objects_.size())) objects_.resize(size_t{object} + 1);
  }

  TraceReader& reader_;
  ReplayProgram& p_;
  OpBlocks ops_;
  std::vector<ShapeOp> shape_ops_, variant_ops_;  // by the trace's shape index
  absl::flat_hash_map<std::pair<uint32_t, uint8_t>, uint32_t> variant_index_;
  // By object id; the reader keeps ids dense, so as long as the trace's id
  // count.
  std::vector<ObjectInfo> objects_;
  uint64_t live_bytes_ = 0, live_objects_ = 0;
  // Threads and live blocks by arena (inspect/arena_usage.h).
  ArenaUsage usage_;
  std::vector<uint8_t> arena_pending_destroy_;  // by dense arena index
  std::vector<uint8_t> arena_created_;          // by dense arena index: its class is known
  uint64_t event_index_ = 0;
  uint64_t ops_appended_ = 0;  // Append calls so far
  absl::Status error_;         // why the last On* method returned false
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
  ProgramBuilder builder(reader, p);
  if (absl::Status s = reader.StreamEvents([&]() { progress.Update(reader); },
                                           [&](const Event& e) { return builder.OnEvent(e); },
                                           [&](uint32_t object) { builder.Prefetch(object); });
      !s.ok()) {
    return s;
  }
  builder.Finish();
  return p;
}

}  // namespace alloctrace
