// ArenaUsage: for each arena of a trace (an allocator instance: a container
// and its copies), which threads allocate and free in it and the most
// blocks it ever holds at once. Fed event by event by whoever streams a
// trace: the replay program's builder (replayer/engine/replay_program.cc) and
// inspect's statistics (trace_stats.cc), so both say the same of a trace.
//
// What it answers:
//  - Sharing: an arena whose blocks are allocated or freed by more than one
//    thread is shared; a pool that is not thread-safe must not serve it
//    (its free lists would be changed by two threads at once).
//  - Shape: how many arenas never hold more than one block (a container of
//    strings that each default-construct their allocator makes one arena per
//    string: a policy with a pool per container then pays a pool per string).
//
// Arenas and threads are the trace's dense indexes (format/chunk_decoder.h);
// the reader maps them back to the trace's ids for messages.
// Memory: 16 bytes per arena, plus the thread lists of shared arenas.
// Thread-compatible.
#ifndef ALLOCTRACE_INSPECT_ARENA_USAGE_H_
#define ALLOCTRACE_INSPECT_ARENA_USAGE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_set.h"

namespace alloctrace {

class TraceReader;

// n with its digits grouped in threes: "1,234,567".
std::string Grouped(uint64_t n);

// An arena used by several threads, as the trace names them.
struct SharedArena {
  uint32_t arena = 0;             // the trace's arena id (0: the global heap)
  std::vector<uint32_t> threads;  // the trace's thread ids, in order of first use;
                                  // at most kMaxListedThreads of them
  uint64_t thread_count = 0;      // all of them
};

// What ArenaUsage found, with the trace's ids.
struct ArenaUsageSummary {
  static constexpr size_t kMaxListedThreads = 16;
  static constexpr size_t kMaxListedArenas = 64;
  std::vector<SharedArena> shared;   // by first sharing, at most kMaxListedArenas
  uint64_t shared_count = 0;         // all shared arenas
  uint64_t arenas_used = 0;          // arenas with at least one block, 0 included
  uint64_t arenas_single_block = 0;  // of them, never more than one block live

  // "arena 0 is used by threads 1, 2 and 3" (and "and 4 more arenas" past the
  // first); "" if no arena is shared.
  std::string SharingWords() const;
  // "99,997 of 100,003 arenas never hold more than 1 block: ..." when most
  // arenas do, "" otherwise.
  std::string ShapeWords() const;
};

class ArenaUsage {
 public:
  // A block allocated (or reallocated into) `arena` by `thread`.
  void Alloc(uint32_t arena, uint32_t thread) {
    Arena& a = Touch(arena, thread);
    if (++a.live > a.peak) a.peak = a.live;
  }
  // A block of `arena` freed by `thread`.
  void Free(uint32_t arena, uint32_t thread) {
    Arena& a = Touch(arena, thread);
    --a.live;
  }
  // Blocks of `arena` live now.
  uint32_t live(uint32_t arena) const { return arena < arenas_.size() ? arenas_[arena].live : 0; }

  // The findings, with the reader's ids for arenas and threads.
  ArenaUsageSummary Summarize(const TraceReader& reader) const;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Arena {
    uint32_t live = 0;
    uint32_t peak = 0;
    uint32_t last_thread = kNone;  // the only thread until shared
    uint32_t shared = kNone;       // index into shared_, once a second thread came
  };
  struct Sharing {
    uint32_t arena;
    std::vector<uint32_t> listed;        // dense indexes, first uses, at most
                                         // kMaxListedThreads
    absl::flat_hash_set<uint32_t> seen;  // every thread
  };

  Arena& Touch(uint32_t arena, uint32_t thread) {
    // Grown by doubling, not by one: a trace of millions of arenas adds them
    // one at a time. Entries past the last arena stay unused (peak 0).
    if (ABSL_PREDICT_FALSE(arena >= arenas_.size())) {
      arenas_.resize(std::max<size_t>(size_t{arena} + 1, 2 * arenas_.size()));
    }
    Arena& a = arenas_[arena];
    if (ABSL_PREDICT_FALSE(a.last_thread != thread)) NoteThread(a, arena, thread);
    return a;
  }
  ABSL_ATTRIBUTE_NOINLINE void NoteThread(Arena& a, uint32_t arena, uint32_t thread);

  std::vector<Arena> arenas_;  // by dense arena index
  std::vector<Sharing> shared_;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_ARENA_USAGE_H_
