// What inspect --sites says of a trace whose call sites were recorded but
// cannot be read, and of one recorded without them.
#include "alloctrace/inspect/call_site_stats.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/inspect/site_classes.h"
#include "alloctrace/proto/trace.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing_util::AddShape;
using testing_util::Op;
using testing_util::TempPath;
using testing_util::WriteTrace;

// Three allocations, each with call site 1; `module` is stack 1's frame's
// module, 0 (none) or one never defined (a damaged table).
proto::Chunk ThreeAllocationsAtOneSite(uint32_t module) {
  proto::Chunk c;
  AddShape(&c, 1, 16, 16);
  for (int i = 0; i < 3; ++i) {
    c.add_ops(Op(OpKind::kAlloc, 0));
    c.add_site(1);
  }
  proto::StackDef* s = c.add_stack_def();
  s->set_id(1);
  s->add_pc(0x401000);
  s->add_module(module);
  return c;
}

TEST(CallSiteStatsTest, ATableDamagedInTheFirstChunkIsSaidNotTakenForNoSites) {
  const std::string path = WriteTrace("damaged_first.trace", {ThreeAllocationsAtOneSite(3)}, 3);
  absl::StatusOr<CallSiteReport> r = ComputeCallSites(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_sites);
  EXPECT_EQ(r->stacks, 0u);
  EXPECT_EQ(r->allocations, 3u);
  EXPECT_EQ(r->allocations_without_site, 3u);
  const std::string text = FormatCallSitesText(*r, 5);
  EXPECT_THAT(text, HasSubstr("call sites damaged: "));
  EXPECT_THAT(text, HasSubstr("module 3 is not defined"));
  EXPECT_THAT(text, Not(HasSubstr("recorded without them")));
  const absl::Status classes = WriteSiteClasses(path, *r, 4, TempPath("damaged_classes.trace"));
  EXPECT_FALSE(classes.ok());
  EXPECT_THAT(std::string(classes.message()),
              HasSubstr("no call stack of the trace could be read"));
  EXPECT_THAT(std::string(classes.message()), HasSubstr("module 3 is not defined"));
}

TEST(CallSiteStatsTest, ATraceWithoutSitesSaysSo) {
  proto::Chunk c;
  AddShape(&c, 1, 16, 16);
  c.add_ops(Op(OpKind::kAlloc, 0));
  const std::string path = WriteTrace("no_sites.trace", {c}, 1);
  absl::StatusOr<CallSiteReport> r = ComputeCallSites(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_sites);
  EXPECT_THAT(FormatCallSitesText(*r, 5), HasSubstr("recorded without them"));
}

TEST(CallSiteStatsTest, AnUndamagedTableGroupsItsAllocations) {
  const std::string path = WriteTrace("one_site.trace", {ThreeAllocationsAtOneSite(0)}, 3);
  absl::StatusOr<CallSiteReport> r = ComputeCallSites(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_sites);
  EXPECT_EQ(r->stacks, 1u);
  EXPECT_EQ(r->allocations_without_site, 0u);
}

}  // namespace
}  // namespace alloctrace
