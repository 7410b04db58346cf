#include "alloctrace/tracer/workloads/workload_params.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace alloctrace::workloads {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<ParamSpec>& Specs() {
  static const std::vector<ParamSpec>* const kSpecs = new std::vector<ParamSpec>{
      {"entries", 100, "1,000,000", "entries inserted"},
      {"node_size", 0, "", "bytes per node; 0 = all", 0, {0, 8, 16}},
  };
  return *kSpecs;
}

absl::Status ParseError(std::vector<std::string> overrides) {
  return ParseWorkloadParams("demo", Specs(), overrides).status();
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(WorkloadParamsTest, DefaultsAndOverrides) {
  absl::StatusOr<WorkloadParams> params = ParseWorkloadParams("demo", Specs(), {});
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->Get("entries"), 100);
  EXPECT_EQ(params->Get("node_size"), 0);
  EXPECT_EQ(params->ToString(), "entries=100 node_size=0");

  params = ParseWorkloadParams("demo", Specs(), {"entries=5", " node_size = 16 "});
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->Get("entries"), 5);
  EXPECT_EQ(params->Get("node_size"), 16);
  EXPECT_EQ(params->values(), (std::vector<int64_t>{5, 16}));
  EXPECT_EQ(params->workload(), "demo");
}

TEST(WorkloadParamsTest, UnknownName) {
  const absl::Status s = ParseError({"entrys=5"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s), AllOf(HasSubstr("demo"), HasSubstr("unknown parameter entrys"),
                                HasSubstr("known: entries, node_size")));
}

TEST(WorkloadParamsTest, NotAnInteger) {
  for (const char* bad :
       {"entries=abc", "entries=", "entries=1.5", "entries=12x", "entries=99999999999999999999"}) {
    const absl::Status s = ParseError({std::string(bad)});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(Message(s),
                AllOf(HasSubstr("demo"), HasSubstr("entries"), HasSubstr("not a 64-bit integer")))
        << bad;
  }
}

TEST(WorkloadParamsTest, NonPositive) {
  for (const char* bad : {"entries=0", "entries=-3"}) {
    const absl::Status s = ParseError({std::string(bad)});
    EXPECT_THAT(Message(s), AllOf(HasSubstr("demo"), HasSubstr("entries"), HasSubstr(">= 1")))
        << bad;
  }
  EXPECT_THAT(Message(ParseError({"node_size=-1"})), HasSubstr(">= 0"));
}

TEST(WorkloadParamsTest, NotAnAllowedValue) {
  const absl::Status s = ParseError({"node_size=12"});
  EXPECT_THAT(Message(s),
              AllOf(HasSubstr("node_size"), HasSubstr("one of 0, 8, 16"), HasSubstr("got 12")));
}

TEST(WorkloadParamsTest, NotAnAssignment) {
  EXPECT_THAT(Message(ParseError({"entries"})), AllOf(HasSubstr("demo"), HasSubstr("name=value")));
  EXPECT_THAT(Message(ParseError({""})), HasSubstr("name=value"));
}

TEST(WorkloadParamsTest, GivenTwice) {
  EXPECT_THAT(Message(ParseError({"entries=5", "entries=6"})),
              AllOf(HasSubstr("entries"), HasSubstr("more than once")));
}

TEST(WorkloadParamsTest, SetChecksLikeParse) {
  WorkloadParams params("demo", Specs());
  EXPECT_TRUE(params.Set("entries", 7).ok());
  EXPECT_EQ(params.Get("entries"), 7);
  EXPECT_FALSE(params.Set("entries", 0).ok());
  EXPECT_FALSE(params.Set("bogus", 1).ok());
  EXPECT_EQ(params.Get("entries"), 7);
}

TEST(WorkloadParamsDeathTest, GetOfUndeclaredNameAborts) {
  WorkloadParams params("demo", Specs());
  EXPECT_DEATH(params.Get("bogus"), "demo reads undeclared parameter bogus");
}

}  // namespace
}  // namespace alloctrace::workloads
