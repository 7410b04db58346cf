// stdlib_events + events_to_trace (the libc++ recording path) against the
// record path: built here with libstdc++, both must give the same events,
// and bad event files must be refused with the line at fault.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/workloads/workloads.h"
#include "gtest/gtest.h"

namespace alloctrace::workloads {
namespace {

struct Output {
  int exit_code;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Output RunCommand(const std::string& command) {
  const std::string out = ::testing::TempDir() + "/cmd.out";
  const std::string err = ::testing::TempDir() + "/cmd.err";
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, Slurp(out), Slurp(err)};
}

const char kEvents[] = "tracer/workloads/stdlib_events";
const char kConvert[] = "tracer/workloads/events_to_trace";

// (kind, arena, object, bytes, align) of every event, and the header.
struct Decoded {
  std::vector<std::tuple<int, uint32_t, uint32_t, uint64_t, uint64_t>> events;
  proto::Header header;
};

Decoded Decode(const std::string& path) {
  Decoded d;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return d;
  d.header = (*reader)->header();
  std::vector<Event> events;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextChunk(&events);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    for (const Event& e : events) {
      uint64_t bytes = 0, align = 0;
      if (e.kind == OpKind::kAlloc) {
        const Shape& s = (*reader)->shapes()[e.shape];
        bytes = s.elem_size * s.count;
        align = s.align;
      }
      d.events.emplace_back(static_cast<int>(e.kind), e.arena, e.object, bytes, align);
    }
  }
  EXPECT_TRUE((*reader)->has_footer());
  return d;
}

TEST(StdlibEventsTest, SameEventsAsRecordForEverySharedPtrWorkload) {
  for (const char* name : {"shared_ptr_new", "make_shared", "allocate_shared"}) {
    const WorkloadInfo* info = FindWorkload(name);
    ASSERT_NE(info, nullptr);
    const std::vector<std::string> overrides = {"lists=20", "nodes=500", "iterations=30",
                                                "inserts_per_iteration=20"};
    absl::StatusOr<WorkloadParams> params = info->ParseParams(overrides);
    ASSERT_TRUE(params.ok());
    RecordingOptions options;
    options.path = absl::StrCat(::testing::TempDir(), "/", name, ".record.trace");
    options.workload = name;
    ASSERT_TRUE(Recorder::Global().Start(options).ok());
    info->run_traced(*params, 5);
    ASSERT_TRUE(Recorder::Global().Stop().ok());

    const std::string events = absl::StrCat(::testing::TempDir(), "/", name, ".events");
    const std::string trace = absl::StrCat(::testing::TempDir(), "/", name, ".events.trace");
    Output o = RunCommand(absl::StrCat(kEvents, " ", name, " 5 20 500 30 20 ", events));
    ASSERT_EQ(o.exit_code, 0) << o.err;
    o = RunCommand(absl::StrCat(kConvert, " --in=", events, " --out=", trace));
    ASSERT_EQ(o.exit_code, 0) << o.err;

    const Decoded recorded = Decode(options.path);
    const Decoded converted = Decode(trace);
    EXPECT_GT(recorded.events.size(), 1000u);
    EXPECT_TRUE(recorded.events == converted.events) << name;
    EXPECT_EQ(converted.header.workload(), name);
    EXPECT_EQ(converted.header.labels().at("stdlib"), "libstdc++");
    EXPECT_EQ(converted.header.labels().at("nodes"), "500");
    EXPECT_EQ(converted.header.labels().at("seed"), "5");
  }
}

void ExpectRefused(const std::string& text, const std::string& message) {
  const std::string path = ::testing::TempDir() + "/bad.events";
  const std::string trace = ::testing::TempDir() + "/bad.trace";
  std::remove(trace.c_str());
  std::ofstream(path) << text;
  const Output o = RunCommand(absl::StrCat(kConvert, " --in=", path, " --out=", trace));
  EXPECT_EQ(o.exit_code, 1) << text;
  EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
  EXPECT_FALSE(std::ifstream(trace).good()) << "a trace was written for bad input";
}

TEST(StdlibEventsTest, BadEventFilesAreRefusedWithTheLine) {
  const std::string head =
      "alloctrace-events 1\nstdlib libc++ 14000\ncompiler clang 14\nworkload make_shared\n"
      "seed 1\n";
  ExpectRefused("", "empty file");
  ExpectRefused("hello\n", ":1: not an alloctrace event file");
  ExpectRefused(head + "A 10 0 8 1 8\n",
                "ends after line 6 without an end line: the event file was cut short");
  ExpectRefused(head + "F 10 0\nend 1\n", ":6: F of 10 which is not live");
  ExpectRefused(head + "A 10 3 8 1 8\nend 1\n", ":6: A in arena 3 which is not live");
  ExpectRefused(head + "C 1\nA 10 1 8 1 8\nF 10 0\nend 3\n",
                ":8: F of 10 in arena 0; it was allocated in arena 1");
  ExpectRefused(head + "A 10 0 8 1 3\nend 1\n", ":6: alignment 3 is not a power of two");
  ExpectRefused(head + "A 10 0 8 1 8\nF 10 0\nend 5\n", ":8: end says 5 events, the file has 2");
  ExpectRefused(head + "param nodes x\nend 0\n", "nodes");
  ExpectRefused(head + "Q 1\nend 0\n", ":6: cannot read \"Q 1\"");
}

TEST(StdlibEventsTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCommand(absl::StrCat(kEvents, " make_shared 1")).exit_code, 2);
  const Output o = RunCommand(absl::StrCat(kEvents, " no_such 1 1 1 1 1 /dev/null"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("unknown workload 'no_such'"), std::string::npos) << o.err;
  EXPECT_EQ(RunCommand(absl::StrCat(kConvert, " --in=x")).exit_code, 2);
  // A misspelled flag exits 2 (not Abseil's 1) with the nearest name.
  const Output typo = RunCommand(absl::StrCat(kConvert, " --inn=x --out=y"));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("events_to_trace: unknown flag --inn; did you mean --in?"),
            std::string::npos)
      << typo.err;
}

}  // namespace
}  // namespace alloctrace::workloads
