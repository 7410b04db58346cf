// Runs //tracer/capture:capture on our own test program and on programs
// nobody here wrote (sort, python3), and checks the traces it leaves.
//
// Under --config=asan the test and the capture tool are sanitized, while the
// preload library and capture_testprog are built without sanitizers (see
// no_sanitizer.bzl), as they must be to load into ordinary programs.
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/inspect/call_site_stats.h"
#include "alloctrace/inspect/site_classes.h"
#include "alloctrace/inspect/trace_stats.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

extern char** environ;

namespace alloctrace {
namespace {

std::string Runfile(const std::string& path) {
  const char* dir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(dir != nullptr ? dir : ".", "/alloctrace/", path);
}

std::string CaptureBin() { return Runfile("tracer/capture/capture"); }
std::string TestProg() { return Runfile("tracer/capture/capture_testprog"); }
std::string MtProgram() { return Runfile("examples/mt_program/mt_program"); }
std::string LruCache() { return Runfile("examples/programs/lru_cache"); }

std::string TempDir(const std::string& name) {
  std::string dir = testing::TempDir();
  if (dir.empty() || dir.back() != '/') dir += '/';
  dir += name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

struct RunResult {
  int status = -1;     // as from waitpid
  std::string output;  // stdout and stderr together
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }
};

// Runs argv with stdout+stderr captured; `on_line` sees each line as it comes.
RunResult RunCommand(const std::vector<std::string>& argv,
                     const std::function<void(const std::string&)>& on_line = {},
                     const std::vector<std::string>& extra_env = {}) {
  RunResult result;
  int fds[2];
  if (pipe(fds) != 0) return result;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  for (const std::string& e : extra_env) env.push_back(e);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    execve(args[0], args.data(), envp.data());
    _exit(126);
  }
  close(fds[1]);
  std::string pending;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      if (on_line) on_line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  }
  close(fds[0]);
  waitpid(pid, &result.status, 0);
  return result;
}

RunResult Capture(const std::string& out, const std::vector<std::string>& program,
                  const std::function<void(const std::string&)>& on_line = {},
                  const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {CaptureBin(), "--out=" + out};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return RunCommand(argv, on_line);
}

using ShapeKey = std::tuple<uint64_t, uint64_t, uint64_t>;  // elem_size, count, align

// Per shape: allocations (ALLOC, and REALLOC targets counted apart) and frees
// (FREE, and the object a REALLOC replaces).
struct ShapeCounts {
  std::map<ShapeKey, uint64_t> allocs, realloc_targets, frees;
  uint64_t events = 0;
  bool has_footer = false;
  proto::Header header;
  proto::Footer footer;
};

ShapeCounts CountShapes(const std::string& path) {
  ShapeCounts c;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return c;
  c.header = (*reader)->header();
  std::vector<ShapeKey> object_shape;
  std::vector<Event> events;
  auto key = [&](uint32_t shape) {
    const Shape& s = (*reader)->shapes()[shape];
    return ShapeKey{s.elem_size, s.count, s.align};
  };
  auto set_shape = [&](uint32_t object, ShapeKey k) {
    if (object >= object_shape.size()) object_shape.resize(object + 1);
    object_shape[object] = k;
  };
  while (true) {
    auto more = (*reader)->NextChunk(&events);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    for (const Event& e : events) {
      ++c.events;
      if (e.kind == OpKind::kAlloc) {
        ++c.allocs[key(e.shape)];
        set_shape(e.object, key(e.shape));
      } else if (e.kind == OpKind::kFree) {
        ++c.frees[object_shape[e.object]];
      } else if (e.kind == OpKind::kRealloc) {
        ++c.frees[object_shape[e.old_object]];
        ++c.realloc_targets[key(e.shape)];
        set_shape(e.object, key(e.shape));
      }
    }
  }
  c.has_footer = (*reader)->has_footer();
  c.footer = (*reader)->footer();
  return c;
}

TEST(CaptureToolTest, UsageErrorsAreOneLineAndExit2) {
  RunResult r = RunCommand({CaptureBin(), "--", TestProg(), "known"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_TRUE(absl::StartsWith(r.output, "capture: missing --out=FILE")) << r.output;

  r = RunCommand({CaptureBin(), "--out=x.trace"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_TRUE(absl::StartsWith(r.output, "capture: no program to run")) << r.output;

  r = RunCommand({CaptureBin(), "--out=x.trace", "--", "no-such-program-alloctrace"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_EQ(r.output, "capture: cannot run no-such-program-alloctrace: not found on PATH\n");

  r = RunCommand({CaptureBin(), "--out=x.trace", "--", "./no/such/file"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_EQ(r.output, "capture: cannot run ./no/such/file: no such file\n");

  const std::string data = TempDir("usage") + "/data.txt";
  std::FILE* f = std::fopen(data.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  chmod(data.c_str(), 0644);
  r = RunCommand({CaptureBin(), "--out=x.trace", "--", data});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_EQ(r.output, "capture: cannot run " + data + ": not an executable file\n");

  r = RunCommand({CaptureBin(), "--bogus", "--out=x.trace", "--", "true"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_TRUE(absl::StartsWith(r.output, "capture: unknown flag --bogus")) << r.output;

  r = RunCommand({CaptureBin(), "--out=x.trace", "--wrokload=w", "--", "true"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_EQ(r.output, "capture: unknown flag --wrokload; did you mean --workload?\n");

  // Where the trace cannot go, the program is not run.
  const std::string ran = TempDir("usage") + "/ran";
  r = RunCommand({CaptureBin(), "--out=/nonexistent-alloctrace/x.trace", "--", "touch", ran});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_EQ(r.output,
            "capture: cannot write /nonexistent-alloctrace/x.trace: its directory "
            "/nonexistent-alloctrace: No such file or directory; nothing run\n");
  struct stat st;
  EXPECT_NE(stat(ran.c_str(), &st), 0) << "the program ran";

  // Nor where --out names something that is not a regular file: it is
  // refused, never removed (as root, --out=/dev/null would otherwise take
  // /dev/null from the machine). A FIFO of the test's own stands for it.
  const std::string fifo = TempDir("usage") + "/pipe";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  r = RunCommand({CaptureBin(), "--out=" + fifo, "--", "touch", ran});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_EQ(r.output, "capture: " + fifo +
                          " is a FIFO: capture writes its trace to a regular file; nothing run\n");
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  EXPECT_NE(stat(ran.c_str(), &st), 0) << "the program ran";

  // Through a symbolic link the trace goes to the file it names; the link
  // stays a link.
  const std::string target = TempDir("usage") + "/target.trace";
  const std::string link = TempDir("usage") + "/link.trace";
  ::unlink(link.c_str());
  {
    std::FILE* f = std::fopen(target.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("an earlier trace", f);
    std::fclose(f);
  }
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  r = RunCommand({CaptureBin(), "--out=" + link, "--", "true"});
  EXPECT_EQ(r.exit_code(), 0) << r.output;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced";
  EXPECT_TRUE(ComputeTraceStats(target).ok()) << "the link's target is not the trace";

  // Nor over the program it runs, nor to a descriptor.
  const std::string prog = TempDir("usage") + "/prog";
  {
    std::FILE* f = std::fopen(prog.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\nexit 0\n", f);
    std::fclose(f);
    ASSERT_EQ(::chmod(prog.c_str(), 0755), 0);
  }
  r = RunCommand({CaptureBin(), "--out=" + prog, "--", prog});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_THAT(r.output, testing::HasSubstr("is being read: writing there would destroy it"));
  EXPECT_EQ(::access(prog.c_str(), X_OK), 0) << "the program was removed";
  r = RunCommand({CaptureBin(), "--out=/dev/stdout", "--", "true"});
  EXPECT_EQ(r.exit_code(), 2) << r.output;
  EXPECT_THAT(r.output, testing::HasSubstr("capture writes its trace to a file of its own"));
}

TEST(CaptureToolTest, HelpListsTheFlags) {
  const RunResult r = RunCommand({CaptureBin(), "--help"});
  EXPECT_TRUE(absl::StrContains(r.output, "usage: capture --out=FILE")) << r.output;
  for (const char* flag : {"--out", "--workload", "--preload"}) {
    EXPECT_TRUE(absl::StrContains(r.output, flag)) << flag << "\n" << r.output;
  }
}

// Without "--", the program starts at the first argument that is not a
// flag; what follows is the program's, flags included.
TEST(CaptureToolTest, ProgramFromTheFirstPositionalArgument) {
  const std::string out = TempDir("positional") + "/positional.trace";
  const RunResult r = RunCommand({CaptureBin(), "--out=" + out, "sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code(), 3) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "capture: " + out + ": sh, ")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "; sh exited with 3")) << r.output;
}

TEST(CaptureToolTest, RelativePathsResolveAgainstBuildWorkingDirectory) {
  const std::string dir = TempDir("bwd");
  // `bazel run` sets BUILD_WORKING_DIRECTORY; --out and the program's cwd
  // follow it. `pwd` runs there (a bare name, found in PATH).
  RunResult r = RunCommand({CaptureBin(), "--out=rel.trace", "--", "sh", "-c", "pwd"}, {},
                           {"BUILD_WORKING_DIRECTORY=" + dir});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, dir + "\n")) << r.output;
  struct stat st;
  EXPECT_EQ(stat((dir + "/rel.trace").c_str(), &st), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "capture: " + dir + "/rel.trace: ")) << r.output;
  // dash ends with _exit, which the library replaces to write the footer.
  auto stats = ComputeTraceStats(dir + "/rel.trace");
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(stats->has_footer) << r.output;
  EXPECT_GT(stats->events, 0u);
}

TEST(CaptureTest, KnownAllocationsAppearWithTheirShapes) {
  const std::string out = TempDir("known") + "/known.trace";
  RunResult r = Capture(out, {TestProg(), "known"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "known done")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "capture: " + out + ": ")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "complete; ")) << r.output;

  auto stats = ComputeTraceStats(out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(stats->has_footer);
  EXPECT_EQ(stats->threads, 1u);
  EXPECT_EQ(stats->header.workload(), "capture_testprog");
  EXPECT_TRUE(absl::StrContains(stats->header.labels().at("cmdline"), "capture_testprog known"));
  constexpr uint64_t kEach = 10;
  EXPECT_GE(stats->allocs, 11 * kEach);  // the C runtime adds its own
  EXPECT_GE(stats->reallocs, kEach);

  const ShapeCounts c = CountShapes(out);
  const std::vector<ShapeKey> allocated = {
      {1, 1001, 16},    // malloc
      {143, 7, 16},     // calloc(7, 143)
      {1, 2002, 16},    // malloc, then realloc'd
      {1, 3000, 16},    // reallocarray(NULL, 3, 1000)
      {1, 4004, 64},    // posix_memalign
      {1, 5120, 128},   // aligned_alloc
      {1, 1111, 32},    // memalign
      {1, 3333, 4096},  // valloc
      {1, 6006, 16},    // new char[]
      {1, 7008, 16},    // new Big
      {1, 2560, 256},   // aligned new
  };
  for (const ShapeKey& k : allocated) {
    const auto [elem, count, align] = k;
    SCOPED_TRACE(absl::StrCat(elem, "x", count, " align ", align));
    EXPECT_EQ(c.allocs.count(k) ? c.allocs.at(k) : 0, kEach);
    const uint64_t frees = c.frees.count(k) ? c.frees.at(k) : 0;
    EXPECT_EQ(frees, kEach) << "every known block is freed (2002: by realloc)";
  }
  const ShapeKey realloc_target{1, 3003, 16};
  EXPECT_EQ(c.realloc_targets.count(realloc_target) ? c.realloc_targets.at(realloc_target) : 0,
            kEach);
  EXPECT_EQ(c.frees.count(realloc_target) ? c.frees.at(realloc_target) : 0, kEach);
}

TEST(CaptureTest, ForkedChildWritesItsOwnTrace) {
  const std::string dir = TempDir("fork");
  const std::string out = dir + "/fork.trace";
  int parent = 0, child = 0;
  RunResult r = Capture(out, {TestProg(), "fork"}, [&](const std::string& line) {
    const std::vector<std::string> w = absl::StrSplit(line, ' ');
    if (w.size() != 2) return;
    if (w[0] == "parent") {
      EXPECT_TRUE(absl::SimpleAtoi(w[1], &parent)) << line;
    } else if (w[0] == "child") {
      EXPECT_TRUE(absl::SimpleAtoi(w[1], &child)) << line;
    }
  });
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  ASSERT_GT(parent, 0) << r.output;
  ASSERT_GT(child, 0) << r.output;
  const std::string child_out = absl::StrCat(dir, "/fork.", child, ".trace");
  EXPECT_TRUE(absl::StrContains(r.output, "capture: " + child_out + ": ")) << r.output;

  const ShapeCounts p = CountShapes(out);
  EXPECT_TRUE(p.has_footer);
  EXPECT_EQ(p.header.pid(), static_cast<uint32_t>(parent));
  EXPECT_EQ(p.allocs.count({1, 11111, 16}) ? p.allocs.at({1, 11111, 16}) : 0, 5u);
  EXPECT_EQ(p.allocs.count({1, 33333, 16}) ? p.allocs.at({1, 33333, 16}) : 0, 5u);
  EXPECT_EQ(p.allocs.count({1, 22222, 16}), 0u) << "the child's allocations are not the parent's";

  const ShapeCounts c = CountShapes(child_out);
  EXPECT_TRUE(c.has_footer);
  EXPECT_EQ(c.header.pid(), static_cast<uint32_t>(child));
  EXPECT_EQ(c.header.labels().at("forked"), "true");
  EXPECT_EQ(c.allocs.count({1, 22222, 16}) ? c.allocs.at({1, 22222, 16}) : 0, 5u);
  EXPECT_EQ(c.allocs.count({1, 11111, 16}), 0u);
  EXPECT_EQ(c.allocs.count({1, 33333, 16}), 0u);
  // The child frees the parent's five blocks, which its trace never saw.
  EXPECT_GE(c.footer.unmatched_frees(), 5u);
  for (const std::string& path : {out, child_out}) {
    auto st = ComputeTraceStats(path);
    EXPECT_TRUE(st.ok()) << st.status();
  }
}

TEST(CaptureTest, ExecWritesANewFileAndCompletesTheOldOne) {
  const std::string dir = TempDir("exec");
  const std::string out = dir + "/exec.trace";
  // dash execs the program in place: same pid, a new image.
  RunResult r = Capture(out, {"/bin/sh", "-c", "exec " + TestProg() + " known"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  const std::string second = dir + "/exec.1.trace";
  EXPECT_TRUE(absl::StrContains(r.output, "capture: " + second + ": capture_testprog, "))
      << r.output;
  auto shell = ComputeTraceStats(out);
  ASSERT_TRUE(shell.ok()) << shell.status();
  EXPECT_TRUE(shell->has_footer) << "the library stops the recording before exec";
  EXPECT_EQ(shell->header.workload(), "sh");
  const ShapeCounts c = CountShapes(second);
  EXPECT_TRUE(c.has_footer);
  EXPECT_EQ(c.header.pid(), shell->header.pid());
  EXPECT_EQ(c.allocs.count({1, 1001, 16}) ? c.allocs.at({1, 1001, 16}) : 0, 10u);
}

// A child that execs before it allocates leaves no trace of its own; the
// image it execs is still a child's, named by its pid, never taken for an
// image of the program itself (the program's name, ".1").
TEST(CaptureTest, ChildThatExecsIsNamedByItsPid) {
  const std::string dir = TempDir("spawn");
  const std::string out = dir + "/spawn.trace";
  // "; true": the shell forks for the program instead of exec'ing it.
  RunResult r = Capture(out, {"/bin/sh", "-c", TestProg() + " known; true"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  auto shell = ComputeTraceStats(out);
  ASSERT_TRUE(shell.ok()) << shell.status();
  EXPECT_EQ(shell->header.workload(), "sh");
  std::string child_out;
  const std::string prefix = "capture: " + dir + "/spawn.";
  for (absl::string_view line : absl::StrSplit(r.output, '\n')) {
    const size_t at = line.find(": capture_testprog, ");
    if (absl::StartsWith(line, prefix) && at != absl::string_view::npos) {
      child_out = std::string(line.substr(9, at - 9));
    }
  }
  ASSERT_FALSE(child_out.empty()) << r.output;
  auto child = ComputeTraceStats(child_out);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_NE(child->header.pid(), shell->header.pid());
  EXPECT_TRUE(absl::StartsWith(child_out, absl::StrCat(dir, "/spawn.", child->header.pid(), ".")))
      << child_out;
  struct stat st;
  EXPECT_NE(stat((dir + "/spawn.1.trace").c_str(), &st), 0) << r.output;
}

TEST(CaptureTest, KilledProgramLeavesCompleteChunks) {
  const std::string out = TempDir("killed") + "/killed.trace";
  int pid = 0;
  RunResult r = Capture(out, {TestProg(), "spin"}, [&](const std::string& line) {
    if (absl::StartsWith(line, "ready ") && absl::SimpleAtoi(line.substr(6), &pid)) {
      kill(pid, SIGKILL);
    }
  });
  ASSERT_GT(pid, 0) << r.output;
  EXPECT_EQ(r.exit_code(), 128 + SIGKILL) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "killed by signal 9")) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "cut short")) << r.output;
  auto stats = ComputeTraceStats(out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_FALSE(stats->has_footer);
  EXPECT_FALSE(stats->cut_short.empty());
  // "ready" comes 300 ms after the 200000th allocation (the writer flushes
  // every 50 ms); allow for a writer starved on a loaded machine.
  EXPECT_GE(stats->allocs, 180000u) << "what was flushed before the kill is there";
}

TEST(CaptureTest, ThreadsAndCrossThreadFrees) {
  const std::string out = TempDir("threads") + "/threads.trace";
  RunResult r = Capture(out, {TestProg(), "threads"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  const ShapeCounts c = CountShapes(out);
  EXPECT_TRUE(c.has_footer);
  EXPECT_GE(c.footer.threads(), 4u);
  for (uint64_t t = 0; t < 4; ++t) {
    const ShapeKey k{1, 4000 + t, 16};
    EXPECT_EQ(c.allocs.count(k) ? c.allocs.at(k) : 0, 1000u) << t;
    EXPECT_EQ(c.frees.count(k) ? c.frees.at(k) : 0, 1000u) << "freed by another thread " << t;
  }
  auto stats = ComputeTraceStats(out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GE(stats->allocs, 4u * 20000);
  EXPECT_GE(stats->threads, 4u);
}

// examples/mt_program, a program with no alloctrace code: 2 producers
// `new` 3000 messages each (a Message and its payload), 2 consumers
// `delete` them. The trace names the threads, and every message's two
// blocks are freed on another thread than the one that allocated them.
TEST(CaptureTest, UninstrumentedProducerConsumerProgram) {
  const std::string out = TempDir("mt_program") + "/mt.trace";
  RunResult r = Capture(out, {MtProgram(), "2", "2", "3000"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "2 producers, 2 consumers, 3000 messages each"))
      << r.output;
  auto reader = TraceReader::Open(out);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<uint32_t> alloc_thread;
  std::map<uint32_t, uint64_t> allocs_by_thread;
  uint64_t cross_thread_frees = 0;
  std::vector<Event> events;
  while (true) {
    auto more = (*reader)->NextChunk(&events);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    for (const Event& e : events) {
      if (e.kind == OpKind::kAlloc) {
        if (e.object >= alloc_thread.size()) alloc_thread.resize(e.object + 1);
        alloc_thread[e.object] = e.thread;
        ++allocs_by_thread[e.thread];
      } else if (e.kind == OpKind::kFree && e.object < alloc_thread.size()) {
        cross_thread_frees += alloc_thread[e.object] != e.thread;
      }
      EXPECT_EQ(e.arena, 0u) << "capture records the global heap only";
    }
  }
  EXPECT_TRUE((*reader)->has_footer());
  // The main thread, two producers and at least one consumer.
  EXPECT_GE((*reader)->footer().threads(), 4u);
  uint64_t producer_threads = 0;
  for (const auto& [thread, allocs] : allocs_by_thread) producer_threads += allocs >= 2 * 3000;
  EXPECT_EQ(producer_threads, 2u);
  EXPECT_GE(cross_thread_frees, 2u * 2 * 3000);
}

// A program that records its own containers carries a second copy of the
// recorder and of the trace format's code: both run, the capture records
// every allocation (the containers' through operator new), and the
// program's recorder, which would write the same file, stands aside.
TEST(CaptureTest, InstrumentedProgramIsCapturedWhole) {
  const std::string dir = TempDir("instrumented");
  const std::string out = dir + "/lru.trace";
  RunResult r = Capture(out, {LruCache(), "3000", "500"}, {}, {"--call_sites=4"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "capture: " + out + ": lru_cache, ")) << r.output;
  const ShapeCounts c = CountShapes(out);
  EXPECT_TRUE(c.has_footer);
  uint64_t allocs = 0;
  for (const auto& [shape, n] : c.allocs) allocs += n;
  // A miss allocates a payload, an entry and a list node: well over 3000
  // allocations at a 500-entry capacity.
  EXPECT_GT(allocs, 3000u);
  EXPECT_EQ(c.footer.unmatched_frees(), 0u);
  // The capture's trace is the only file: the program's own recorder wrote
  // none (its default name is alloctrace.<pid>.trace, in the directory it
  // runs in; ALLOCTRACE_OUT is the capture's).
  size_t files = 0;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) files += e->d_name[0] != '.';
  closedir(d);
  EXPECT_EQ(files, 1u);
  // The containers' allocations are the program's own code's: the cache's
  // lookup allocates its entries.
  absl::StatusOr<CallSiteReport> report = ComputeCallSites(out);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->allocations_without_site, 0u);
  bool in_lru_cache = false;
  for (const SiteGroup& g : report->groups) in_lru_cache |= g.module == "lru_cache";
  EXPECT_TRUE(in_lru_cache) << FormatCallSitesText(*report, 10);
}

TEST(CaptureTest, Sort) {
  const std::string dir = TempDir("sort");
  const std::string input = dir + "/input.txt";
  {
    std::FILE* f = std::fopen(input.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 200000; ++i) {
      std::fprintf(f, "%llu line %d\n", static_cast<unsigned long long>(rng()), i);
    }
    std::fclose(f);
  }
  const std::string out = dir + "/sort.trace";
  // A small buffer (-S) makes sort merge through temporary files, which is
  // where it allocates; with a large one it makes a few hundred allocations.
  RunResult r = Capture(out, {"sort", "-S", "100K", "-T", dir, "-o", dir + "/sorted.txt", input});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  struct stat in_st, out_st;
  ASSERT_EQ(stat(input.c_str(), &in_st), 0);
  ASSERT_EQ(stat((dir + "/sorted.txt").c_str(), &out_st), 0);
  EXPECT_EQ(in_st.st_size, out_st.st_size);
  auto stats = ComputeTraceStats(out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(stats->has_footer);
  EXPECT_GE(stats->events, 1000u) << r.output;
  EXPECT_GE(stats->threads, 1u);
  EXPECT_EQ(stats->header.workload(), "sort");
}

TEST(CaptureTest, Python) {
  struct stat st;
  if (stat("/usr/bin/python3", &st) != 0) GTEST_SKIP() << "no /usr/bin/python3 on this machine";
  const std::string out = TempDir("python") + "/python.trace";
  RunResult r = Capture(out, {"/usr/bin/python3", "-c",
                              "d = {}\n"
                              "for i in range(100000):\n"
                              "    d[str(i)] = [i] * (i % 7)\n"
                              "l = [list(range(i % 300)) for i in range(20000)]\n"
                              "print(len(d), len(l))\n"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "100000 20000")) << r.output;
  auto stats = ComputeTraceStats(out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(stats->has_footer);
  EXPECT_GE(stats->events, 10000u) << r.output;
  EXPECT_GE(stats->threads, 1u);
  EXPECT_EQ(stats->header.workload(), "python3");
  // Its objects of 512 bytes or less come from CPython's own arenas, which
  // its collector walks: nothing of malloc's for the replay to walk.
  EXPECT_EQ(stats->header.labels().count("collector"), 0u);
}

// With PYTHONMALLOC=malloc every object is malloc's, and the header says
// the program runs CPython's collector over them (replayer --touch=auto).
TEST(CaptureTest, PythonWithMallocNamesItsCollector) {
  struct stat st;
  if (stat("/usr/bin/python3", &st) != 0) GTEST_SKIP() << "no /usr/bin/python3 on this machine";
  const std::string dir = TempDir("python_malloc");
  const std::string out = dir + "/python.trace";
  ASSERT_EQ(setenv("PYTHONMALLOC", "malloc", 1), 0);
  // A forked child's trace says so too (its image is its parent's).
  RunResult r = Capture(out, {"/usr/bin/python3", "-c",
                              "import os\n"
                              "l = [[i] for i in range(20000)]\n"
                              "pid = os.fork()\n"
                              "if pid == 0:\n"
                              "    m = [[i] for i in range(1000)]\n"
                              "    os._exit(0)\n"
                              "os.waitpid(pid, 0)\n"
                              "print('child', pid)\n"});
  unsetenv("PYTHONMALLOC");
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  auto stats = ComputeTraceStats(out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GE(stats->allocs, 40000u) << r.output;  // each list and its item array
  ASSERT_EQ(stats->header.labels().count("collector"), 1u);
  EXPECT_EQ(stats->header.labels().at("collector"), "cpython");
  const size_t at = r.output.find("child ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string child = r.output.substr(at + 6, r.output.find('\n', at) - at - 6);
  auto forked = ComputeTraceStats(absl::StrCat(dir, "/python.", child, ".trace"));
  ASSERT_TRUE(forked.ok()) << forked.status() << "\n" << r.output;
  EXPECT_EQ(forked->header.labels().at("forked"), "true");
  EXPECT_EQ(forked->header.labels().at("collector"), "cpython");

  // -E and -I make CPython ignore PYTHONMALLOC (its objects stay in its
  // own arenas), alone or among other options.
  for (const char* flag : {"-E", "-Es", "-I"}) {
    const std::string ignored = absl::StrCat(dir, "/ignored", flag, ".trace");
    ASSERT_EQ(setenv("PYTHONMALLOC", "malloc", 1), 0);
    r = Capture(ignored, {"/usr/bin/python3", flag, "-c", "l = [[i] for i in range(20000)]\n"});
    unsetenv("PYTHONMALLOC");
    ASSERT_EQ(r.exit_code(), 0) << flag << ": " << r.output;
    stats = ComputeTraceStats(ignored);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_LT(stats->allocs, 20000u) << flag;
    EXPECT_EQ(stats->header.labels().count("collector"), 0u) << flag;
  }

  // A program without the interpreter under the same variable: no
  // collector, and the failed lookup leaves it nothing (no free of a block
  // its trace never saw).
  const std::string plain = dir + "/plain.trace";
  ASSERT_EQ(setenv("PYTHONMALLOC", "malloc", 1), 0);
  r = Capture(plain, {TestProg(), "dlerror"});
  unsetenv("PYTHONMALLOC");
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "dlerror: (none)")) << r.output;
  stats = ComputeTraceStats(plain);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->header.labels().count("collector"), 0u);
  EXPECT_EQ(CountShapes(plain).footer.unmatched_frees(), 0u);
}

// The group of `function` in `report`, or nullptr.
const SiteGroup* GroupOf(const CallSiteReport& report, const std::string& function) {
  for (const SiteGroup& g : report.groups) {
    if (absl::StartsWith(g.function, function)) return &g;
  }
  return nullptr;
}

TEST(CaptureCallSitesTest, AllocationsGroupByTheirAllocatingFunction) {
  const std::string out = TempDir("sites") + "/sites.trace";
  RunResult r = Capture(out, {TestProg(), "sites"}, {}, {"--call_sites=8"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  absl::StatusOr<CallSiteReport> report = ComputeCallSites(out);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->has_sites);
  EXPECT_EQ(report->allocations_without_site, 0u);
  const SiteGroup* nodes = GroupOf(*report, "(anonymous namespace)::MakeNodes");
  const SiteGroup* buffers = GroupOf(*report, "(anonymous namespace)::MakeBuffers");
  ASSERT_NE(nodes, nullptr) << FormatCallSitesText(*report, 20);
  ASSERT_NE(buffers, nullptr) << FormatCallSitesText(*report, 20);
  EXPECT_EQ(nodes->allocs, 100u);
  EXPECT_EQ(nodes->median_block, 48u);
  EXPECT_EQ(nodes->peak_live_bytes, 4800u);
  EXPECT_GE(buffers->allocs, 50u);  // and the vector's array, unless reserve is apart
  EXPECT_EQ(nodes->module, "capture_testprog");
  EXPECT_THAT(nodes->location, testing::StartsWith("capture_testprog.cc:"));
  // The walk went on through the frame pointers to the caller.
  ASSERT_GE(nodes->top_stack.size(), 2u);
  // Sites(), or main where Sites() is inlined (-g1 names no inlined calls).
  EXPECT_THAT(nodes->top_stack[1],
              testing::AnyOf(testing::HasSubstr("Sites"), testing::StartsWith("main")));
}

// The capture rewritten with its top allocating function as a class: an
// arena of its own, the rest (the other function, and whatever the C and C++
// runtimes allocate, which depends on the build) in the global heap, unnamed,
// nothing lost.
TEST(CaptureCallSitesTest, TopFunctionsBecomeClassesOfContainers) {
  const std::string dir = TempDir("siteclasses");
  const std::string out = dir + "/sites.trace";
  ASSERT_EQ(Capture(out, {TestProg(), "sites"}, {}, {"--call_sites=8"}).exit_code(), 0);
  absl::StatusOr<CallSiteReport> report = ComputeCallSites(out);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_GE(report->groups.size(), 2u) << FormatCallSitesText(*report, 20);
  const std::string classes = dir + "/classes.trace";
  ASSERT_TRUE(WriteSiteClasses(out, *report, 1, classes).ok());
  absl::StatusOr<TraceStats> before = ComputeTraceStats(out);
  absl::StatusOr<TraceStats> after = ComputeTraceStats(classes);
  ASSERT_TRUE(before.ok() && after.ok()) << after.status();
  EXPECT_EQ(after->allocs, before->allocs + before->reallocs);
  EXPECT_EQ(after->peak_live_bytes, before->peak_live_bytes);
  EXPECT_FALSE(ClassesAreCallSites(before->header));
  EXPECT_TRUE(ClassesAreCallSites(after->header));
  // The recording's pid and platform, not the rewriting process's.
  EXPECT_EQ(after->header.pid(), before->header.pid());
  EXPECT_EQ(after->header.platform(), before->header.platform());
  std::map<std::string, uint64_t> allocs_by_class;
  for (const ClassSummary& c : after->classes) {
    allocs_by_class[c.def.name] = c.allocs;
    if (c.def.id != 0) {
      EXPECT_EQ(c.arenas, 1u) << c.def.name;
    }
  }
  const std::string top = "site: " + report->groups[0].function;
  ASSERT_EQ(allocs_by_class.size(), 2u)  // the top function, and the rest unnamed
      << absl::StrJoin(allocs_by_class, ", ", absl::PairFormatter("=")) << "\n"
      << FormatCallSitesText(*report, 20);
  EXPECT_EQ(allocs_by_class[top], report->groups[0].allocs);
  EXPECT_EQ(allocs_by_class[top] + allocs_by_class[""], after->allocs);

  // A trace without sites cannot be given classes from them.
  absl::StatusOr<CallSiteReport> none = ComputeCallSites(classes);
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(std::string(WriteSiteClasses(classes, *none, 2, dir + "/x.trace").message()),
              testing::HasSubstr("the trace has no call sites"));
}

TEST(CaptureCallSitesTest, OffWhenNotAskedAndAFlagOutOfRangeIsAUsageError) {
  const std::string out = TempDir("nosites") + "/nosites.trace";
  RunResult r = Capture(out, {TestProg(), "sites"});
  ASSERT_EQ(r.exit_code(), 0) << r.output;
  absl::StatusOr<CallSiteReport> report = ComputeCallSites(out);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->has_sites);
  EXPECT_THAT(FormatCallSitesText(*report, 5), testing::StartsWith("no call sites"));
  RunResult bad = Capture(out, {TestProg(), "sites"}, {}, {"--call_sites=33"});
  EXPECT_EQ(bad.exit_code(), 2);
  EXPECT_THAT(bad.output,
              testing::HasSubstr("--call_sites=33: expected a frame count from 0 to 32"));
}

// A program file gone, or changed since the recording, or stripped: the
// report still counts every allocation and says why names are missing.
TEST(CaptureCallSitesTest, MissingChangedOrStrippedProgramsAreNamedAsSuch) {
  const std::string dir = TempDir("stripped");
  const std::string copy = dir + "/prog";
  ASSERT_EQ(RunCommand({"/bin/cp", TestProg(), copy}).exit_code(), 0);
  const std::string out = dir + "/copy.trace";
  ASSERT_EQ(Capture(out, {copy, "sites"}, {}, {"--call_sites=8"}).exit_code(), 0);

  ASSERT_EQ(::unlink(copy.c_str()), 0);
  absl::StatusOr<CallSiteReport> gone = ComputeCallSites(out);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_THAT(absl::StrJoin(gone->notes, "\n"),
              testing::HasSubstr("not symbolized: " + copy + ": cannot be opened"));
  EXPECT_NE(GroupOf(*gone, "prog+0x"), nullptr) << FormatCallSitesText(*gone, 20);
  uint64_t allocs = 0;
  for (const SiteGroup& g : gone->groups) allocs += g.allocs;
  EXPECT_EQ(allocs, gone->allocations);

  // The file back, rebuilt (another build id): not trusted.
  ASSERT_EQ(RunCommand({"/bin/cp", TestProg(), copy}).exit_code(), 0);
  ASSERT_EQ(
      RunCommand({"/usr/bin/objcopy", "--remove-section=.note.gnu.build-id", copy}).exit_code(), 0);
  absl::StatusOr<CallSiteReport> changed = ComputeCallSites(out);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_THAT(absl::StrJoin(changed->notes, "\n"), testing::HasSubstr("differs from the recorded"));

  // Stripped, recorded as such: names unknown, and said.
  ASSERT_EQ(RunCommand({"/bin/cp", TestProg(), copy}).exit_code(), 0);
  ASSERT_EQ(RunCommand({"/usr/bin/strip", copy}).exit_code(), 0);
  const std::string stripped_out = dir + "/stripped.trace";
  ASSERT_EQ(Capture(stripped_out, {copy, "sites"}, {}, {"--call_sites=8"}).exit_code(), 0);
  absl::StatusOr<CallSiteReport> stripped = ComputeCallSites(stripped_out);
  ASSERT_TRUE(stripped.ok()) << stripped.status();
  EXPECT_THAT(absl::StrJoin(stripped->notes, "\n"),
              testing::HasSubstr(copy + " has no symbols for its frames (stripped?)"));
}

}  // namespace
}  // namespace alloctrace
