// HandleStore: memory for the handles of recorded arenas, apart from the
// program's heap.
//
// Why: a recorded container owns a handle (its arena's id and reference
// count, tracer/trace_allocator.h), and a program that makes a container
// per string or per node makes a handle each time. From the program's heap,
// each handle sat between the program's own blocks, spreading them over
// more cache lines than in the unrecorded run: recording `lru_cache` (a set
// of strings, each its own arena) slowed its string compares and tree walks
// by about a fifth with no event stored at all, and by about 2% with every
// container sharing one handle. A recorded program should lay out its heap
// as the unrecorded one does.
//
// How: blocks of kBlockBytes, cut from 64 KiB mappings, kept in a per-thread
// free list. A thread's list goes to a process-wide one when it grows past
// kMaxCached or the thread exits, and a thread whose list is empty takes
// the process-wide one before it maps more. Mappings are never returned:
// the store holds at most the peak number of live handles.
//
// Thread-safety: Take and Give may be called from any thread; a block may
// be given back by another thread than the one that took it.
#ifndef ALLOCTRACE_TRACER_HANDLE_STORE_H_
#define ALLOCTRACE_TRACER_HANDLE_STORE_H_

#include <cstddef>
#include <cstdint>

#include "absl/base/optimization.h"

namespace alloctrace {
namespace handle_store_internal {

inline constexpr size_t kBlockBytes = 16;
inline constexpr uint32_t kMaxCached = 4096;

// A list of free blocks, linked through their first word.
struct FreeList {
  void* head = nullptr;
  void* tail = nullptr;
  uint32_t count = 0;
};

inline void Push(FreeList& l, void* p) {
  *static_cast<void**>(p) = l.head;
  if (l.head == nullptr) l.tail = p;
  l.head = p;
  ++l.count;
}

// The list's first block, or nullptr.
inline void* Pop(FreeList& l) {
  void* p = l.head;
  if (ABSL_PREDICT_TRUE(p != nullptr)) {
    l.head = *static_cast<void**>(p);
    if (l.head == nullptr) l.tail = nullptr;
    --l.count;
  }
  return p;
}

// A thread's free blocks and the rest of its current mapping.
struct ThreadCache {
  FreeList free;
  char* next = nullptr;
  char* end = nullptr;
  bool registered = false;  // its exit hook is set
};

// Trivially constructed, so reading it costs one TLS load; its exit hook
// is set on first use (TakeSlow, GiveBack).
inline thread_local ThreadCache tls_cache;

void* TakeSlow(ThreadCache& c);
void GiveBack(ThreadCache& c);
// Blocks in the process-wide free list (for tests).
uint32_t SharedCount();

}  // namespace handle_store_internal

class HandleStore {
 public:
  static constexpr size_t kBlockBytes = handle_store_internal::kBlockBytes;

  // A block of kBlockBytes, aligned to kBlockBytes. Throws std::bad_alloc
  // if no memory can be mapped.
  static void* Take() {
    handle_store_internal::ThreadCache& c = handle_store_internal::tls_cache;
    if (void* p = handle_store_internal::Pop(c.free); ABSL_PREDICT_TRUE(p != nullptr)) return p;
    if (ABSL_PREDICT_TRUE(c.next != c.end)) {
      void* p = c.next;
      c.next += kBlockBytes;
      return p;
    }
    return handle_store_internal::TakeSlow(c);
  }

  // Returns a block from Take.
  static void Give(void* p) {
    handle_store_internal::ThreadCache& c = handle_store_internal::tls_cache;
    handle_store_internal::Push(c.free, p);
    if (ABSL_PREDICT_FALSE(c.free.count > handle_store_internal::kMaxCached || !c.registered)) {
      handle_store_internal::GiveBack(c);
    }
  }
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_HANDLE_STORE_H_
