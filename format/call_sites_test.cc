// Call sites: the stack and module tables written by TraceWriter and read
// back by TraceReader, one site per allocation; and what the reader says of
// tables a writer would not produce (a damaged table, a site naming a stack
// that is not there): an error naming where, every event still read.
#include "alloctrace/format/call_sites.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/proto/trace.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing::HasSubstr;
using testing_util::AddShape;
using testing_util::Op;
using testing_util::TempPath;
using testing_util::WriteTrace;

struct ReadSites {
  std::vector<uint64_t> sites;  // per ALLOC and REALLOC, in order
  std::vector<StackDef> stacks;
  std::vector<ModuleDef> modules;
};

absl::StatusOr<ReadSites> ReadSitesOf(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  ReadSites r;
  absl::Status s = (*reader)->ForEachEvent(
      [&](const std::vector<Event>& events) {
        size_t n = 0;
        for (const Event& e : events) n += e.kind == OpKind::kAlloc || e.kind == OpKind::kRealloc;
        const std::vector<uint64_t>& column = (*reader)->chunk_sites();
        if (column.empty()) {
          r.sites.insert(r.sites.end(), n, 0);
        } else {
          r.sites.insert(r.sites.end(), column.begin(), column.end());
        }
      },
      [](const Event&) { return absl::OkStatus(); });
  if (!s.ok()) return s;
  r.stacks = (*reader)->call_sites().stacks();
  r.modules = (*reader)->call_sites().modules();
  return r;
}

TEST(CallSitesTest, RoundTripAcrossChunksWithDenseIds) {
  const std::string path = TempPath("sites.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header(), /*chunk_events=*/2);
    ASSERT_TRUE(w.ok()) << w.status();
    (*w)->Alloc(0, 0, 0x1000, Shape{1, 32, 16});  // before any site: 0
    (*w)->DefineModule(40, ModuleDef{0, "/usr/bin/prog", 0x400000, 0x500000, 0x1000, "\x01\x02"});
    (*w)->DefineStack(900, {0x401234, 0x7f0000001000}, {40, 0});
    (*w)->Alloc(0, 0, 0x2000, Shape{1, 64, 16}, 900);
    (*w)->DefineStack(17, {0x405000}, {40});
    (*w)->Alloc(0, 0, 0x3000, Shape{1, 64, 16}, 17);
    (*w)->Alloc(0, 0, 0x4000, Shape{1, 64, 16}, 5);  // never defined: 0
    (*w)->Realloc(0, 0, 0x4000, 0x5000, Shape{1, 128, 16}, 900);
    (*w)->Free(0, 0, 0x5000);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  absl::StatusOr<ReadSites> r = ReadSitesOf(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sites, (std::vector<uint64_t>{0, 1, 2, 0, 1}));
  ASSERT_EQ(r->modules.size(), 1u);
  EXPECT_EQ(r->modules[0].id, 1u);
  EXPECT_EQ(r->modules[0].path, "/usr/bin/prog");
  EXPECT_EQ(r->modules[0].file_offset, 0x1000u);
  EXPECT_EQ(r->modules[0].build_id, "\x01\x02");
  ASSERT_EQ(r->stacks.size(), 2u);
  EXPECT_EQ(r->stacks[0].pcs, (std::vector<uint64_t>{0x401234, 0x7f0000001000}));
  EXPECT_EQ(r->stacks[0].modules, (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(r->stacks[1].id, 2u);
}

TEST(CallSitesTest, AnAliasIsWrittenAsTheStackItNames) {
  const std::string path = TempPath("alias.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    (*w)->DefineStack(7, {0x10, 0x20}, {0, 0});
    (*w)->AliasStack(9, 7);
    (*w)->AliasStack(11, 5);  // 5 is not defined: no alias
    (*w)->Alloc(0, 0, 0x1000, Shape{1, 32, 16}, 9);
    (*w)->Alloc(0, 0, 0x2000, Shape{1, 32, 16}, 7);
    (*w)->Alloc(0, 0, 0x3000, Shape{1, 32, 16}, 11);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  absl::StatusOr<ReadSites> r = ReadSitesOf(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stacks.size(), 1u);
  EXPECT_EQ(r->sites, (std::vector<uint64_t>{1, 1, 0}));
}

TEST(CallSitesTest, TraceWithoutSitesHasNoColumnAndNoTable) {
  const std::string path = TempPath("nosites.trace");
  {
    auto w = TraceWriter::Create(path, proto::Header());
    ASSERT_TRUE(w.ok());
    (*w)->Alloc(0, 0, 0x1000, Shape{1, 32, 16});
    ASSERT_TRUE((*w)->Finish().ok());
  }
  absl::StatusOr<ReadSites> r = ReadSitesOf(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->stacks.empty());
  EXPECT_EQ(r->sites, (std::vector<uint64_t>{0}));
}

// A chunk of three allocations (events 0, 2 and 3; event 1 is a FREE).
proto::Chunk ThreeAllocations() {
  proto::Chunk c;
  AddShape(&c, 1, 16, 16);
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kFree, 0));
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kAlloc, 0));
  return c;
}

void AddStack(proto::Chunk* c, uint32_t id, std::vector<uint64_t> pcs, std::vector<uint32_t> mods) {
  proto::StackDef* s = c->add_stack_def();
  s->set_id(id);
  for (uint64_t pc : pcs) s->add_pc(pc);
  for (uint32_t m : mods) s->add_module(m);
}

// The call-site error reading a one-chunk trace of `c` (whose 4 events
// must all be read regardless).
absl::Status ReadError(const std::string& name, const proto::Chunk& c) {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(WriteTrace(name, {c}, 4));
  if (!reader.ok()) return reader.status();
  uint64_t events = 0;
  absl::Status s = (*reader)->ForEachEvent(
      [&](const std::vector<Event>&) { EXPECT_TRUE((*reader)->chunk_sites().empty()); },
      [&](const Event&) {
        ++events;
        return absl::OkStatus();
      });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(events, 4u);
  EXPECT_TRUE((*reader)->has_footer());
  return absl::DataLossError((*reader)->call_sites_error());
}

TEST(CallSitesTest, SiteNamingAMissingStackIsAnErrorAtItsEventAndTheEventsStay) {
  proto::Chunk c = ThreeAllocations();
  AddStack(&c, 1, {0x10}, {0});
  c.add_site(1);
  c.add_site(0);
  c.add_site(2);  // the third allocation: event 3
  const absl::Status s = ReadError("site_missing.trace", c);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("site_missing.trace: byte "));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("event 3: call site 2 is not in the stack table (1 stacks defined)"));
}

TEST(CallSitesTest, DamagedTablesAreErrorsAndTheEventsStay) {
  {
    proto::Chunk c = ThreeAllocations();
    AddStack(&c, 1, {0x10}, {3});
    EXPECT_THAT(std::string(ReadError("stack_module.trace", c).message()),
                HasSubstr("stack 1, frame 0: module 3 is not defined (0 are)"));
  }
  {
    proto::Chunk c = ThreeAllocations();
    AddStack(&c, 2, {0x10}, {0});
    EXPECT_THAT(std::string(ReadError("stack_order.trace", c).message()),
                HasSubstr("stack 2 is defined out of order: the next id is 1"));
  }
  {
    proto::Chunk c = ThreeAllocations();
    AddStack(&c, 1, {0x10, 0x20}, {0});
    EXPECT_THAT(std::string(ReadError("stack_modules.trace", c).message()),
                HasSubstr("stack 1 has 2 pcs but 1 module references"));
  }
  {
    proto::Chunk c = ThreeAllocations();
    AddStack(&c, 1, {0x10}, {0});
    c.add_site(1);
    EXPECT_THAT(std::string(ReadError("site_count.trace", c).message()),
                HasSubstr("the site column has 1 entries for the chunk's 3 allocations"));
  }
  {
    proto::Chunk c = ThreeAllocations();
    proto::ModuleDef* m = c.add_module_def();
    m->set_id(1);
    m->set_path("/lib/x.so");
    m->set_start(10);
    m->set_end(10);
    EXPECT_THAT(std::string(ReadError("module_range.trace", c).message()),
                HasSubstr("module 1 (/lib/x.so) has an empty address range"));
  }
  {
    proto::Chunk c = ThreeAllocations();
    AddStack(&c, 1, std::vector<uint64_t>(kMaxStackDepth + 1, 0x10),
             std::vector<uint32_t>(kMaxStackDepth + 1, 0));
    EXPECT_THAT(std::string(ReadError("stack_deep.trace", c).message()),
                HasSubstr("stack 1 has 65 frames (1 to 64 allowed)"));
  }
}

TEST(CallSitesTest, EventIndexCountsOnlyEvents) {
  proto::Chunk c;
  c.add_ops(Op(OpKind::kSetThread, 4));
  c.add_ops(Op(OpKind::kAlloc, 0));
  c.add_ops(Op(OpKind::kTimestamp, 9));
  c.add_ops(Op(OpKind::kFree, 0));
  c.add_ops(Op(OpKind::kRealloc, 0));
  std::string ops;
  for (uint64_t op : c.ops()) AppendVarint(op, &ops);
  ChunkColumns columns;
  columns.ops = ops;
  EXPECT_EQ(CountAllocations(columns), 2u);
  EXPECT_EQ(EventIndexOfAllocation(columns, 0), 0u);
  EXPECT_EQ(EventIndexOfAllocation(columns, 1), 2u);
}

}  // namespace
}  // namespace alloctrace
