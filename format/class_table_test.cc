// The class table: written by TraceWriter, read back by TraceReader, and the
// reader's errors for tables a writer would not produce.
#include <string>
#include <vector>

#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/proto/trace.pb.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::Op;
using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::TempPath;
using testing_util::WriteTrace;

const ClassDef kOrders{3, "app::OrderIndex", 48, true};
const ClassDef kPairs{7, "std::pair<const long int, Msg>", 32, false};

// What a reader says of every arena: its class at creation, by arena index.
struct ReadClasses {
  absl::flat_hash_map<uint32_t, ClassDef> table;
  std::vector<uint32_t> created_class;  // per ARENA_CREATE, in order
  std::vector<uint32_t> arena_class;    // by arena index, after the read
};

absl::StatusOr<ReadClasses> ReadClassesOf(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  ReadClasses r;
  absl::Status s = (*reader)->ForEachEvent([](const std::vector<Event>&) {},
                                           [&](const Event& e) {
                                             if (e.kind == OpKind::kArenaCreate) {
                                               r.created_class.push_back(e.shape);
                                             }
                                             return absl::OkStatus();
                                           });
  if (!s.ok()) return s;
  r.table = (*reader)->classes();
  for (uint32_t i = 0; i < (*reader)->arena_index_limit(); ++i) {
    r.arena_class.push_back((*reader)->arena_class(i));
  }
  return r;
}

TEST(ClassTableTest, RoundTripAcrossChunks) {
  const std::string path = TempPath("classes.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header(), /*chunk_events=*/2);
    ASSERT_TRUE(w.ok()) << w.status();
    (*w)->DefineClass(kOrders);
    (*w)->ArenaCreate(0, 1, kOrders.id);
    (*w)->ArenaCreate(0, 2);  // unnamed
    (*w)->Alloc(0, 1, 0x1000, Shape{48, 1, 8});
    (*w)->DefineClass(kPairs);
    (*w)->ArenaCreate(0, 3, kPairs.id);
    (*w)->DefineClass(kOrders);           // again: ignored
    (*w)->ArenaCreate(0, 4, kOrders.id);  // a later chunk, an earlier class
    (*w)->ArenaCreate(0, 5, 99);          // never defined: recorded unnamed
    (*w)->Free(0, 1, 0x1000);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  absl::StatusOr<ReadClasses> r = ReadClassesOf(path);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->table.size(), 2u);
  EXPECT_EQ(r->table.at(3), kOrders);
  EXPECT_EQ(r->table.at(7), kPairs);
  EXPECT_EQ(r->created_class, (std::vector<uint32_t>{3, 0, 7, 3, 0}));
  EXPECT_EQ(r->arena_class, (std::vector<uint32_t>{0, 3, 0, 7, 3, 0}));

  // The file is still a valid Trace message, with the table in it.
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(path)));
  int defs = 0;
  for (const proto::Packet& p : trace.packet()) defs += p.chunk().class_def_size();
  EXPECT_EQ(defs, 2);
}

TEST(ClassTableTest, TracesWithoutClassesCarryNoClassColumns) {
  const std::string path = TempPath("no_classes.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok()) << w.status();
    for (uint32_t a = 1; a <= 100; ++a) (*w)->ArenaCreate(0, a);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(path)));
  for (const proto::Packet& p : trace.packet()) {
    EXPECT_EQ(p.chunk().arena_class_size(), 0);
    EXPECT_EQ(p.chunk().class_def_size(), 0);
  }
  absl::StatusOr<ReadClasses> r = ReadClassesOf(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->table.empty());
  EXPECT_EQ(r->created_class, std::vector<uint32_t>(100, 0));
}

proto::ClassDef Def(const ClassDef& c) {
  proto::ClassDef d;
  d.set_id(c.id);
  d.set_name(c.name);
  d.set_elem_size(c.elem_size);
  d.set_tagged(c.tagged);
  return d;
}

void ExpectError(const std::string& name, const std::vector<proto::Chunk>& chunks,
                 int64_t footer_events, const std::vector<std::string>& needles) {
  const std::string path = WriteTrace(name, chunks, footer_events);
  auto d = ReadAll(path);
  ASSERT_FALSE(d.ok()) << name << " should not read";
  const std::string message(d.status().message());
  for (const std::string& n : needles) {
    EXPECT_NE(message.find(n), std::string::npos) << "wanted: " << n << "\ngot:    " << message;
  }
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(ClassTableTest, AnArenaOfAnUndefinedClassIsAnError) {
  proto::Chunk c;
  *c.add_class_def() = Def(kOrders);
  c.add_ops(Op(OpKind::kArenaCreate, 1));
  c.add_ops(Op(OpKind::kArenaCreate, 2));
  c.add_arena_class(kOrders.id);
  c.add_arena_class(9);
  ExpectError("undefined_class.trace", {c}, 2,
              {": byte ",
               "(chunk 0), event 1: ARENA_CREATE of arena 2 names class 9, which is not "
               "defined"});
}

TEST(ClassTableTest, AClassDefinedTwiceDifferentlyIsAnError) {
  proto::Chunk first;
  *first.add_class_def() = Def(kOrders);
  first.add_ops(Op(OpKind::kArenaCreate, 1));
  first.add_arena_class(kOrders.id);
  proto::Chunk second;
  second.set_first_event(1);
  ClassDef other = kOrders;
  other.elem_size = 64;
  *second.add_class_def() = Def(other);
  second.add_ops(Op(OpKind::kArenaCreate, 2));
  second.add_arena_class(kOrders.id);
  ExpectError("conflicting_class.trace", {first, second}, 2,
              {"(chunk 1), event 1: class 3 is defined again with different content",
               "\"app::OrderIndex\" (48 bytes, tagged) before",
               "\"app::OrderIndex\" (64 bytes, tagged) in this chunk"});

  // The same definition twice is no error.
  *second.mutable_class_def(0) = Def(kOrders);
  const std::string path = WriteTrace("repeated_class.trace", {first, second}, 2);
  absl::StatusOr<ReadClasses> r = ReadClassesOf(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created_class, (std::vector<uint32_t>{3, 3}));
}

TEST(ClassTableTest, MalformedClassColumnsAreErrors) {
  proto::Chunk zero;
  *zero.add_class_def() = Def(ClassDef{0, "Zero", 8, true});
  ExpectError("class_zero.trace", {zero}, 0, {"class \"Zero\"", "has id 0"});

  proto::Chunk short_column;
  *short_column.add_class_def() = Def(kOrders);
  short_column.add_ops(Op(OpKind::kArenaCreate, 1));
  short_column.add_ops(Op(OpKind::kArenaCreate, 2));
  short_column.add_arena_class(kOrders.id);
  ExpectError("class_column_short.trace", {short_column}, 2,
              {"event 1: ARENA_CREATE without its class"});

  proto::Chunk long_column;
  *long_column.add_class_def() = Def(kOrders);
  long_column.add_ops(Op(OpKind::kArenaCreate, 1));
  long_column.add_arena_class(kOrders.id);
  long_column.add_arena_class(kOrders.id);
  ExpectError("class_column_long.trace", {long_column}, 1,
              {"2 values in its arena_class column but creates 1 arenas"});
}

}  // namespace
}  // namespace alloctrace
