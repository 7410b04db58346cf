// RawEvent: one allocator event as the recording thread stores it, before the
// writer thread turns addresses into object ids and encodes it.
#ifndef ALLOCTRACE_TRACER_RAW_EVENT_H_
#define ALLOCTRACE_TRACER_RAW_EVENT_H_

#include <cstdint>

namespace alloctrace {

enum class RawKind : uint8_t {
  kAlloc = 0,         // ptr, elem_size, count, align_log2, arena
  kFree = 1,          // ptr, arena
  kArenaCreate = 2,   // arena, aux = class id (0: unnamed)
  kArenaDestroy = 3,  // arena
  kRealloc = 4,       // aux = old ptr, ptr = new ptr, new shape as kAlloc
  // Two events of one thread in a row, in one slot: an arena's creation
  // and its first allocation (aux = class id, the rest as kAlloc), and an
  // arena's last free and its end (as kFree). A container made for one
  // block (a string, a temporary) makes four events, half of them its
  // arena's: each slot the ring does not carry is work for neither thread.
  kArenaCreateAlloc = 5,
  kFreeArenaDestroy = 6,
};

// Marks an event recorded while only one thread had ever recorded: such
// events need no global sequence number (see Recorder's class comment).
inline constexpr uint64_t kUnsequenced = ~uint64_t{0};

struct RawEvent {
  uint64_t seq;        // global order across threads, or kUnsequenced
  uint64_t ptr;        // the block's address
  uint64_t aux;        // kRealloc: the old address
  uint64_t count;      // element count
  uint64_t time_ns;    // steady clock, only if the recording asks for it
  uint32_t elem_size;  // bytes per element
  uint32_t arena;      // allocator instance, 0 for a global allocator
  uint32_t site;       // kAlloc, kRealloc: call stack id (tracer/call_sites.h), 0: none
  RawKind kind;
  uint8_t align_log2;  // alignment = 1 << align_log2
  bool zeroed;         // kAlloc: calloc
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_RAW_EVENT_H_
