#include "alloctrace/format/trace_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/io.h"

namespace alloctrace {
namespace {

uint64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path,
                                                                 proto::Header header,
                                                                 uint32_t chunk_events) {
  // Opened without blocking: a FIFO no one reads fails at once (ENXIO)
  // instead of waiting for a reader for ever; writes then block as usual.
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644));
  if (!fd.valid()) {
    const int err = errno;
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create trace file ", path, ": ",
                     err == ENXIO ? "a FIFO with no reader" : std::strerror(err)));
  }
  if (::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create trace file ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<TraceWriter> writer(new TraceWriter(std::move(fd), path, chunk_events));
  FillStandardHeader(&header);
  header.set_chunks_have_crc32c(true);  // FlushChunk gives every chunk its checksum
  if (header.start_unix_ns() == 0) header.set_start_unix_ns(UnixNowNs());
  header.clear_crc32c();
  std::string body = header.SerializeAsString();
  AppendCrc32cField(kHeaderCrc32cTag, &body);  // promises the footer's too
  std::string bytes;
  AppendFramedPacketBody(proto::Packet::kHeaderFieldNumber, body, &bytes);
  absl::Status s = writer->WriteBytes(bytes);
  if (!s.ok()) return s;
  return writer;
}

TraceWriter::TraceWriter(ScopedFd fd, std::string path, uint32_t chunk_events)
    : fd_(std::move(fd)),
      path_(std::move(path)),
      chunk_events_(chunk_events == 0 ? 1 : chunk_events) {
  ops_.resize(size_t{chunk_events_} * 2 + 64);
  ops_end_ = ops_.data();
  ops_limit_ = ops_.data() + ops_.size();
  events_left_in_chunk_ = chunk_events_;
}

TraceWriter::~TraceWriter() = default;

absl::Status TraceWriter::WriteBytes(const std::string& bytes) {
  if (!status_.ok()) return status_;
  size_t done = 0;
  if (const int err = WriteAll(fd_.get(), bytes, &done); err != 0) {
    status_ = absl::DataLossError(absl::StrCat("writing trace file ", path_, " at byte ",
                                               bytes_written_ + done, ": ", std::strerror(err)));
    return status_;
  }
  bytes_written_ += bytes.size();
  return absl::OkStatus();
}

void TraceWriter::SwitchThread(uint32_t thread) {
  threads_.insert(thread);
  inserted_thread_ = thread;
  if (thread != cur_thread_) {
    Op(OpKind::kSetThread, thread);
    ++state_ops_;
    cur_thread_ = thread;
  }
}

void TraceWriter::GrowOps() {
  const size_t len = static_cast<size_t>(ops_end_ - ops_.data());
  ops_.resize(ops_.size() * 2 + kEventOps * kMaxVarintBytes);
  ops_end_ = ops_.data() + len;
  ops_limit_ = ops_.data() + ops_.size();
}

uint32_t TraceWriter::CreateUnseenArena(uint32_t thread, uint32_t raw) {
  ArenaCreate(thread, raw);
  return KnownArena(raw);
}

void TraceWriter::ShapeIdMiss(const Shape& shape, ShapeCacheEntry& slot) {
  auto [it, inserted] = shapes_.try_emplace(shape, static_cast<uint32_t>(shapes_.size()));
  if (inserted) new_shapes_.push_back(shape);
  slot.shape = shape;
  slot.id = it->second;
}

void TraceWriter::AllocOverLive(uint32_t thread, uint32_t raw_arena, uint64_t address,
                                const Shape& shape, uint32_t site, uint32_t id, uint32_t stale) {
  // The free of the previous block at this address was never seen: emit
  // one so object ids stay consistent. (The reader frees `stale` before it
  // assigns the new id, so the writer must too: undo and redo in order.)
  live_.Replace(address, stale);
  free_ids_.push_back(id);
  ++unmatched_frees_;
  live_.Erase(address);
  EmitFree(thread, cur_arena_, stale);
  Alloc(thread, raw_arena, address, shape, site);
}

void TraceWriter::Realloc(uint32_t thread, uint32_t raw_arena, uint64_t old_address,
                          uint64_t new_address, const Shape& shape, uint32_t site) {
  const uint32_t old_id = live_.Erase(old_address);
  if (old_id == AddressMap::kNone) {  // realloc(NULL or unknown, n) is an allocation
    if (old_address != 0) ++unmatched_frees_;
    Alloc(thread, raw_arena, new_address, shape, site);
    return;
  }
  const uint32_t arena = MapArena(thread, raw_arena);
  if (new_address != old_address) {
    const uint32_t clash = live_.Erase(new_address);
    if (clash != AddressMap::kNone) {
      ++unmatched_frees_;
      EmitFree(thread, cur_arena_, clash);
    }
  }
  const uint32_t shape_id = ShapeId(shape);
  BeginEvent(thread, arena);
  Op(OpKind::kRealloc, ZigZagEncode(static_cast<int64_t>(old_id) - prev_free_id_));
  prev_free_id_ = old_id;
  // The old id is freed before the new one is taken, so it is reused at once:
  // a realloc in place keeps its id.
  FreeObjectId(old_id);
  const uint32_t new_id = NewObjectId();
  live_.Insert(new_address, new_id);
  // REALLOC's shape travels in `args`, in op order.
  args_.push_back(shape_id);
  AddSite(site);
  ++reallocs_;
  EndEvent();
}

void TraceWriter::DefineClass(const ClassDef& c) {
  if (c.id == 0 || !classes_.insert(c.id).second) return;
  if (c.id < kClassSeenLimit) {
    if (c.id >= class_seen_.size()) class_seen_.resize(size_t{c.id} + 1, 0);
    class_seen_[c.id] = 1;
  }
  new_classes_.push_back(c);
}

void TraceWriter::AddSiteSlow(uint32_t site) {
  const uint32_t trace_id = site < stack_ids_.size() ? stack_ids_[site] : 0;
  if (sites_.empty()) {
    if (trace_id == 0) {
      ++allocations_in_chunk_;
      return;
    }
    sites_.assign(allocations_in_chunk_, 0);  // the chunk's allocations so far had none
  }
  sites_.push_back(trace_id);
  ++allocations_in_chunk_;
}

void TraceWriter::DefineModule(uint32_t id, const ModuleDef& module) {
  if (id == 0 || module_defined(id)) return;
  if (id >= module_ids_.size()) module_ids_.resize(size_t{id} + 1, 0);
  ModuleDef def = module;
  def.id = static_cast<uint32_t>(new_modules_.size() + defined_modules_ + 1);
  module_ids_[id] = def.id;
  new_modules_.push_back(std::move(def));
}

void TraceWriter::DefineStack(uint32_t id, const std::vector<uint64_t>& pcs,
                              const std::vector<uint32_t>& modules) {
  if (id == 0 || stack_defined(id) || pcs.empty()) return;
  if (id >= stack_ids_.size()) stack_ids_.resize(size_t{id} + 1, 0);
  StackDef def;
  def.id = static_cast<uint32_t>(new_stacks_.size() + defined_stacks_ + 1);
  const size_t depth = std::min(pcs.size(), kMaxStackDepth);
  def.pcs.assign(pcs.begin(), pcs.begin() + depth);
  def.modules.resize(depth, 0);
  for (size_t i = 0; i < depth && i < modules.size(); ++i) {
    const uint32_t m = modules[i];
    def.modules[i] = m < module_ids_.size() ? module_ids_[m] : 0;
  }
  stack_ids_[id] = def.id;
  new_stacks_.push_back(std::move(def));
}

void TraceWriter::AliasStack(uint32_t id, uint32_t same_as) {
  if (id == 0 || stack_defined(id) || !stack_defined(same_as)) return;
  if (id >= stack_ids_.size()) stack_ids_.resize(size_t{id} + 1, 0);
  stack_ids_[id] = stack_ids_[same_as];
}

void TraceWriter::Timestamp(uint64_t ns) {
  Reserve(1);
  Op(OpKind::kTimestamp, ns - last_timestamp_);
  ++state_ops_;
  last_timestamp_ = ns;
}

void TraceWriter::AppendCallSites(std::string* chunk) const {
  using C = proto::Chunk;
  AppendPackedVarints(C::kSiteFieldNumber, sites_, chunk);
  for (const StackDef& s : new_stacks_) {
    proto::StackDef def;
    def.set_id(s.id);
    for (uint64_t pc : s.pcs) def.add_pc(pc);
    for (uint32_t m : s.modules) def.add_module(m);
    AppendLengthDelimited(C::kStackDefFieldNumber, def.SerializeAsString(), chunk);
  }
  for (const ModuleDef& m : new_modules_) {
    proto::ModuleDef def;
    def.set_id(m.id);
    def.set_path(m.path);
    def.set_start(m.start);
    def.set_end(m.end);
    def.set_file_offset(m.file_offset);
    def.set_build_id(m.build_id);
    AppendLengthDelimited(C::kModuleDefFieldNumber, def.SerializeAsString(), chunk);
  }
}

absl::Status TraceWriter::FlushChunk() {
  if (ops_end_ == ops_.data()) return status_;
  using C = proto::Chunk;
  // Two buffers kept across chunks: a chunk past glibc's mmap threshold
  // (128 KiB) in a fresh string each time was fresh pages each time, page
  // faults on every byte copied (half the writer's time with call sites).
  std::string& chunk = chunk_buf_;
  chunk.clear();
  const size_t ops_len = static_cast<size_t>(ops_end_ - ops_.data());
  chunk.reserve(ops_len + 8 * sites_.size() + 64);
  AppendVarint(WireTag(C::kFirstEventFieldNumber, WireType::kVarint), &chunk);
  AppendVarint(chunk_first_event_, &chunk);
  // The ops are already varints: the packed column is their bytes.
  AppendLengthDelimited(C::kOpsFieldNumber, std::string_view(ops_.data(), ops_len), &chunk);
  if (!new_shapes_.empty()) {
    std::vector<uint64_t> elem, count, align, flags;
    bool any_flags = false;
    for (const Shape& s : new_shapes_) {
      elem.push_back(s.elem_size);
      count.push_back(s.count);
      align.push_back(s.align);
      flags.push_back(s.zeroed ? kShapeZeroed : 0);
      any_flags |= s.zeroed;
    }
    AppendPackedVarints(C::kShapeElemSizeFieldNumber, elem, &chunk);
    AppendPackedVarints(C::kShapeCountFieldNumber, count, &chunk);
    AppendPackedVarints(C::kShapeAlignFieldNumber, align, &chunk);
    if (any_flags) AppendPackedVarints(C::kShapeFlagsFieldNumber, flags, &chunk);
  }
  AppendPackedVarints(C::kArgsFieldNumber, args_, &chunk);
  if (chunk_has_class_) AppendPackedVarints(C::kArenaClassFieldNumber, arena_classes_, &chunk);
  for (const ClassDef& c : new_classes_) {
    proto::ClassDef def;
    def.set_id(c.id);
    def.set_name(c.name);
    def.set_elem_size(c.elem_size);
    def.set_tagged(c.tagged);
    AppendLengthDelimited(C::kClassDefFieldNumber, def.SerializeAsString(), &chunk);
  }
  AppendCallSites(&chunk);
  // Last, the checksum of every byte before it (proto/trace.proto,
  // Chunk.crc32c): a changed byte that still parses is then seen.
  AppendCrc32cField(kChunkCrc32cTag, &chunk);
  std::string& framed = framed_buf_;
  framed.clear();
  framed.reserve(chunk.size() + 2 * kMaxVarintBytes + 2);
  AppendFramedPacketBody(proto::Packet::kChunkFieldNumber, chunk, &framed);

  ops_end_ = ops_.data();
  new_shapes_.clear();
  args_.clear();
  arena_classes_.clear();
  chunk_has_class_ = false;
  new_classes_.clear();
  allocations_in_chunk_ = 0;
  sites_.clear();
  defined_stacks_ += new_stacks_.size();
  defined_modules_ += new_modules_.size();
  new_stacks_.clear();
  new_modules_.clear();
  prev_free_id_ = 0;
  chunk_first_event_ = events();
  events_left_in_chunk_ = chunk_events_;
  ++chunks_;
  return WriteBytes(framed);
}

absl::Status TraceWriter::Finish(proto::Footer footer) {
  FlushChunk().IgnoreError();
  footer.set_events(events());
  footer.set_ops(events() + state_ops_);
  footer.set_allocs(allocs_);
  footer.set_frees(frees_);
  footer.set_reallocs(reallocs_);
  footer.set_arenas(arenas_);
  footer.set_chunks(chunks_);
  footer.set_threads(threads_.size());
  footer.set_unmatched_frees(unmatched_frees_);
  footer.set_end_unix_ns(UnixNowNs());
  footer.clear_crc32c();
  std::string body = footer.SerializeAsString();
  AppendCrc32cField(kFooterCrc32cTag, &body);
  std::string bytes;
  AppendFramedPacketBody(proto::Packet::kFooterFieldNumber, body, &bytes);
  absl::Status s = WriteBytes(bytes);
  // Closed here, not by fd_ (whose close reports nothing): close can fail
  // for a write the file system did not complete (NFS, a quota).
  if (fd_.valid() && ::close(fd_.Release()) != 0 && s.ok()) {
    s = absl::DataLossError(absl::StrCat("closing trace file ", path_, ": ", std::strerror(errno)));
  }
  return s;
}

}  // namespace alloctrace
