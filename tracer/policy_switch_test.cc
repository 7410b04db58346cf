// The ALLOCTRACE_POLICY switch of TraceAllocator. The switch resolves once
// per process, so every case runs in a child of its own (a death test
// forks before anything here constructs a TraceAllocator).
#include "alloctrace/tracer/policy_switch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/pool/catalog.h"
#include "alloctrace/tracer/trace_allocator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Tags naming classes of containers (at global scope, so their names are
// plain: "MixIndex", "MixRegistry").
struct MixIndex;
struct MixRegistry;
// Qualified tags, for entries that name a class by its last names.
namespace roles {
struct Queue;
}  // namespace roles
namespace north {
struct Dup;
}  // namespace north
namespace south {
struct Dup;
}  // namespace south
template <typename T>
struct Wrap;

namespace alloctrace {
namespace {

using ::testing::ExitedWithCode;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

template <typename K, typename V>
using TracedMap = std::map<K, V, std::less<K>, TraceAllocator<std::pair<const K, V>>>;

// In the child: fails the child (exit 1) with `what` unless `ok`.
void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "requirement failed: %s\n", what);
    std::_Exit(1);
  }
}

// Fills and empties two maps under `policy`; exits 0 if they were served
// as the catalog's holding says and nothing was recorded.
[[noreturn]] void ServeUnder(const char* policy, bool per_instance) {
  setenv(policy_switch::kEnvPolicy, policy, 1);
  TracedMap<int, std::string> a, b;
  for (int i = 0; i < 1000; ++i) a[i] = std::to_string(i), b[-i] = "x";
  for (int i = 0; i < 1000; i += 2) a.erase(i);
  Require(a.size() == 500 && b.size() == 1000, "maps hold what was put in");
  Require(policy_switch::Active() != nullptr, "a policy is active");
  Require(std::string(policy_switch::Active()->name) == policy, "the named policy");
  Require(a.get_allocator().arena_id() == 0, "no arena recorded");
  const void* pa = a.get_allocator().policy_pool();
  const void* pb = b.get_allocator().policy_pool();
  if (std::string(policy) == policy_switch::kStdName) {
    Require(pa == nullptr && pb == nullptr, "std has no pool");
  } else {
    Require(pa != nullptr && pb != nullptr, "a pool serves each map");
    Require((pa != pb) == per_instance, "stack: a pool per map; single: one pool");
    // Copies of a map's allocator share its pool.
    TraceAllocator<int> copy(a.get_allocator());
    Require(copy.policy_pool() == pa, "a rebound copy shares the pool");
  }
  std::_Exit(0);
}

[[noreturn]] void SingleIsTheSingletonsPool() {
  setenv(policy_switch::kEnvPolicy, "slab/st/single", 1);
  TraceAllocator<int> a;
  using SlabSt = pool::SlabPool<pool::SingleThreaded>;
  Require(a.policy_pool() == &pool::HoldingSingleton::Instance<SlabSt>(),
          "the pool SlabAllocator<T, SingleThreaded, HoldingSingleton> uses");
  std::_Exit(0);
}

[[noreturn]] void AcknowledgeOnce() {
  int fds[2];
  Require(pipe(fds) == 0, "pipe");
  setenv(policy_switch::kEnvPolicy, "slab/mt/single", 1);
  setenv(policy_switch::kEnvAckFd, std::to_string(fds[1]).c_str(), 1);
  std::list<int, TraceAllocator<int>> l = {1, 2, 3};
  TraceAllocator<int> another;  // resolves nothing again: one line
  close(fds[1]);
  char buf[256];
  const ssize_t n = read(fds[0], buf, sizeof buf);
  const std::string ack(buf, n > 0 ? static_cast<size_t>(n) : 0);
  Require(ack.rfind("alloctrace-policy slab/mt/single\nalloctrace-rss ", 0) == 0,
          "one acknowledgement naming the policy, then the resident size");
  long long rss = 0;
  Require(
      std::sscanf(ack.c_str(), "alloctrace-policy slab/mt/single\nalloctrace-rss %lld\n", &rss) ==
              1 &&
          rss > 0 && ack.back() == '\n' && ack.find("alloctrace-policy", 1) == std::string::npos,
      "a positive resident size, and nothing more");
  std::_Exit(0);
}

[[noreturn]] void UnsetRecords() {
  unsetenv(policy_switch::kEnvPolicy);
  setenv("ALLOCTRACE_OUT", (testing::TempDir() + "/unset.trace").c_str(), 1);
  TraceAllocator<int> a;
  Require(policy_switch::Active() == nullptr, "recording");
  Require(a.arena_id() != 0 && a.policy_pool() == nullptr, "a recorded arena");
  std::_Exit(0);
}

// An assignment: each class its policy, the rest (untagged int here) `*`.
[[noreturn]] void ServeAMix() {
  setenv(policy_switch::kEnvPolicy, " MixIndex = slab/st/stack ; MixRegistry=slab/mt/single;*=std",
         1);
  TraceAllocator<int, MixIndex> i1, i2;
  TraceAllocator<int, MixRegistry> r;
  TraceAllocator<int> rest;
  std::list<int, TraceAllocator<int, MixIndex>> l = {1, 2, 3};
  Require(policy_switch::Assigned() != nullptr, "an assignment is in force");
  Require(i1.policy_pool() != nullptr && i1.policy_pool() != i2.policy_pool(),
          "MixIndex: slab/st/stack, a pool per container");
  using SlabMt = pool::SlabPool<pool::MultiThreaded>;
  Require(r.policy_pool() == &pool::HoldingSingleton::Instance<SlabMt>(),
          "MixRegistry: slab/mt/single, the adopted type's pool");
  Require(rest.policy_pool() == nullptr, "the rest: std");
  Require(i1.arena_id() == 0, "nothing recorded");
  std::_Exit(0);
}

// A class the assignment names but no container used: exit 2 at exit,
// listing the classes that were used.
[[noreturn]] void UnusedClass() {
  setenv(policy_switch::kEnvPolicy, "MixIdx=slab/st/stack;*=std", 1);
  TraceAllocator<int, MixIndex> used;
  std::exit(0);
}

// Entry "Queue" names roles::Queue, the one class ending so; it counts as
// used at exit (std::exit runs the check).
[[noreturn]] void UnqualifiedEntry() {
  setenv(policy_switch::kEnvPolicy, "Queue=slab/st/stack;*=std", 1);
  TraceAllocator<int, roles::Queue> q1, q2;
  TraceAllocator<int> rest;
  Require(q1.policy_pool() != nullptr && q1.policy_pool() != q2.policy_pool(),
          "roles::Queue: slab/st/stack");
  Require(rest.policy_pool() == nullptr, "the rest: std");
  std::exit(0);
}

// The full name beats the last name: north::Dup gets its own entry,
// south::Dup the unqualified one.
[[noreturn]] void FullNameWins() {
  setenv(policy_switch::kEnvPolicy, "Dup=slab/mt/single;north::Dup=slab/st/single;*=std", 1);
  TraceAllocator<int, north::Dup> n;
  TraceAllocator<int, south::Dup> s;
  using SlabSt = pool::SlabPool<pool::SingleThreaded>;
  using SlabMt = pool::SlabPool<pool::MultiThreaded>;
  Require(n.policy_pool() == &pool::HoldingSingleton::Instance<SlabSt>(), "north::Dup: in full");
  Require(s.policy_pool() == &pool::HoldingSingleton::Instance<SlabMt>(), "south::Dup: Dup");
  std::exit(0);
}

// Entry "Dup" would serve two classes: stops when the second is seen.
[[noreturn]] void AmbiguousEntry() {
  setenv(policy_switch::kEnvPolicy, "Dup=slab/st/stack;*=std", 1);
  TraceAllocator<int, north::Dup> n;
  std::fprintf(stderr, "the first class is served\n");
  TraceAllocator<int, south::Dup> s;
  std::_Exit(0);
}

// A class with template arguments: its full name matches, a name inside
// its brackets does not.
[[noreturn]] void TemplateClass(const char* assignment, bool matched) {
  setenv(policy_switch::kEnvPolicy, assignment, 1);
  TraceAllocator<int, Wrap<roles::Queue>> w;
  Require((w.policy_pool() != nullptr) == matched, "Wrap<roles::Queue>: slab/st/stack if matched");
  std::exit(0);
}

[[noreturn]] void BadAssignment(const char* text) {
  setenv(policy_switch::kEnvPolicy, text, 1);
  TraceAllocator<int> a;
  std::_Exit(0);
}

[[noreturn]] void Unknown(const char* name) {
  setenv(policy_switch::kEnvPolicy, name, 1);
  TraceAllocator<int> a;
  std::_Exit(0);
}

// How policy_switch_testprog ended under a policy, and what it wrote.
struct ProgRun {
  ChildExit end;
  std::string out;  // its stdout, a file (so stdio buffers it)
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs policy_switch_testprog MODE with ALLOCTRACE_POLICY=`policy`.
ProgRun RunProg(const std::string& mode, const std::string& policy) {
  const char* dir = std::getenv("TEST_SRCDIR");
  const std::string prog =
      absl::StrCat(dir != nullptr ? dir : ".", "/alloctrace/tracer/policy_switch_testprog");
  const std::string out_path = absl::StrCat(testing::TempDir(), "/", mode, ".out");
  const std::string err_path = absl::StrCat(testing::TempDir(), "/", mode, ".err");
  const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(out_fd, 0);
  EXPECT_GE(err_fd, 0);
  ChildSpec spec;
  spec.argv = {prog, mode};
  spec.env = std::vector<std::string>();
  for (const std::string& v : CurrentEnvironment()) {
    if (!absl::StartsWith(v, absl::StrCat(policy_switch::kEnvPolicy, "="))) spec.env->push_back(v);
  }
  spec.env->push_back(absl::StrCat(policy_switch::kEnvPolicy, "=", policy));
  spec.stdin_null = true;
  spec.stdout_fd = out_fd;
  spec.stderr_fd = err_fd;
  ProgRun run;
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  EXPECT_TRUE(child.ok()) << child.status();
  if (child.ok()) {
    ChildLimits limits;
    limits.wall_seconds = 60;
    run.end = child->Wait(limits);
  }
  close(out_fd);
  close(err_fd);
  run.out = ReadFile(out_path);
  run.err = ReadFile(err_path);
  return run;
}

TEST(PolicySwitchTest, NamesAreStdThenTheCatalog) {
  const std::vector<std::string> names = policy_switch::Names();
  ASSERT_EQ(names.size(), 1 + pool::PoolCatalog::kSize);
  EXPECT_EQ(names[0], "std");
  using First = pool::SlabAllocator<std::byte, pool::SingleThreaded, pool::HoldingStack>;
  const std::string first = pool::EntryOf<First>().name;
  EXPECT_EQ(names[1], first);
  for (const std::string& n : names) EXPECT_NE(policy_switch::Find(n), nullptr) << n;
  EXPECT_EQ(policy_switch::Find("slab"), nullptr);
}

TEST(PolicySwitchDeathTest, UnknownPolicyExitsWithStatus2) {
  EXPECT_EXIT(Unknown("no/such/policy"), ExitedWithCode(2),
              "^alloctrace: unknown policy 'no/such/policy' in ALLOCTRACE_POLICY; see replayer "
              "--list-policies\n$");
}

TEST(PolicySwitchDeathTest, AnUnknownPolicyNearANameSuggestsIt) {
  EXPECT_EXIT(Unknown("slab/st/singel"), ExitedWithCode(2),
              "^alloctrace: unknown policy 'slab/st/singel' in ALLOCTRACE_POLICY; see replayer "
              "--list-policies; did you mean 'slab/st/single'\\?\n$");
  EXPECT_EXIT(Unknown("sdt"), ExitedWithCode(2),
              "^alloctrace: unknown policy 'sdt' in ALLOCTRACE_POLICY; see replayer "
              "--list-policies; did you mean 'std'\\?\n$");
  EXPECT_EXIT(BadAssignment("MixIndex=small_node/mt/stak;*=std"), ExitedWithCode(2),
              "unknown policy 'small_node/mt/stak' in entry 'MixIndex=small_node/mt/stak'; see "
              "replayer --list-policies; did you mean 'small_node/mt/stack'\\?\n$");
}

TEST(PolicySwitchDeathTest, StdServesWithoutRecording) {
  EXPECT_EXIT(ServeUnder("std", false), ExitedWithCode(0), "");
}

TEST(PolicySwitchDeathTest, StackPoliciesGiveEachContainerAPool) {
  EXPECT_EXIT(ServeUnder("slab/st/stack", true), ExitedWithCode(0), "");
  EXPECT_EXIT(ServeUnder("pool/boundary/exp/st/stack/free", true), ExitedWithCode(0), "");
  EXPECT_EXIT(ServeUnder("small_node/mt/stack", true), ExitedWithCode(0), "");
}

TEST(PolicySwitchDeathTest, SinglePoliciesShareTheCatalogsPool) {
  EXPECT_EXIT(ServeUnder("slab/st/single", false), ExitedWithCode(0), "");
  EXPECT_EXIT(ServeUnder("pool/ordered/lin/mt/single/keep", false), ExitedWithCode(0), "");
  EXPECT_EXIT(SingleIsTheSingletonsPool(), ExitedWithCode(0), "");
}

TEST(PolicySwitchDeathTest, AcknowledgesOnTheHandshakeFd) {
  EXPECT_EXIT(AcknowledgeOnce(), ExitedWithCode(0), "");
}

TEST(PolicySwitchDeathTest, AnAssignmentServesEachClassItsPolicy) {
  EXPECT_EXIT(ServeAMix(), ExitedWithCode(0), "");
}

TEST(AssignmentTest, AnEntryMatchesTheFullNameOrTheLastNames) {
  using policy_switch::Assignment;
  EXPECT_TRUE(Assignment::Matches("Index", "Index"));
  EXPECT_TRUE(Assignment::Matches("Index", "role::Index"));
  EXPECT_TRUE(Assignment::Matches("Index", "a::b::Index"));
  EXPECT_TRUE(Assignment::Matches("b::Index", "a::b::Index"));
  EXPECT_TRUE(Assignment::Matches("Index", "(anonymous namespace)::Index"));
  EXPECT_TRUE(Assignment::Matches("std::pair<const int, int>", "std::pair<const int, int>"));
  EXPECT_TRUE(Assignment::Matches("pair<const int, int>", "std::pair<const int, int>"));
  EXPECT_FALSE(Assignment::Matches("Index", "OrderIndex"));  // not on a "::"
  EXPECT_FALSE(Assignment::Matches("Index", "a::OrderIndex"));
  EXPECT_FALSE(Assignment::Matches("role::Index", "Index"));        // more than the class
  EXPECT_FALSE(Assignment::Matches("Index>", "Box<role::Index>"));  // inside brackets
  EXPECT_FALSE(Assignment::Matches("int>", "std::pair<const int, int>"));
  EXPECT_FALSE(Assignment::Matches("", "a::"));
  EXPECT_FALSE(Assignment::Matches("", ""));
}

TEST(PolicySwitchDeathTest, AnEntryNamesAClassByItsLastNamesWhenOneClassEndsSo) {
  EXPECT_EXIT(UnqualifiedEntry(), ExitedWithCode(0), "");
}

TEST(PolicySwitchDeathTest, AnEntryInFullWinsOverOneByTheLastNames) {
  EXPECT_EXIT(FullNameWins(), ExitedWithCode(0), "");
}

TEST(PolicySwitchDeathTest, AnEntryMatchingTwoClassesStopsAtTheSecond) {
  EXPECT_EXIT(AmbiguousEntry(), ExitedWithCode(2),
              "^the first class is served\n"
              "alloctrace: ALLOCTRACE_POLICY entry 'Dup=slab/st/stack' matches two classes, "
              "'north::Dup' and 'south::Dup'; name the class in full\n$");
}

TEST(PolicySwitchDeathTest, AClassWithTemplateArgumentsMatchesInFullOnly) {
  EXPECT_EXIT(TemplateClass("Wrap<roles::Queue>=slab/st/stack;*=std", true), ExitedWithCode(0), "");
  EXPECT_EXIT(TemplateClass("Queue>=slab/st/stack;*=std", false), ExitedWithCode(2),
              "names class 'Queue>', which no container of this program used; its classes: "
              "Wrap<roles::Queue>");
}

TEST(PolicySwitchDeathTest, AMalformedAssignmentExitsWithStatus2NamingTheEntry) {
  EXPECT_EXIT(BadAssignment("MixIndex=slab/st/stack;MixRegistry"), ExitedWithCode(2),
              "entry 'MixRegistry' has no '='");
  EXPECT_EXIT(BadAssignment("MixIndex=slab/st/stak"), ExitedWithCode(2),
              "unknown policy 'slab/st/stak' in entry 'MixIndex=slab/st/stak'");
  EXPECT_EXIT(BadAssignment("MixIndex=std;MixIndex=slab/st/stack"), ExitedWithCode(2),
              "class 'MixIndex' is assigned twice");
  EXPECT_EXIT(BadAssignment("=std"), ExitedWithCode(2), "names no class");
  EXPECT_EXIT(BadAssignment("*=std;*=slab/st/single"), ExitedWithCode(2), "assigned twice");
}

TEST(PolicySwitchDeathTest, AClassNoContainerUsedExitsWithStatus2ListingTheClasses) {
  EXPECT_EXIT(UnusedClass(), ExitedWithCode(2),
              "names class 'MixIdx', which no container of this program used; its classes: "
              "MixIndex");
}

TEST(PolicySwitchTest, TheUnusedClassExitKeepsWhatTheProgramPrinted) {
  const ProgRun run = RunProg("print", "ProgIdx=slab/st/stack;*=std");
  EXPECT_EQ(run.end.how, ChildExit::How::kExited) << ChildExitWords(run.end, {});
  EXPECT_EQ(run.end.code, 2);
  EXPECT_EQ(run.out, "a line the program wrote\n");
  EXPECT_EQ(run.err,
            "alloctrace: ALLOCTRACE_POLICY names class 'ProgIdx', which no container of this "
            "program used; its classes: ProgIndex\n");
}

TEST(PolicySwitchTest, TheAmbiguousEntryExitKeepsWhatTheProgramPrinted) {
  const ProgRun run = RunProg("ambiguous", "Dup=slab/st/stack;*=std");
  EXPECT_EQ(run.end.how, ChildExit::How::kExited) << ChildExitWords(run.end, {});
  EXPECT_EQ(run.end.code, 2);
  EXPECT_EQ(run.out, "a line the program wrote\n");
  EXPECT_EQ(run.err,
            "alloctrace: ALLOCTRACE_POLICY entry 'Dup=slab/st/stack' matches two classes, "
            "'north::Dup' and 'south::Dup'; name the class in full\n");
}

TEST(PolicySwitchTest, AnStSinglePoolReachedByTwoRunningThreadsStops) {
  const ProgRun run = RunProg("shared", "slab/st/single");
  EXPECT_EQ(run.end.how, ChildExit::How::kExited) << ChildExitWords(run.end, {});
  EXPECT_EQ(run.end.code, 2);
  EXPECT_EQ(run.out, "a line the program wrote\n");
  EXPECT_THAT(run.err,
              MatchesRegex("alloctrace: ALLOCTRACE_POLICY gives slab/st/single, a single-threaded "
                           "pool and one pool for the whole process, to every class, but thread "
                           "2 \\(tid [0-9]+\\) used it while thread 1 \\(tid [0-9]+, the main "
                           "thread\\), which used it before, is still running; give the classes "
                           "two threads reach an mt policy \\(slab/mt/single\\) or std\n"));
}

TEST(PolicySwitchTest, AnAssignedStSinglePoolReachedByTwoRunningThreadsNamesItsClasses) {
  const ProgRun run = RunProg("shared", "ProgIndex=slab/st/single;*=std");
  EXPECT_EQ(run.end.how, ChildExit::How::kExited) << ChildExitWords(run.end, {});
  EXPECT_EQ(run.end.code, 2);
  EXPECT_THAT(run.err, MatchesRegex("alloctrace: ALLOCTRACE_POLICY gives slab/st/single, a "
                                    "single-threaded pool and one pool for the whole process, to "
                                    "class 'ProgIndex', but thread 2 .* give this class an mt "
                                    "policy \\(slab/mt/single\\) or std\n"));
  const ProgRun with_rest = RunProg("shared", "ProgIndex=slab/st/single;*=slab/st/single");
  EXPECT_EQ(with_rest.end.code, 2);
  EXPECT_THAT(with_rest.err, HasSubstr("to classes 'ProgIndex' and '*', but thread 2 "));
  EXPECT_THAT(with_rest.err, HasSubstr("give the classes two threads reach an mt policy"));
}

TEST(PolicySwitchTest, AnStStackPoolReachedByTwoRunningThreadsStopsNamingItsClass) {
  const ProgRun run = RunProg("registry", "Registry=slab/st/stack;*=std");
  EXPECT_EQ(run.end.how, ChildExit::How::kExited) << ChildExitWords(run.end, {});
  EXPECT_EQ(run.end.code, 2);
  EXPECT_EQ(run.out, "a line the program wrote\n");
  EXPECT_THAT(run.err,
              MatchesRegex("alloctrace: ALLOCTRACE_POLICY gives class 'Registry' slab/st/stack, a "
                           "single-threaded pool, but thread 2 \\(tid [0-9]+\\) used it while "
                           "thread 1 \\(tid [0-9]+, the main thread\\), which used it before, is "
                           "still running; give this class an mt policy \\(slab/mt/stack\\) or "
                           "std\n"));
}

TEST(PolicySwitchTest, AnStPoolPassesToTheNextThreadOnceItsOwnerEnded) {
  const ProgRun run = RunProg("handoff", "slab/st/single");
  EXPECT_TRUE(run.end.Succeeded()) << ChildExitWords(run.end, {}) << ": " << run.err;
  EXPECT_EQ(run.err, "");
}

TEST(PolicySwitchTest, AForkedChildTakesOverThePoolsOfThreadsLeftInTheParent) {
  const ProgRun run = RunProg("fork", "slab/st/single");
  EXPECT_TRUE(run.end.Succeeded()) << ChildExitWords(run.end, {}) << ": " << run.err;
  EXPECT_EQ(run.err, "");
}

TEST(PolicySwitchTest, AnMtPoolIsNotChecked) {
  const ProgRun run = RunProg("shared", "slab/mt/single");
  EXPECT_TRUE(run.end.Succeeded()) << ChildExitWords(run.end, {}) << ": " << run.err;
  EXPECT_EQ(run.out, "a line the program wrote\n");
}

TEST(PolicySwitchDeathTest, UnsetRecords) { EXPECT_EXIT(UnsetRecords(), ExitedWithCode(0), ""); }

}  // namespace
}  // namespace alloctrace
