// TraceWriter: encodes allocation events into columnar chunks and appends
// them to a trace file (format in proto/trace.proto).
//
// Callers give events in their final order with real addresses; the writer
// maps each live address to a dense object id (reusing freed ids, most
// recently freed first, so ids stay below the peak live count), interns
// allocation shapes, and writes a chunk whenever `chunk_events` events are
// pending or FlushChunk is called. Each chunk is written with one write(2),
// so a process that dies leaves every earlier chunk intact, and ends with
// the CRC32C of its bytes (Chunk.crc32c; the header says every chunk has
// one), as do the header and the footer (their crc32c), so a reader tells
// a changed byte from the truth.
//
// Arena ids are renumbered densely from 1 in order of creation.
// The writer keeps the trace valid whatever it is fed: an allocation in an
// arena it never saw created gets an ARENA_CREATE first, a free of an
// unknown address is dropped and counted, an address allocated again while
// live frees the old object first (counted as unmatched).
//
// Thread-compatible: one thread at a time (the Recorder's writer thread).
#ifndef ALLOCTRACE_FORMAT_TRACE_WRITER_H_
#define ALLOCTRACE_FORMAT_TRACE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "alloctrace/base/scoped_fd.h"
#include "alloctrace/format/address_map.h"
#include "alloctrace/format/call_sites.h"
#include "alloctrace/format/live_id_map.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/wire.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace {

class TraceWriter {
 public:
  // Creates (truncates) `path` and writes the header. `header` needs only the
  // descriptive fields; magic, version and platform are filled in.
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(const std::string& path,
                                                             proto::Header header,
                                                             uint32_t chunk_events = 1 << 16);
  ~TraceWriter();  // closes the file; does not write a footer

  // `site` is the allocation's call stack, a caller's id given to
  // DefineStack (0: none; an id never defined is written as 0).
  // Alloc, Free, ArenaCreate and ArenaDestroy are inline (below the class),
  // so that a caller's loop over events makes no call on their common paths.
  inline void Alloc(uint32_t thread, uint32_t arena, uint64_t address, const Shape& shape,
                    uint32_t site = 0);
  // Hints: an event a few from now frees (or reallocates) `address`, or
  // names the caller's arena `raw_arena`; what it will look up starts
  // loading into the cache. Always inline (AddressMap::Prefetch).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void PrefetchAddress(uint64_t address) const {
    live_.Prefetch(address);
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE void PrefetchArena(uint32_t raw_arena) const {
    arena_ids_.Prefetch(raw_arena);
  }
  // Returns false (and writes nothing) if `address` is not live.
  inline bool Free(uint32_t thread, uint32_t arena, uint64_t address);
  // Frees old_address (if live) and allocates new_address with `shape`.
  void Realloc(uint32_t thread, uint32_t arena, uint64_t old_address, uint64_t new_address,
               const Shape& shape, uint32_t site = 0);
  // Creates `arena` of class `class_id` (0: unnamed). A class id not
  // defined with DefineClass is recorded as 0, so the trace stays valid.
  inline void ArenaCreate(uint32_t thread, uint32_t arena, uint32_t class_id = 0);
  // Adds `c` to the trace's class table; it is written with the next chunk.
  // Ids are the caller's (any but 0, which is ignored); a second definition
  // of an id already defined is ignored.
  void DefineClass(const ClassDef& c);
  bool class_defined(uint32_t id) const {
    return id < class_seen_.size() ? class_seen_[id] != 0
                                   : id >= kClassSeenLimit && classes_.contains(id);
  }
  inline void ArenaDestroy(uint32_t thread, uint32_t arena);
  // Call sites. Ids are the caller's (any but 0), renumbered densely from 1
  // in the trace in order of definition; a second definition of an id is
  // ignored. A stack's `modules` are the caller's module ids, one per pc
  // (0: none); one never defined is written as 0. Definitions are written
  // with the next chunk, before the sites that use them.
  void DefineModule(uint32_t id, const ModuleDef& module);
  bool module_defined(uint32_t id) const { return id < module_ids_.size() && module_ids_[id] != 0; }
  void DefineStack(uint32_t id, const std::vector<uint64_t>& pcs,
                   const std::vector<uint32_t>& modules);
  bool stack_defined(uint32_t id) const { return id < stack_ids_.size() && stack_ids_[id] != 0; }
  // Caller id `id` names the same stack as `same_as` (already defined): no
  // second definition is written.
  void AliasStack(uint32_t id, uint32_t same_as);
  // Applies to the events that follow.
  void Timestamp(uint64_t ns);

  // Writes pending events as a chunk (nothing if none are pending).
  absl::Status FlushChunk();
  // Flushes, writes the footer and closes. `footer` may carry extra counts
  // (dropped events); the writer fills in its own.
  absl::Status Finish(proto::Footer footer = {});

  uint64_t events() const { return chunk_first_event_ + (chunk_events_ - events_left_in_chunk_); }
  uint64_t chunks() const { return chunks_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t unmatched_frees() const { return unmatched_frees_; }
  const absl::Status& status() const { return status_; }

 private:
  TraceWriter(ScopedFd fd, std::string path, uint32_t chunk_events);
  absl::Status WriteBytes(const std::string& bytes);
  struct ShapeCacheEntry {
    Shape shape;
    uint32_t id = ~0u;  // ~0u: empty
  };

  // Every event's path is inline and its rare branches out of line
  // (SwitchThread, GrowOps, ShapeIdSlow, MapArenaSlow, FlushChunk): a call
  // per step, each saving the registers its rare branch needed, was a third
  // of the writer's instructions.
  // The event's thread and arena, as ops where they change. Makes room
  // for the event's ops: at most kEventOps (a thread, an arena, the op).
  static constexpr ptrdiff_t kEventOps = 3;
  ABSL_ATTRIBUTE_ALWAYS_INLINE void BeginEvent(uint32_t thread, uint32_t arena) {
    Reserve(kEventOps);
    if (ABSL_PREDICT_FALSE(thread != inserted_thread_)) SwitchThread(thread);
    if (arena != cur_arena_) {
      Op(OpKind::kSetArena, arena);
      ++state_ops_;
      cur_arena_ = arena;
    }
  }
  void SwitchThread(uint32_t thread);
  // The count of events is the chunk's first event and how far the
  // countdown has run (events()).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void EndEvent() {
    if (ABSL_PREDICT_FALSE(--events_left_in_chunk_ == 0)) {
      FlushChunk().IgnoreError();  // kept in status_
    }
  }
  // Room for `ops` more ops in the buffer.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Reserve(ptrdiff_t ops) {
    if (ABSL_PREDICT_FALSE(ops_limit_ - ops_end_ < ops * static_cast<ptrdiff_t>(kMaxVarintBytes))) {
      GrowOps();
    }
  }
  // An op, in room made by Reserve. An event has one op of its own: only
  // the ops that set state (thread, arena, time) are counted (state_ops_).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Op(OpKind kind, uint64_t payload) {
    ops_end_ = EncodeVarint((payload << kOpKindBits) | static_cast<uint64_t>(kind), ops_end_);
  }
  void GrowOps();
  // A direct-mapped cache before the hash map: a program's allocations
  // take a few hundred shapes, and hashing four fields into the map was a
  // third of the writer's time on a malloc churn of varied sizes.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t ShapeId(const Shape& shape) {
    // A run of one shape (one container's nodes).
    if (shape == last_shape_) return last_shape_id_;
    // Every field reaches the slot's bits (the top ones of the second
    // product): node shapes differ only in elem_size, all with count 1.
    const uint64_t mix = ((shape.count * 0x9e3779b97f4a7c15u) ^ shape.elem_size ^
                          (shape.align << 40) ^ (uint64_t{shape.zeroed} << 63)) *
                         0xbf58476d1ce4e5b9u;
    ShapeCacheEntry& slot = shape_cache_[mix >> (64 - kShapeCacheBits)];
    if (ABSL_PREDICT_FALSE(slot.id == ~0u || !(slot.shape == shape))) ShapeIdMiss(shape, slot);
    last_shape_ = shape;
    last_shape_id_ = slot.id;
    return slot.id;
  }
  // Fills `slot` with `shape` and its id, interning it if new.
  void ShapeIdMiss(const Shape& shape, ShapeCacheEntry& slot);
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t NewObjectId() {
    if (free_ids_.empty()) return next_id_++;
    const uint32_t id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  void FreeObjectId(uint32_t id) { free_ids_.push_back(id); }
  // Maps a caller's arena id to the trace's dense id (from 1, in order of
  // creation), creating it in the trace on first sight.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t MapArena(uint32_t thread, uint32_t raw) {
    if (raw == 0) return 0;
    const uint32_t id = KnownArena(raw);
    if (ABSL_PREDICT_FALSE(id == LiveIdMap::kNone)) return CreateUnseenArena(thread, raw);
    return id;
  }
  // The trace's id of live caller arena `raw` (not 0), or kNone if it is
  // not live; remembered for the next lookup of `raw`.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t KnownArena(uint32_t raw) {
    if (raw == last_raw_arena_) return last_trace_arena_;
    const uint32_t id = arena_ids_.Find(raw);
    if (id != LiveIdMap::kNone) {
      last_raw_arena_ = raw;
      last_trace_arena_ = id;
    }
    return id;
  }
  // First sight of an arena created before the recording started: creates
  // it in the trace so the trace stays valid, and returns its id.
  uint32_t CreateUnseenArena(uint32_t thread, uint32_t raw);
  // Alloc at an address still live (`stale` its id; `id` the one taken).
  void AllocOverLive(uint32_t thread, uint32_t raw_arena, uint64_t address, const Shape& shape,
                     uint32_t site, uint32_t id, uint32_t stale);
  inline void EmitFree(uint32_t thread, uint32_t arena, uint32_t id);
  // Adds the site of the ALLOC or REALLOC being written to the chunk's
  // column (which exists only once a chunk has a site other than 0).
  void AddSite(uint32_t site) {
    if (ABSL_PREDICT_TRUE(site == 0 && sites_.empty())) {
      ++allocations_in_chunk_;
      return;
    }
    AddSiteSlow(site);
  }
  void AddSiteSlow(uint32_t site);
  // The chunk's site column and the stacks and modules it defines.
  void AppendCallSites(std::string* chunk) const;

  ScopedFd fd_;
  std::string path_;
  uint32_t chunk_events_;
  absl::Status status_;

  // Pending chunk.
  std::string chunk_buf_, framed_buf_;  // FlushChunk's, kept for their capacity
  // A buffer: the chunk's ops are its bytes up to ops_end_; ops_limit_ is
  // its end.
  std::string ops_;
  char* ops_end_ = nullptr;
  char* ops_limit_ = nullptr;
  uint64_t chunk_first_event_ = 0;
  uint32_t events_left_in_chunk_;  // chunk_events_ less the chunk's events
  std::vector<Shape> new_shapes_;
  std::vector<uint64_t> args_;  // REALLOC shape ids, in op order
  // The class of each ARENA_CREATE of the chunk, in op order; written only
  // if one of them is not 0.
  std::vector<uint64_t> arena_classes_;
  bool chunk_has_class_ = false;
  std::vector<ClassDef> new_classes_;
  uint64_t allocations_in_chunk_ = 0;  // ALLOC and REALLOC ops
  std::vector<uint64_t> sites_;        // empty until the chunk has a site
  std::vector<ModuleDef> new_modules_;
  std::vector<StackDef> new_stacks_;
  size_t defined_stacks_ = 0;  // written in earlier chunks
  size_t defined_modules_ = 0;
  int64_t prev_free_id_ = 0;

  // Encoder state that carries across chunks (mirrored by the reader).
  uint32_t cur_thread_ = 0;
  // The thread last added to threads_ (cur_thread_ once there is an event;
  // none before: a 32-bit id never equals it).
  uint64_t inserted_thread_ = ~uint64_t{0};
  uint32_t cur_arena_ = 0;
  uint64_t last_timestamp_ = 0;
  AddressMap live_;  // address -> object id
  std::vector<uint32_t> free_ids_;
  uint32_t next_id_ = 0;
  absl::flat_hash_map<Shape, uint32_t> shapes_;
  static constexpr int kShapeCacheBits = 9;
  static constexpr size_t kShapeCacheEntries = size_t{1} << kShapeCacheBits;
  Shape last_shape_{0, 0, 0, false};  // align 0: no shape has it
  uint32_t last_shape_id_ = ~0u;
  std::vector<ShapeCacheEntry> shape_cache_ = std::vector<ShapeCacheEntry>(kShapeCacheEntries);
  LiveIdMap arena_ids_;  // live: caller id -> trace id
  uint32_t next_arena_id_ = 1;
  uint32_t last_raw_arena_ = 0;
  uint32_t last_trace_arena_ = 0;
  absl::flat_hash_set<uint32_t> threads_;
  absl::flat_hash_set<uint32_t> classes_;  // defined so far
  // The same for ids below kClassSeenLimit (a recorder's are dense from 1),
  // where an arena's creation looks its class up without hashing.
  static constexpr uint32_t kClassSeenLimit = 1 << 16;
  std::vector<uint8_t> class_seen_;
  std::vector<uint32_t> module_ids_;  // caller id -> trace id (0: not defined)
  std::vector<uint32_t> stack_ids_;   // caller id -> trace id (0: not defined)

  // Counts.
  uint64_t state_ops_ = 0;  // SET_THREAD, SET_ARENA and TIMESTAMP ops
  uint64_t allocs_ = 0, frees_ = 0, reallocs_ = 0, arenas_ = 0;
  uint64_t chunks_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t unmatched_frees_ = 0;
};

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void TraceWriter::Alloc(uint32_t thread, uint32_t raw_arena,
                                                            uint64_t address, const Shape& shape,
                                                            uint32_t site) {
  const uint32_t arena = MapArena(thread, raw_arena);
  const uint32_t shape_id = ShapeId(shape);
  const uint32_t id = NewObjectId();
  const uint32_t stale = live_.Replace(address, id);
  if (ABSL_PREDICT_FALSE(stale != AddressMap::kNone)) {
    AllocOverLive(thread, raw_arena, address, shape, site, id, stale);
    return;
  }
  BeginEvent(thread, arena);
  Op(OpKind::kAlloc, uint64_t{shape_id} << 1);
  AddSite(site);
  ++allocs_;
  EndEvent();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool TraceWriter::Free(uint32_t thread, uint32_t raw_arena,
                                                           uint64_t address) {
  const uint32_t id = live_.Erase(address);
  if (ABSL_PREDICT_FALSE(id == AddressMap::kNone)) {
    ++unmatched_frees_;
    return false;
  }
  // A free may come after its arena was destroyed (the arena id is then no
  // longer known): it is not an allocation, so it creates no arena.
  uint32_t arena = cur_arena_;
  if (raw_arena == 0) {
    arena = 0;
  } else if (const uint32_t known = KnownArena(raw_arena); known != LiveIdMap::kNone) {
    arena = known;
  }
  EmitFree(thread, arena, id);
  return true;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void TraceWriter::EmitFree(uint32_t thread, uint32_t arena,
                                                               uint32_t id) {
  BeginEvent(thread, arena);
  Op(OpKind::kFree, ZigZagEncode(static_cast<int64_t>(id) - prev_free_id_));
  prev_free_id_ = id;
  FreeObjectId(id);
  ++frees_;
  EndEvent();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void TraceWriter::ArenaCreate(uint32_t thread,
                                                                  uint32_t raw_arena,
                                                                  uint32_t class_id) {
  if (raw_arena == 0) return;
  const uint32_t id = next_arena_id_;
  if (!arena_ids_.Insert(raw_arena, id)) return;
  ++next_arena_id_;
  BeginEvent(thread, cur_arena_);
  Op(OpKind::kArenaCreate, id);
  if (class_id != 0 && !class_defined(class_id)) class_id = 0;
  arena_classes_.push_back(class_id);
  chunk_has_class_ |= class_id != 0;
  ++arenas_;
  EndEvent();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void TraceWriter::ArenaDestroy(uint32_t thread,
                                                                   uint32_t raw_arena) {
  if (raw_arena == 0) return;
  const uint32_t arena = arena_ids_.Erase(raw_arena);
  if (arena == LiveIdMap::kNone) return;
  if (raw_arena == last_raw_arena_) last_raw_arena_ = 0;
  BeginEvent(thread, cur_arena_);
  Op(OpKind::kArenaDestroy, arena);
  EndEvent();
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_TRACE_WRITER_H_
