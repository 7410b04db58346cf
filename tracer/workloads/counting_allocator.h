// CountingAllocator<T>: a test allocator that logs and checks every
// allocation a workload makes, so tests can run the workloads without the
// recorder.
//
// All allocators log into the CountingLog that is current when they are
// constructed (a CountingLog is current from its construction to its
// destruction). A default-constructed allocator is a new arena (ids 1, 2, ...
// per log); one constructed from alloctrace::kNoArena is the log's arena 0,
// as TraceAllocator does. Copies and rebound copies share the arena: the
// state lives behind a shared pointer, and operator== compares it. What
// containers are told (propagation, copies, equality) is TraceAllocator's,
// from the same base (tracer/arena_allocator.h).
//
// The log checks that every free matches a live block of the same size,
// alignment and arena, and records a readable error otherwise (a free of an
// unknown block is not passed to operator delete).
//
// Thread-safety: allocators may allocate and free from any thread while the
// log is current (a mutex orders the events; each event says which thread,
// numbered densely from 0 in order of first event). The log itself is
// created, read and destroyed by one thread, with no allocation under way.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_COUNTING_ALLOCATOR_H_
#define ALLOCTRACE_TRACER_WORKLOADS_COUNTING_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/tracer/arena_allocator.h"

namespace alloctrace::workloads::testing {

struct CountingEvent {
  bool alloc;
  uint32_t arena;
  uint64_t bytes;
  uint64_t align;
  uint64_t block;       // ordinal of the allocation (for a free: of the block freed)
  uint32_t thread = 0;  // the thread that made the call, dense in order of first event

  friend bool operator==(const CountingEvent& a, const CountingEvent& b) {
    return a.alloc == b.alloc && a.arena == b.arena && a.bytes == b.bytes && a.align == b.align &&
           a.block == b.block && a.thread == b.thread;
  }
};

class CountingLog {
 public:
  struct ArenaState {
    CountingLog* log;
    uint32_t arena;
  };

  CountingLog() : previous_(current_) {
    current_ = this;
    global_ = std::make_shared<ArenaState>(ArenaState{this, 0});
  }
  ~CountingLog() {
    for (auto& [p, block] : live_) {
      ::operator delete (p, std::align_val_t{block.align});
    }
    current_ = previous_;
  }
  CountingLog(const CountingLog&) = delete;
  CountingLog& operator=(const CountingLog&) = delete;

  // The log new allocators attach to; aborts if there is none.
  static CountingLog& Current() {
    if (current_ == nullptr) {
      std::fprintf(stderr, "CountingAllocator constructed with no CountingLog in scope\n");
      std::abort();
    }
    return *current_;
  }

  std::shared_ptr<ArenaState> NewArena() {
    uint32_t arena;
    {
      std::lock_guard<std::mutex> l(mu_);
      arena = ++arenas_;
    }
    return std::make_shared<ArenaState>(ArenaState{this, arena});
  }
  const std::shared_ptr<ArenaState>& GlobalArena() const { return global_; }

  void* Allocate(uint32_t arena, uint64_t bytes, uint64_t align) {
    void* p = ::operator new (bytes, std::align_val_t{align});
    std::lock_guard<std::mutex> l(mu_);
    const uint64_t block = allocs_++;
    live_[p] = Block{arena, bytes, align, block};
    events_.push_back({true, arena, bytes, align, block, ThisThread()});
    bytes_allocated_ += bytes;
    live_bytes_ += bytes;
    if (live_bytes_ > peak_live_bytes_) peak_live_bytes_ = live_bytes_;
    if (live_.size() > peak_live_blocks_) peak_live_blocks_ = live_.size();
    return p;
  }

  void Deallocate(void* p, uint32_t arena, uint64_t bytes, uint64_t align) {
    std::unique_lock<std::mutex> l(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) {
      errors_.push_back(
          absl::StrCat("free of a block that is not live: ", bytes, " bytes, arena ", arena));
      return;
    }
    const Block block = it->second;
    if (block.bytes != bytes || block.align != align || block.arena != arena) {
      errors_.push_back(absl::StrCat("free of block ", block.block, " (", block.bytes,
                                     " bytes, align ", block.align, ", arena ", block.arena,
                                     ") as ", bytes, " bytes, align ", align, ", arena ", arena));
    }
    live_.erase(it);
    ++frees_;
    live_bytes_ -= block.bytes;
    events_.push_back({false, arena, bytes, align, block.block, ThisThread()});
    // Recorded before the memory is given back: another thread cannot be
    // handed the address, and log an allocation of it, before this free.
    l.unlock();
    ::operator delete (p, std::align_val_t{block.align});
  }

  const std::vector<CountingEvent>& events() const { return events_; }
  const std::vector<std::string>& errors() const { return errors_; }
  uint64_t allocs() const { return allocs_; }
  uint64_t frees() const { return frees_; }
  uint64_t bytes_allocated() const { return bytes_allocated_; }
  uint64_t live_blocks() const { return live_.size(); }
  uint64_t peak_live_blocks() const { return peak_live_blocks_; }
  uint64_t peak_live_bytes() const { return peak_live_bytes_; }
  uint32_t arenas_created() const { return arenas_; }
  uint32_t threads() const { return static_cast<uint32_t>(threads_.size()); }

 private:
  // A number of the calling thread's own, never given to another thread of
  // the process. Not std::thread::id: a thread started after another was
  // joined often gets the joined thread's id.
  static uint64_t ThreadSerial() {
    static std::atomic<uint64_t> next{0};
    thread_local const uint64_t serial = next.fetch_add(1, std::memory_order_relaxed);
    return serial;
  }
  // The calling thread's dense number in this log. Requires mu_.
  uint32_t ThisThread() {
    return threads_.try_emplace(ThreadSerial(), static_cast<uint32_t>(threads_.size()))
        .first->second;
  }

  struct Block {
    uint32_t arena;
    uint64_t bytes;
    uint64_t align;
    uint64_t block;
  };

  static inline CountingLog* current_ = nullptr;
  CountingLog* const previous_;
  std::mutex mu_;  // guards everything below that allocators change
  std::unordered_map<uint64_t, uint32_t> threads_;  // ThreadSerial() -> dense number
  std::shared_ptr<ArenaState> global_;
  uint32_t arenas_ = 0;
  std::unordered_map<void*, Block> live_;
  std::vector<CountingEvent> events_;
  std::vector<std::string> errors_;
  uint64_t allocs_ = 0;
  uint64_t frees_ = 0;
  uint64_t bytes_allocated_ = 0;
  uint64_t live_bytes_ = 0;
  uint64_t peak_live_bytes_ = 0;
  uint64_t peak_live_blocks_ = 0;
};

template <typename T>
class CountingAllocator : public ArenaAllocator<CountingAllocator, T> {
 public:
  CountingAllocator() : state_(CountingLog::Current().NewArena()) {}
  explicit CountingAllocator(NoArenaTag) : state_(CountingLog::Current().GlobalArena()) {}
  template <typename U>
  CountingAllocator(const CountingAllocator<U>& other) noexcept  // NOLINT: implicit by design
      : state_(other.state_) {}

  T* allocate(size_t n) {
    return static_cast<T*>(state_->log->Allocate(state_->arena, n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t n) {
    state_->log->Deallocate(p, state_->arena, n * sizeof(T), alignof(T));
  }

  uint32_t arena_id() const { return state_->arena; }

 private:
  template <typename U>
  friend class CountingAllocator;
  template <template <typename...> class, typename, typename...>
  friend class ::alloctrace::ArenaAllocator;
  const void* arena_key() const { return state_.get(); }

  std::shared_ptr<CountingLog::ArenaState> state_;
};

}  // namespace alloctrace::workloads::testing

#endif  // ALLOCTRACE_TRACER_WORKLOADS_COUNTING_ALLOCATOR_H_
