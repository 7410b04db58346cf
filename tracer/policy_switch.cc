// Over 500 lines, one job: the switch (policy_switch.h). Its parts, the
// std and catalog tables, the single-threaded pools' owner check and the
// assignment, share the once-resolved process state and one way to stop
// the program (ExitBad, which flushes stdio); apart, each would need the
// others' internals.
#include "alloctrace/tracer/policy_switch.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string_view>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "alloctrace/base/did_you_mean.h"
#include "alloctrace/base/type_list.h"
#include "alloctrace/pool/catalog.h"
#include "alloctrace/pool/policies.h"

namespace alloctrace::policy_switch {
namespace {

// ---- std: ::operator new / delete, as std::allocator gets its memory. ----

void* StdAllocate(void* /*pool*/, size_t bytes, size_t align) {
  if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    return ::operator new (bytes, std::align_val_t{align}, std::nothrow);
  }
  return ::operator new(bytes, std::nothrow);
}
void StdDeallocate(void* /*pool*/, void* p, size_t bytes, size_t align) {
  if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete (p, bytes, std::align_val_t{align});
  } else {
    ::operator delete(p, bytes);
  }
}
void* NoPool(std::string_view /*class_name*/) { return nullptr; }
void NoDestroy(void* /*pool*/) {}

// ---- Single-threaded pools: the thread each one is for. ----
//
// A pool of an st policy is for one thread at a time. Each remembers its
// owner, the thread that used it last; a use by another thread while the
// owner still runs stops the program (StopSharedPool) before the pool is
// touched, where the pool would corrupt its free lists. Once the owner has
// ended, the next thread takes the pool over: a container built by a worker
// and freed by the main thread after join() is a hand-off, not a race.

// A thread that has used an st pool. Never freed: a pool may name a thread
// long ended as its owner.
struct ThreadToken {
  constexpr explicit ThreadToken(bool is_alive) : alive(is_alive) {}
  std::atomic<bool> alive;      // cleared as the thread ends
  std::atomic<pid_t> pid{0};    // the process the thread runs in
  uint32_t number = 0;          // 1, 2, ...: in order of first use of an st pool
  pid_t tid = 0;                // the kernel's thread id
  ThreadToken* next = nullptr;  // the token made before: all stay reachable
};

// The owner of a pool no thread has used: never a thread's token.
ThreadToken no_thread(/*is_alive=*/false);
// The calling thread's token; nullptr until it first uses an st pool.
thread_local ThreadToken* my_token = nullptr;
std::atomic<ThreadToken*> every_token{nullptr};
std::atomic<uint32_t> tokens_made{0};

// Marks its thread's token ended, among the thread's thread_local objects.
struct TokenReaper {
  ~TokenReaper() { my_token->alive.store(false, std::memory_order_release); }
};

// In a forked child, the forking thread runs on, with ids of the child's;
// every other thread's token names the parent, whose pools the child may
// take over.
void AfterFork() {
  if (my_token == nullptr) return;
  my_token->tid = static_cast<pid_t>(syscall(SYS_gettid));
  my_token->pid.store(getpid(), std::memory_order_relaxed);
}

ThreadToken* MyToken() {
  if (my_token != nullptr) return my_token;
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, &AfterFork); });
  auto* t = new ThreadToken(/*is_alive=*/true);
  t->pid.store(getpid(), std::memory_order_relaxed);
  t->number = tokens_made.fetch_add(1, std::memory_order_relaxed) + 1;
  t->tid = static_cast<pid_t>(syscall(SYS_gettid));
  t->next = every_token.load(std::memory_order_relaxed);
  while (!every_token.compare_exchange_weak(t->next, t, std::memory_order_release,
                                            std::memory_order_relaxed)) {
  }
  my_token = t;
  static thread_local TokenReaper reaper;
  return t;
}

// The owner of one st pool.
class PoolOwner {
 public:
  // Whether the calling thread owns the pool: one thread-local load, one
  // relaxed load and a compare. Only the owner stores its own token while
  // it runs, so the relaxed load sees it.
  bool Mine() const { return owner_.load(std::memory_order_relaxed) == my_token; }

  // For a caller that is not the owner: makes it the owner if the owner has
  // ended (or never was) and returns nullptr; else returns the running
  // thread that owns the pool.
  const ThreadToken* TakeOver() {
    ThreadToken* const me = MyToken();
    ThreadToken* held = owner_.load(std::memory_order_acquire);
    while (held != me) {
      // Acquire: what the ended owner did to the pool happened before.
      if (held->alive.load(std::memory_order_acquire) &&
          held->pid.load(std::memory_order_relaxed) == getpid()) {
        return held;
      }
      if (owner_.compare_exchange_weak(held, me, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        break;
      }
    }
    return nullptr;
  }

 private:
  std::atomic<ThreadToken*> owner_{&no_thread};
};

// Stops the program: `owner` runs and uses the pool of `policy` the
// calling thread was about to use. `class_name`: the arena's class for a
// pool per arena ("" for arena 0).
[[noreturn]] ABSL_ATTRIBUTE_NOINLINE void StopSharedPool(const std::string& policy,
                                                         bool per_instance,
                                                         std::string_view class_name,
                                                         const ThreadToken* owner);

// ---- The catalog's policies: A is BasicPoolAllocator<std::byte, PoolT, H>.

template <typename A>
struct PolicyFns {
  using PoolT = typename A::pool_type;
  using Holding = typename A::holding_policy;
  static constexpr bool kPerInstance = Holding::kPoolPerInstance;
  // st: the pool is checked for the thread using it (PoolOwner).
  static constexpr bool kChecked = !PoolT::ThreadingPolicy::kThreadSafe;

  // The pool of an st stack arena: its owner and its class beside it.
  struct CheckedPool {
    explicit CheckedPool(std::string_view name) : class_name(name) {}
    PoolOwner owner;
    PoolT pool;
    const std::string_view class_name;
  };
  // The owner of the process-wide pool of an st single policy.
  static inline PoolOwner single_owner;

  static PoolT& PoolOf(void* pool) {
    if constexpr (kChecked && kPerInstance) {
      return static_cast<CheckedPool*>(pool)->pool;
    } else {
      return *static_cast<PoolT*>(pool);
    }
  }
  // Whether the calling thread may use `pool` without asking: always,
  // unless st and another thread (or none yet) owns it.
  static bool Mine(void* pool) {
    if constexpr (kChecked && kPerInstance) {
      return static_cast<CheckedPool*>(pool)->owner.Mine();
    } else if constexpr (kChecked) {
      return single_owner.Mine();
    } else {
      return true;
    }
  }
  // When not Mine: takes `pool` over, or stops the program. Out of line,
  // so that the calls' fast paths stay leaf functions.
  ABSL_ATTRIBUTE_NOINLINE static void Enter(void* pool) {
    if constexpr (kChecked && kPerInstance) {
      auto* checked = static_cast<CheckedPool*>(pool);
      if (const ThreadToken* owner = checked->owner.TakeOver()) {
        StopSharedPool(pool::EntryOf<A>().name, true, checked->class_name, owner);
      }
    } else if constexpr (kChecked) {
      if (const ThreadToken* owner = single_owner.TakeOver()) {
        StopSharedPool(pool::EntryOf<A>().name, false, {}, owner);
      }
    }
  }
  ABSL_ATTRIBUTE_NOINLINE static void* EnterAndAllocate(void* pool, size_t bytes, size_t align) {
    Enter(pool);
    return PoolOf(pool).Allocate(bytes, align);
  }
  ABSL_ATTRIBUTE_NOINLINE static void EnterAndDeallocate(void* pool, void* p, size_t bytes,
                                                         size_t align) {
    Enter(pool);
    PoolOf(pool).Deallocate(p, bytes, align);
  }

  static void* Allocate(void* pool, size_t bytes, size_t align) {
    if (ABSL_PREDICT_FALSE(!Mine(pool))) return EnterAndAllocate(pool, bytes, align);
    return PoolOf(pool).Allocate(bytes, align);
  }
  static void Deallocate(void* pool, void* p, size_t bytes, size_t align) {
    if (ABSL_PREDICT_FALSE(!Mine(pool))) return EnterAndDeallocate(pool, p, bytes, align);
    PoolOf(pool).Deallocate(p, bytes, align);
  }
  // Stack: the pool a new HoldingStack::Handle would make (with its owner
  // when st). Single: the one HoldingSingleton hands every allocator of
  // this pool type.
  static void* MakePool(std::string_view class_name) {
    if constexpr (kChecked && kPerInstance) {
      return new CheckedPool(class_name);
    } else if constexpr (kPerInstance) {
      return new PoolT();
    } else {
      return &pool::HoldingSingleton::Instance<PoolT>();
    }
  }
  // Not checked: the last allocator of the arena is going, so no container
  // uses the pool any more.
  static void DestroyPool(void* pool) {
    if constexpr (kChecked && kPerInstance) {
      delete static_cast<CheckedPool*>(pool);
    } else if constexpr (kPerInstance) {
      delete static_cast<PoolT*>(pool);
    }
  }
};

struct Table {
  std::vector<std::string> names;  // owns the strings Ops::name points into
  std::vector<Ops> ops;
  std::unique_ptr<std::atomic<void*>[]> shared_arenas;  // Ops::shared_arena points here
};

template <typename... A>
Table BuildTable(TypeList<A...>) {
  Table t;
  t.names = {kStdName, pool::EntryOf<A>().name...};
  t.ops.push_back(Ops{nullptr, &StdAllocate, &StdDeallocate, &NoPool, &NoDestroy,
                      /*is_std=*/true, /*pool_per_instance=*/false, nullptr});
  (t.ops.push_back(Ops{nullptr, &PolicyFns<A>::Allocate, &PolicyFns<A>::Deallocate,
                       &PolicyFns<A>::MakePool, &PolicyFns<A>::DestroyPool, /*is_std=*/false,
                       PolicyFns<A>::kPerInstance, nullptr}),
   ...);
  t.shared_arenas = std::make_unique<std::atomic<void*>[]>(t.ops.size());
  for (size_t i = 0; i < t.ops.size(); ++i) {
    t.ops[i].name = t.names[i].c_str();
    t.shared_arenas[i].store(nullptr, std::memory_order_relaxed);
    t.ops[i].shared_arena = &t.shared_arenas[i];
  }
  return t;
}

// Never destroyed: pools and allocators may outlive static destruction.
const Table& TheTable() {
  static const Table* const table = new Table(BuildTable(pool::PoolCatalog{}));
  return *table;
}

// Tells the parent named by ALLOCTRACE_POLICY_ACK_FD what was resolved.
void Acknowledge(const char* name) {
  const char* fd_text = std::getenv(kEnvAckFd);
  if (fd_text == nullptr || *fd_text == '\0') return;
  char* end = nullptr;
  const long fd = std::strtol(fd_text, &end, 10);
  if (*end != '\0' || fd < 0) return;
  // The resident size now, before the first container allocates: what the
  // program, its libraries and the switch hold before the allocator works.
  long resident_pages = -1;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    long size_pages = 0;
    if (std::fscanf(statm, "%ld %ld", &size_pages, &resident_pages) != 2) resident_pages = -1;
    std::fclose(statm);
  }
  char line[4096];
  const int n = std::snprintf(
      line, sizeof line, "%s%s\n%s%lld\n", kAckPrefix, name, kAckRssPrefix,
      resident_pages < 0 ? -1LL : static_cast<long long>(resident_pages) * sysconf(_SC_PAGESIZE));
  if (n > 0 && n < static_cast<int>(sizeof line)) {
    ssize_t ignored = write(static_cast<int>(fd), line, static_cast<size_t>(n));
    (void)ignored;  // a parent that stopped listening changes nothing here
  }
}

std::once_flag resolve_once;

// Classes seen under an assignment, for Assignment::For's table: a class's
// ops by id (ids are small and dense: one per instantiation), the names in
// order of first sight.
constexpr uint32_t kCachedClasses = 4096;
std::atomic<const Ops*> class_ops[kCachedClasses];
std::mutex seen_mu;
std::vector<std::string>& SeenNames() {
  static auto* const names = new std::vector<std::string>();
  return *names;
}

// "; did you mean 'NAME'?" for the accepted name nearest to `policy`, ""
// if none is near (base/did_you_mean.h).
std::string DidYouMean(const std::string& policy) {
  const std::string near = NearestName(policy, Names());
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// Prints "alloctrace: <what>" and exits with status 2. What the program
// wrote to stdio so far is flushed first (_Exit would drop it); no
// destructors or atexit handlers run: the program may be mid-construction.
[[noreturn]] void ExitBad(const std::string& what) {
  std::fprintf(stderr, "alloctrace: %s\n", what.c_str());
  std::fflush(nullptr);
  std::_Exit(kUnknownPolicyExit);
}

// "thread 2 (tid 12345)", "thread 1 (tid 12340, the main thread)".
std::string ThreadWords(const ThreadToken* t) {
  return "thread " + std::to_string(t->number) + " (tid " + std::to_string(t->tid) +
         (t->tid == t->pid.load(std::memory_order_relaxed) ? ", the main thread)" : ")");
}

// "slab/mt/stack" for "slab/st/stack": the policy with a lock per pool.
std::string MtTwin(std::string policy) {
  const size_t st = policy.find("/st/");
  if (st != std::string::npos) policy.replace(st, 4, "/mt/");
  return policy;
}

void StopSharedPool(const std::string& policy, bool per_instance, std::string_view class_name,
                    const ThreadToken* owner) {
  // One message: a second thread stopping meanwhile waits for the exit
  // (and so never touches the pool).
  static std::atomic<bool> stopping{false};
  if (stopping.exchange(true)) {
    while (true) pause();
  }
  std::string what = std::string(kEnvPolicy) + " gives ";
  std::string advice;
  if (per_instance) {
    what += (class_name.empty() ? std::string("arena 0 (allocators made with kNoArena)")
                                : "class '" + std::string(class_name) + "'") +
            " " + policy + ", a single-threaded pool, ";
    advice = class_name.empty() ? "give it" : "give this class";
  } else {
    // One pool for every class the policy serves.
    std::vector<std::string> classes;
    bool rest = true;
    if (const Assignment* a = Assigned()) {
      for (const std::string& name : a->Seen()) {
        if (a->PolicyOf(name)->name == policy) classes.push_back("'" + name + "'");
      }
      rest = a->rest()->name == policy;
      if (rest) classes.push_back("'*'");
    }
    std::string to;
    if (Assigned() == nullptr || classes.empty()) {
      to = "to every class";
    } else {
      to = classes.size() == 1 ? "to class " : "to classes ";
      for (size_t i = 0; i < classes.size(); ++i) {
        to += (i == 0 ? "" : i + 1 == classes.size() ? " and " : ", ") + classes[i];
      }
    }
    what += policy + ", a single-threaded pool and one pool for the whole process, " + to + ", ";
    advice =
        classes.size() == 1 && !rest ? "give this class" : "give the classes two threads reach";
  }
  what += "but " + ThreadWords(my_token) + " used it while " + ThreadWords(owner) +
          ", which used it before, is still running; " + advice + " an mt policy (" +
          MtTwin(policy) + ") or std";
  ExitBad(what);
}

// At exit, under an assignment: a class it names that no container used
// is a mistake (a typo, or a class the program spells otherwise). Runs as
// an atexit handler, before exit flushes stdio; ExitBad flushes it.
void CheckAssignmentAtExit() {
  const Assignment* a = Assigned();
  if (a == nullptr) return;
  const std::vector<std::string> unused = a->Unused();
  if (unused.empty()) return;
  std::string seen;
  for (const std::string& n : a->Seen()) seen += (seen.empty() ? "" : ", ") + n;
  std::string names;
  for (const std::string& n : unused) names += (names.empty() ? "'" : ", '") + n + "'";
  ExitBad(
      std::string(kEnvPolicy) + " names class " + names +
      ", which no container of this program used; its classes: " + (seen.empty() ? "none" : seen));
}

}  // namespace

std::optional<Assignment> Assignment::Parse(const std::string& text, std::string* error) {
  Assignment a;
  a.text_ = text;
  bool have_rest = false;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string entry = Trim(std::string_view(text).substr(start, end - start));
    start = end + 1;
    if (entry.empty()) {
      if (end == text.size()) break;  // a trailing ';'
      *error = "an empty entry (';;')";
      return std::nullopt;
    }
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      *error = "entry '" + entry + "' has no '=' (CLASS=POLICY)";
      return std::nullopt;
    }
    const std::string cls = Trim(std::string_view(entry).substr(0, eq));
    const std::string policy = Trim(std::string_view(entry).substr(eq + 1));
    if (cls.empty()) {
      *error = "entry '" + entry + "' names no class";
      return std::nullopt;
    }
    const Ops* ops = Find(policy);
    if (ops == nullptr) {
      *error = "unknown policy '" + policy + "' in entry '" + entry +
               "'; see replayer --list-policies" + DidYouMean(policy);
      return std::nullopt;
    }
    if (cls == "*") {
      if (have_rest) {
        *error = "'*' is assigned twice";
        return std::nullopt;
      }
      have_rest = true;
      a.rest_ = ops;
      continue;
    }
    for (const Entry& e : a.entries_) {
      if (e.class_name == cls) {
        *error = "class '" + cls + "' is assigned twice";
        return std::nullopt;
      }
    }
    a.entries_.push_back(Entry{cls, ops});
  }
  if (!have_rest) a.rest_ = Find(kStdName);
  a.served_.resize(a.entries_.size());
  return a;
}

bool Assignment::Matches(std::string_view entry, std::string_view class_name) {
  if (entry.empty()) return false;
  if (class_name == entry) return true;
  if (class_name.size() < entry.size() + 2) return false;
  const size_t colons = class_name.size() - entry.size() - 2;
  if (class_name.substr(colons, 2) != "::" || class_name.substr(colons + 2) != entry) return false;
  // The "::" must be outside brackets: a qualifier of the class itself,
  // not of one of its template arguments.
  int depth = 0;
  for (const char c : class_name.substr(0, colons)) {
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
  }
  return depth == 0;
}

const Assignment::Entry* Assignment::EntryFor(std::string_view name) const {
  const Entry* best = nullptr;
  for (const Entry& e : entries_) {
    if (Matches(e.class_name, name) &&
        (best == nullptr || e.class_name.size() > best->class_name.size())) {
      best = &e;
    }
  }
  return best;
}

const Ops* Assignment::PolicyOf(std::string_view name) const {
  const Entry* e = EntryFor(name);
  return e != nullptr ? e->ops : rest_;
}

const Ops* Assignment::For(uint32_t class_id, std::string_view name) const {
  if (class_id < kCachedClasses) {
    if (const Ops* ops = class_ops[class_id].load(std::memory_order_acquire)) return ops;
  }
  const Entry* best = EntryFor(name);
  const Ops* ops = best != nullptr ? best->ops : rest_;
  std::lock_guard<std::mutex> l(seen_mu);
  if (best != nullptr) {
    std::string& served = served_[static_cast<size_t>(best - entries_.data())];
    if (served.empty()) {
      served = std::string(name);
    } else if (served != name) {
      ExitBad(std::string(kEnvPolicy) + " entry '" + best->class_name + "=" + best->ops->name +
              "' matches two classes, '" + served + "' and '" + std::string(name) +
              "'; name the class in full");
    }
  }
  std::vector<std::string>& seen = SeenNames();
  if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.emplace_back(name);
  if (class_id < kCachedClasses) class_ops[class_id].store(ops, std::memory_order_release);
  return ops;
}

std::vector<std::string> Assignment::Seen() const {
  std::lock_guard<std::mutex> l(seen_mu);
  return SeenNames();
}

std::vector<std::string> Assignment::Unused() const {
  std::lock_guard<std::mutex> l(seen_mu);
  std::vector<std::string> unused;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (served_[i].empty()) unused.push_back(entries_[i].class_name);
  }
  return unused;
}

const Ops* Find(const std::string& name) {
  const Table& t = TheTable();
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (t.names[i] == name) return &t.ops[i];
  }
  return nullptr;
}

std::vector<std::string> Names() { return TheTable().names; }

void ResolveSlow() {
  std::call_once(resolve_once, [] {
    const char* name = std::getenv(kEnvPolicy);
    const Ops* ops = nullptr;
    if (name != nullptr && std::string_view(name).find('=') != std::string_view::npos) {
      std::string error;
      std::optional<Assignment> a = Assignment::Parse(name, &error);
      if (!a) ExitBad(std::string(kEnvPolicy) + "='" + name + "': " + error);
      const Assignment* kept = new Assignment(*std::move(a));  // never destroyed
      internal::assignment.store(kept, std::memory_order_relaxed);
      internal::active.store(kept->rest(), std::memory_order_relaxed);
      Acknowledge(name);
      std::atexit(&CheckAssignmentAtExit);
      internal::resolved.store(true, std::memory_order_release);
      return;
    }
    if (name != nullptr && *name != '\0') {
      ops = Find(name);
      if (ops == nullptr) {
        ExitBad("unknown policy '" + std::string(name) + "' in " + kEnvPolicy +
                "; see replayer --list-policies" + DidYouMean(name));
      }
    }
    internal::active.store(ops, std::memory_order_relaxed);
    Acknowledge(ops == nullptr ? "record" : ops->name);
    internal::resolved.store(true, std::memory_order_release);
  });
}

void ForceForTesting(const Ops* ops) {
  std::call_once(resolve_once, [] {});
  internal::active.store(ops, std::memory_order_relaxed);
  internal::every_arena.store(nullptr, std::memory_order_relaxed);
  internal::resolved.store(true, std::memory_order_release);
}

}  // namespace alloctrace::policy_switch
