#include "alloctrace/format/test_util.h"

#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_writer.h"
#include "gtest/gtest.h"

namespace alloctrace::testing_util {

std::string TempPath(const std::string& name) {
  return absl::StrCat(testing::TempDir(), "/", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

absl::StatusOr<Decoded> ReadAll(const std::string& path) {
  auto reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  Decoded d;
  std::vector<Event> chunk;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&chunk);
    if (!more.ok()) return more.status();
    if (!*more) break;
    d.events.insert(d.events.end(), chunk.begin(), chunk.end());
  }
  d.shapes = (*reader)->shapes();
  d.footer = (*reader)->has_footer();
  d.cut_short = (*reader)->cut_short();
  return d;
}

bool WriteRandomTrace(const std::string& path, uint64_t seed, int n, uint32_t chunk_events,
                      bool finish, std::vector<std::pair<OpKind, uint64_t>>* expected,
                      const std::string& workload) {
  proto::Header header;
  header.set_workload(workload);
  auto writer = TraceWriter::Create(path, header, chunk_events);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return false;
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> live;
  uint64_t next_addr = 0x10000;
  (*writer)->ArenaCreate(0, 7);
  (*writer)->ArenaCreate(0, 9);
  for (int i = 0; i < n; ++i) {
    const uint32_t thread = rng() % 3 == 0 ? 1 : 0;
    const uint32_t arena = rng() % 2 == 0 ? 7 : 9;
    if (live.empty() || rng() % 3 != 0) {
      const Shape shape{uint64_t{8} << (rng() % 4), 1 + rng() % 3, 8};
      next_addr += 4096;
      (*writer)->Alloc(thread, arena, next_addr, shape);
      live.push_back(next_addr);
      expected->push_back({OpKind::kAlloc, shape.bytes()});
    } else if (rng() % 10 == 0) {
      const size_t k = rng() % live.size();
      next_addr += 4096;
      const Shape shape{1, 100 + rng() % 100, 16};
      (*writer)->Realloc(thread, arena, live[k], next_addr, shape);
      live[k] = next_addr;
      expected->push_back({OpKind::kRealloc, shape.bytes()});
    } else {
      const size_t k = rng() % live.size();
      EXPECT_TRUE((*writer)->Free(thread, arena, live[k]));
      live[k] = live.back();
      live.pop_back();
      expected->push_back({OpKind::kFree, 0});
    }
  }
  (*writer)->ArenaDestroy(0, 9);
  const absl::Status s = finish ? (*writer)->Finish() : (*writer)->FlushChunk();
  EXPECT_TRUE(s.ok()) << s;
  return s.ok();
}

std::vector<std::pair<OpKind, uint64_t>> Summarize(const Decoded& d) {
  std::vector<std::pair<OpKind, uint64_t>> out;
  for (const Event& e : d.events) {
    if (e.kind == OpKind::kAlloc || e.kind == OpKind::kRealloc) {
      out.push_back({e.kind, d.shapes[e.shape].bytes()});
    } else if (e.kind == OpKind::kFree) {
      out.push_back({e.kind, 0});
    }
  }
  return out;
}

void AddShape(proto::Chunk* chunk, uint64_t elem_size, uint64_t count, uint64_t align,
              bool zeroed) {
  chunk->add_shape_elem_size(elem_size);
  chunk->add_shape_count(count);
  chunk->add_shape_align(align);
  if (zeroed || chunk->shape_flags_size() > 0) {
    while (chunk->shape_flags_size() < chunk->shape_elem_size_size() - 1) {
      chunk->add_shape_flags(0);
    }
    chunk->add_shape_flags(zeroed ? kShapeZeroed : 0);
  }
}

proto::Chunk ReallocChainChunk(int steps) {
  proto::Chunk c;
  for (int i = 1; i <= steps; ++i) AddShape(&c, 1, uint64_t{4096} * i, 16);
  c.add_ops(Op(OpKind::kAlloc, 0));
  for (int i = 1; i < steps; ++i) {
    c.add_ops(Op(OpKind::kRealloc, ZigZagEncode(0)));
    c.add_args(i);
  }
  c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
  return c;
}

std::string TraceBytes(const std::vector<proto::Chunk>& chunks, int64_t footer_events) {
  proto::Packet h;
  FillStandardHeader(h.mutable_header());
  h.mutable_header()->set_workload("crafted");
  std::string b;
  AppendFramedPacket(h, &b);
  for (const proto::Chunk& chunk : chunks) {
    proto::Packet c;
    *c.mutable_chunk() = chunk;
    AppendFramedPacket(c, &b);
  }
  if (footer_events >= 0) {
    proto::Packet f;
    f.mutable_footer()->set_events(static_cast<uint64_t>(footer_events));
    f.mutable_footer()->set_chunks(chunks.size());
    AppendFramedPacket(f, &b);
  }
  return b;
}

std::string WriteTrace(const std::string& name, const std::vector<proto::Chunk>& chunks,
                       int64_t footer_events) {
  const std::string path = TempPath(name);
  WriteFile(path, TraceBytes(chunks, footer_events));
  return path;
}

absl::Status WriteManyArenasTrace(const std::string& path, uint32_t arenas, uint64_t block_bytes) {
  proto::Header header;
  header.set_workload("many_arenas");
  (*header.mutable_labels())["arenas"] = std::to_string(arenas);
  (*header.mutable_labels())["block_bytes"] = std::to_string(block_bytes);
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  TraceWriter& w = **writer;
  for (uint32_t a = 1; a <= arenas; ++a) {
    w.ArenaCreate(0, a);
    w.Alloc(0, a, uint64_t{a} * block_bytes, Shape{block_bytes, 1, 16});
  }
  return w.Finish();
}

absl::Status WriteReallocChainTrace(const std::string& path, uint32_t reallocs,
                                    uint64_t step_bytes) {
  proto::Header header;
  header.set_workload("realloc_chain");
  (*header.mutable_labels())["reallocs"] = std::to_string(reallocs);
  (*header.mutable_labels())["step_bytes"] = std::to_string(step_bytes);
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  TraceWriter& w = **writer;
  constexpr uint64_t kAddress = 1 << 20;
  w.Alloc(0, 0, kAddress, Shape{step_bytes, 1, 16});
  for (uint32_t i = 1; i <= reallocs; ++i) {
    w.Realloc(0, 0, kAddress, kAddress, Shape{step_bytes * (i + 1), 1, 16});
  }
  w.Free(0, 0, kAddress);
  return w.Finish();
}

std::vector<CraftedTrace> CraftedTraces() {
  std::vector<CraftedTrace> out;
  const uint64_t kId28 = (uint64_t{1} << 28) - 1;
  {  // Any 32-bit thread id: mapped to a dense index.
    proto::Chunk c;
    AddShape(&c, 16, 1, 8);
    c.add_ops(Op(OpKind::kSetThread, 0xFFFFFFFFu));
    c.add_ops(Op(OpKind::kAlloc, 0));
    c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
    out.push_back({"thread_max.trace", {c}, 2});
  }
  {  // An explicit object id far beyond the dense limit: refused.
    proto::Chunk c;
    AddShape(&c, 16, 1, 8);
    c.add_ops(Op(OpKind::kAlloc, 1));
    c.add_ids(kId28);
    c.add_ops(Op(OpKind::kFree, ZigZagEncode(static_cast<int64_t>(kId28))));
    out.push_back({"object_id_max.trace", {c}, 2});
  }
  {  // A large arena id: mapped to a dense index.
    proto::Chunk c;
    AddShape(&c, 16, 1, 8);
    c.add_ops(Op(OpKind::kArenaCreate, kId28));
    c.add_ops(Op(OpKind::kSetArena, kId28));
    c.add_ops(Op(OpKind::kAlloc, 0));
    c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
    c.add_ops(Op(OpKind::kArenaDestroy, kId28));
    out.push_back({"arena_id_max.trace", {c}, 4});
  }
  {  // 2^33 x 2^31 bytes: wraps 64 bits.
    proto::Chunk c;
    AddShape(&c, uint64_t{1} << 33, uint64_t{1} << 31, 8);
    c.add_ops(Op(OpKind::kAlloc, 0));
    c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
    out.push_back({"shape_overflow.trace", {c}, 2});
  }
  {  // An alignment over the limit.
    proto::Chunk c;
    AddShape(&c, 64, 1, uint64_t{1} << 30);
    c.add_ops(Op(OpKind::kAlloc, 0));
    out.push_back({"align_1g.trace", {c}, 1});
  }
  {  // A realloc chain growing 4 KiB a step.
    constexpr int kSteps = 300;
    out.push_back({"realloc_chain.trace", {ReallocChainChunk(kSteps)}, kSteps + 1});
  }
  {  // calloc of 1 GiB.
    proto::Chunk c;
    AddShape(&c, 1, uint64_t{1} << 30, 16, /*zeroed=*/true);
    c.add_ops(Op(OpKind::kAlloc, 0));
    c.add_ops(Op(OpKind::kFree, ZigZagEncode(0)));
    out.push_back({"calloc_1g.trace", {c}, 2});
  }
  {  // Arena events only: no memory operation at all.
    proto::Chunk c;
    for (uint64_t a = 1; a <= 3; ++a) c.add_ops(Op(OpKind::kArenaCreate, a));
    for (uint64_t a = 1; a <= 3; ++a) c.add_ops(Op(OpKind::kArenaDestroy, a));
    out.push_back({"arena_only.trace", {c}, 6});
  }
  return out;
}

}  // namespace alloctrace::testing_util
