#include "alloctrace/tracer/policy_switch.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string_view>

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
void* NoPool() { return nullptr; }
void NoDestroy(void* /*pool*/) {}

// ---- The catalog's policies: A is BasicPoolAllocator<std::byte, PoolT, H>.

template <typename A>
struct PolicyFns {
  using PoolT = typename A::pool_type;
  using Holding = typename A::holding_policy;
  static constexpr bool kPerInstance = Holding::kPoolPerInstance;

  static void* Allocate(void* pool, size_t bytes, size_t align) {
    return static_cast<PoolT*>(pool)->Allocate(bytes, align);
  }
  static void Deallocate(void* pool, void* p, size_t bytes, size_t align) {
    static_cast<PoolT*>(pool)->Deallocate(p, bytes, align);
  }
  // Stack: the pool a new HoldingStack::Handle would make. Single: the one
  // HoldingSingleton hands every allocator of this pool type.
  static void* MakePool() {
    if constexpr (kPerInstance) {
      return new PoolT();
    } else {
      return &pool::HoldingSingleton::Instance<PoolT>();
    }
  }
  static void DestroyPool(void* pool) {
    if constexpr (kPerInstance) delete static_cast<PoolT*>(pool);
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
  char line[4096];
  const int n = std::snprintf(line, sizeof line, "%s%s\n", kAckPrefix, name);
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

const Ops* Assignment::For(uint32_t class_id, std::string_view name) const {
  if (class_id < kCachedClasses) {
    if (const Ops* ops = class_ops[class_id].load(std::memory_order_acquire)) return ops;
  }
  const Entry* best = nullptr;
  for (const Entry& e : entries_) {
    if (Matches(e.class_name, name) &&
        (best == nullptr || e.class_name.size() > best->class_name.size())) {
      best = &e;
    }
  }
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
