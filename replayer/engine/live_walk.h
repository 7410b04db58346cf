// LiveWalk: Touch::kWalk's reads of the live heap, which the serialized
// replay loop (replay_loop.h, ReplayOpsWalk) makes between allocator calls.
//
// Thread-safety: one per run, on the replaying thread.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_LIVE_WALK_H_
#define ALLOCTRACE_REPLAYER_ENGINE_LIVE_WALK_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace alloctrace::replay_internal {

// Touch::kWalk's model of a runtime whose garbage collector reads its live
// objects (CPython's cyclic collector, with PYTHONMALLOC=malloc): where a
// malloc places the blocks decides how fast such walks run, and the replay
// of the calls alone never makes them (docs/fidelity.md, "An interpreter's
// mallocs"); --touch=auto makes them on a trace whose header names such a
// collector (capture's collector=cpython). The live blocks of 4 bytes or
// more are kept in a list in allocation order (a realloc's new block takes
// the old one's place), and every kYoungEvery allocations the loop reads,
// in that order, the blocks allocated since the last walk (a young
// generation); every kMiddleEvery-th time, those since the last such walk;
// and, whenever the live blocks have grown by a quarter since the last full
// walk, all of them. The thresholds are CPython 3.11's, roughly (700 allocations; ten
// young collections to a middle one; the oldest generation when it has
// grown by a quarter). Each block holds its id in its first 4 bytes, and
// the walk takes the next block from the id it reads, so each read waits
// for the last, as a walk through pointers does. The list lives in arrays
// indexed by object id, made before the baseline and untimed per pass.
class LiveWalk {
 public:
  static constexpr uint32_t kYoungEvery = 700;
  static constexpr uint32_t kMiddleEvery = 10;

  // The arrays are zeroed, so touched, here: before the baseline, every
  // allocator's RSS carrying them alike.
  explicit LiveWalk(size_t slots) : next_(slots), prev_(slots), linked_(slots) {}

  // An empty list: a pass starts with nothing live.
  void Reset() {
    head_ = tail_ = young_ = middle_ = kNil;
    live_ = live_at_full_ = 0;
    allocations_ = 0;
    young_walks_ = 0;
  }

  // A new block `id` at `p` of `bytes`: stamped and linked at the tail; then
  // the walks due. Returns what they read (kept observable by the caller).
  uint64_t Allocated(uint32_t id, void* p, size_t bytes, void* const* ptrs) {
    linked_[id] = bytes >= sizeof(uint32_t);
    if (!linked_[id]) return 0;
    std::memcpy(p, &id, sizeof id);
    next_[id] = kNil;
    prev_[id] = tail_;
    if (tail_ != kNil) next_[tail_] = id;
    tail_ = id;
    if (head_ == kNil) head_ = id;
    if (young_ == kNil) young_ = id;
    if (middle_ == kNil) middle_ = id;
    ++live_;
    if (++allocations_ < kYoungEvery) return 0;
    allocations_ = 0;
    return Collect(ptrs);
  }

  // Block `id` about to be freed.
  void Freed(uint32_t id) {
    if (!linked_[id]) return;
    linked_[id] = 0;
    Unlink(id);
  }

  // A realloc of `old_id` into `id` at `p` of `bytes`.
  uint64_t Reallocated(uint32_t old_id, uint32_t id, void* p, size_t bytes, void* const* ptrs) {
    if (!linked_[old_id]) return Allocated(id, p, bytes, ptrs);
    linked_[old_id] = 0;
    if (bytes < sizeof(uint32_t)) {
      linked_[id] = 0;
      Unlink(old_id);
      return 0;
    }
    linked_[id] = 1;
    std::memcpy(p, &id, sizeof id);
    next_[id] = next_[old_id];
    prev_[id] = prev_[old_id];
    (prev_[id] != kNil ? next_[prev_[id]] : head_) = id;
    (next_[id] != kNil ? prev_[next_[id]] : tail_) = id;
    if (young_ == old_id) young_ = id;
    if (middle_ == old_id) middle_ = id;
    return 0;
  }

 private:
  static constexpr uint32_t kNil = ~uint32_t{0};

  void Unlink(uint32_t id) {
    const uint32_t n = next_[id], p = prev_[id];
    (p != kNil ? next_[p] : head_) = n;
    (n != kNil ? prev_[n] : tail_) = p;
    if (young_ == id) young_ = n;
    if (middle_ == id) middle_ = n;
    --live_;
  }

  // The walks due at a young collection.
  uint64_t Collect(void* const* ptrs) {
    uint64_t sum;
    if (live_ >= live_at_full_ + live_at_full_ / 4 + 1) {
      sum = Walk(head_, ptrs);
      live_at_full_ = live_;
      young_walks_ = 0;
    } else if (++young_walks_ % kMiddleEvery == 0) {
      sum = Walk(middle_, ptrs);
    } else {
      sum = Walk(young_, ptrs);
      young_ = kNil;
      return sum;
    }
    young_ = middle_ = kNil;
    return sum;
  }

  // Reads every block from `id` to the tail, each address from the last read.
  uint64_t Walk(uint32_t id, void* const* ptrs) const {
    uint64_t sum = 0;
    while (id != kNil) {
      uint32_t stamp;
      std::memcpy(&stamp, ptrs[id], sizeof stamp);  // == id
      sum += stamp;
      id = next_[stamp];
    }
    return sum;
  }

  std::vector<uint32_t> next_, prev_;
  std::vector<uint8_t> linked_;
  uint32_t head_ = kNil, tail_ = kNil;
  uint32_t young_ = kNil;   // the first block allocated since the last walk
  uint32_t middle_ = kNil;  // the first since the last middle or full walk
  uint64_t live_ = 0, live_at_full_ = 0;
  uint32_t allocations_ = 0, young_walks_ = 0;
};

}  // namespace alloctrace::replay_internal

#endif  // ALLOCTRACE_REPLAYER_ENGINE_LIVE_WALK_H_
