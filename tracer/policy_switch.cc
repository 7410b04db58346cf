#include "alloctrace/tracer/policy_switch.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>

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
};

template <typename... A>
Table BuildTable(TypeList<A...>) {
  Table t;
  t.names = {kStdName, pool::EntryOf<A>().name...};
  t.ops.push_back(Ops{nullptr, &StdAllocate, &StdDeallocate, &NoPool, &NoDestroy});
  (t.ops.push_back(Ops{nullptr, &PolicyFns<A>::Allocate, &PolicyFns<A>::Deallocate,
                       &PolicyFns<A>::MakePool, &PolicyFns<A>::DestroyPool}),
   ...);
  for (size_t i = 0; i < t.ops.size(); ++i) t.ops[i].name = t.names[i].c_str();
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
  char line[256];
  const int n = std::snprintf(line, sizeof line, "%s%s\n", kAckPrefix, name);
  if (n > 0 && n < static_cast<int>(sizeof line)) {
    ssize_t ignored = write(static_cast<int>(fd), line, static_cast<size_t>(n));
    (void)ignored;  // a parent that stopped listening changes nothing here
  }
}

std::once_flag resolve_once;

}  // namespace

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
    if (name != nullptr && *name != '\0') {
      ops = Find(name);
      if (ops == nullptr) {
        std::fprintf(stderr,
                     "alloctrace: unknown policy '%s' in %s; see replayer --list-policies\n", name,
                     kEnvPolicy);
        std::fflush(stderr);
        // No destructors or atexit handlers: the program is mid-construction.
        std::_Exit(kUnknownPolicyExit);
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
  internal::resolved.store(true, std::memory_order_release);
}

}  // namespace alloctrace::policy_switch
