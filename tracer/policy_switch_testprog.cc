// What policy_switch_test runs as a child, under the ALLOCTRACE_POLICY the
// test sets: policy_switch_testprog MODE.
//   print      prints a line to stdout (buffered when stdout is a file),
//              uses a map of class ProgIndex, returns 0
//   ambiguous  prints a line to stdout, then uses maps of classes
//              north::Dup and south::Dup, returns 0
//   shared     prints a line to stdout; the main thread and a worker churn
//              maps of class ProgIndex (one each) at once; returns 0
//   registry   prints a line to stdout; the main thread and a worker churn
//              maps sharing one allocator of class Registry (as
//              examples/programs/service.cc's staging maps do); returns 0
//   handoff    a worker fills a map of class ProgIndex; the main thread
//              frees it after join(), then uses another; returns 0
//   fork       a worker uses a map of class ProgIndex and waits; the main
//              thread forks, and the child uses another map and exits;
//              returns the child's status
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "alloctrace/tracer/trace_allocator.h"

// Tags naming classes (at global scope, so their names are plain).
struct ProgIndex;
struct Registry;
namespace north {
struct Dup;
}  // namespace north
namespace south {
struct Dup;
}  // namespace south

namespace {

template <typename Tag>
using Map =
    std::map<int, int, std::less<int>, alloctrace::TraceAllocator<std::pair<const int, int>, Tag>>;

int Print() {
  std::printf("a line the program wrote\n");
  Map<ProgIndex> m;
  for (int i = 0; i < 100; ++i) m[i] = i;
  return m.size() == 100 ? 0 : 1;
}

int Ambiguous() {
  std::printf("a line the program wrote\n");
  Map<north::Dup> n;
  Map<south::Dup> s;
  n[1] = 1;
  s[1] = 1;
  return 0;
}

// Inserts and erases `n` keys in `m`.
template <typename M>
void Churn(M& m, int n) {
  for (int i = 0; i < n; ++i) {
    m[i % 512] = i;
    if (i % 3 == 0) m.erase((i * 7) % 512);
  }
}

int Shared() {
  std::printf("a line the program wrote\n");
  Map<ProgIndex> mine;
  mine[0] = 0;  // the main thread uses the pool first
  std::thread worker([] {
    Map<ProgIndex> theirs;
    Churn(theirs, 200000);
  });
  Churn(mine, 200000);
  worker.join();
  return 0;
}

int SharedRegistry() {
  std::printf("a line the program wrote\n");
  Map<Registry> registry;
  registry[0] = 0;  // the main thread uses the pool first
  std::thread worker([&registry] {
    Map<Registry> staging(registry.get_allocator());
    Churn(staging, 200000);
  });
  Map<Registry> staging(registry.get_allocator());
  Churn(staging, 200000);
  worker.join();
  return 0;
}

int Handoff() {
  auto* built = new Map<ProgIndex>();
  std::thread worker([built] { Churn(*built, 10000); });
  worker.join();
  delete built;  // freed by the main thread: the worker has ended
  Map<ProgIndex> after;
  Churn(after, 10000);
  return after.empty() ? 1 : 0;
}

int Fork() {
  std::mutex mu;
  std::condition_variable cv;
  bool used = false, release = false;
  std::thread worker([&] {
    Map<ProgIndex> theirs;
    Churn(theirs, 1000);
    std::unique_lock<std::mutex> l(mu);
    used = true;
    cv.notify_all();
    cv.wait(l, [&] { return release; });
  });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return used; });
  }
  const pid_t child = fork();
  if (child == 0) {
    // The worker owns the pool, but runs only in the parent.
    Map<ProgIndex> mine;
    Churn(mine, 1000);
    _exit(mine.empty() ? 1 : 0);
  }
  int status = 0;
  const bool waited = child > 0 && waitpid(child, &status, 0) == child;
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  worker.join();
  if (!waited) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  const std::string mode = argv[1];
  if (mode == "print") return Print();
  if (mode == "ambiguous") return Ambiguous();
  if (mode == "shared") return Shared();
  if (mode == "registry") return SharedRegistry();
  if (mode == "handoff") return Handoff();
  if (mode == "fork") return Fork();
  return 64;
}
