// Multi-threaded workloads, after the stressors of mimalloc-bench
// (github.com/daanx/mimalloc-bench): what a single thread cannot show, namely
// objects freed by a thread other than the one that allocated them, and
// allocator instances (arenas) used by several threads.
//
//   producer_consumer  xmalloc-test: producer threads allocate messages,
//                      consumer threads free them.
//   larson             larson: each thread's live objects are inherited, and
//                      freed, by its successor thread ("bleeding").
//   migration          mstress: objects exchanged between threads through a
//                      shared array of slots.
//   thread_map_churn   glibc's bench-malloc-thread: each thread churns a
//                      container of its own, nothing crosses threads.
//
// Contract on Alloc (beyond workload_support.h's): copies of one allocator
// may allocate and free concurrently on different threads, and a block
// allocated through one copy may be freed through another copy on another
// thread. TraceAllocator, std::allocator and the thread-safe pools meet it; a
// single-threaded pool does not, and must not be used with these workloads
// (producer_consumer and migration share one allocator instance between
// threads).
//
// Determinism: what each thread allocates (sizes, order) depends only on
// (params, seed, the thread's index); which thread frees which object, and
// the global order of the threads' events, depend on the scheduler. Every
// run frees everything it allocates before it returns.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_THREAD_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_THREAD_WORKLOADS_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_support.h"

namespace alloctrace::workloads {

namespace thread_internal {

// Thread `index`'s own random source: independent of the other threads, so
// what it allocates does not depend on the interleaving.
inline WorkloadRng ThreadRng(uint64_t seed, uint64_t index) {
  return WorkloadRng(seed * 0x9E3779B97F4A7C15ull + index + 1);
}

// A random block size in [min_size, max_size] (max_size below min_size is
// taken as min_size).
inline size_t BlockSize(WorkloadRng& rng, const WorkloadParams& params) {
  const int64_t lo = params.Get("min_size");
  const int64_t hi = std::max(lo, params.Get("max_size"));
  return static_cast<size_t>(rng.Between(lo, hi));
}

// A raw block of `size` bytes from `alloc`, its first byte written so the
// memory is touched as a program's would be.
template <typename ByteAlloc>
unsigned char* NewBlock(ByteAlloc& alloc, size_t size) {
  unsigned char* p = alloc.allocate(size);
  p[0] = static_cast<unsigned char>(size);
  DoNotOptimize(p);
  return p;
}

// Runs fn(0), ..., fn(n - 1), each on a thread of its own, and joins them.
template <typename Fn>
void RunThreads(int64_t n, const Fn& fn) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) threads.emplace_back(fn, i);
  for (std::thread& t : threads) t.join();
}

// A bounded FIFO of messages shared by producer and consumer threads, under
// one mutex. The deque's blocks come from the queue's own allocator (its own
// arena), allocated by whichever producer grows it and freed by whichever
// consumer empties a block.
template <typename Message, typename QueueAlloc>
class MessageQueue {
 public:
  MessageQueue(size_t capacity, int64_t producers) : capacity_(capacity), producers_(producers) {}

  // Blocks while the queue is full.
  void Push(Message m) {
    std::unique_lock<std::mutex> l(mu_);
    not_full_.wait(l, [this] { return queue_.size() < capacity_; });
    queue_.push_back(std::move(m));
    not_empty_.notify_one();
  }
  // A producer is done; consumers stop once every producer is and the queue
  // is empty.
  void ProducerDone() {
    std::lock_guard<std::mutex> l(mu_);
    if (--producers_ == 0) not_empty_.notify_all();
  }
  // Moves the oldest message into `out`; false once the queue is drained
  // for good.
  bool Pop(Message& out) {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [this] { return !queue_.empty() || producers_ == 0; });
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    not_full_.notify_one();
    return true;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Message, QueueAlloc> queue_;  // guarded by mu_
  int64_t producers_;                      // guarded by mu_
};

}  // namespace thread_internal

// producer_consumer: `producers` threads each make `messages` messages, a
// std::vector<unsigned char> of a random size in [min_size, max_size], and
// push them through a bounded queue (`queue_capacity` messages) to
// `consumers` threads, which free them: every message is freed on another
// thread than the one that made it.
//
// Arenas: all messages are built with copies of ONE allocator instance, made
// before the threads start (one arena, allocated in by every producer and
// freed in by every consumer, concurrently): the case a thread-safe pool
// must handle and a single-threaded one cannot. The queue's deque has a
// second allocator instance (its own arena), also used by every thread.
template <template <typename> class Alloc>
void RunProducerConsumer(const WorkloadParams& params, uint64_t seed) {
  using Message = std::vector<unsigned char, Alloc<unsigned char>>;
  const int64_t producers = params.Get("producers");
  const int64_t consumers = params.Get("consumers");
  const int64_t messages = params.Get("messages");
  const Alloc<unsigned char> message_alloc;
  thread_internal::MessageQueue<Message, Alloc<Message>> queue(
      static_cast<size_t>(params.Get("queue_capacity")), producers);
  thread_internal::RunThreads(producers + consumers, [&](int64_t index) {
    if (index < producers) {
      WorkloadRng rng = thread_internal::ThreadRng(seed, static_cast<uint64_t>(index));
      for (int64_t i = 0; i < messages; ++i) {
        Message m(thread_internal::BlockSize(rng, params), message_alloc);
        DoNotOptimize(m.data());
        queue.Push(std::move(m));
      }
      queue.ProducerDone();
    } else {
      // Pop moves each message into the empty `m`; moving it on into `done`
      // leaves `m` empty again, and `done` frees the message here, on the
      // consumer's thread, outside the queue's lock.
      Message m(message_alloc);
      while (queue.Pop(m)) {
        DoNotOptimize(m.data());
        Message done(std::move(m));
      }
    }
  });
}

// larson: `threads` lineages of threads, each generation of a lineage a new
// thread that inherits the previous one's `slots` live blocks. Each thread
// makes `operations` steps, each freeing the block of a random slot and
// allocating a new one of a random size in [min_size, max_size] there, then
// exits, leaving its blocks to its successor. The first generation fills
// the slots, the last frees them. `generations` threads per lineage in all.
//
// Arenas: the blocks come from the global heap (arena 0), as larson's
// malloc: one arena used by every thread. Lineages run concurrently; within
// a lineage a thread starts after its predecessor has exited.
template <template <typename> class Alloc>
void RunLarson(const WorkloadParams& params, uint64_t seed) {
  struct Slot {
    unsigned char* block = nullptr;
    size_t size = 0;
  };
  const int64_t threads = params.Get("threads");
  const int64_t generations = params.Get("generations");
  const int64_t operations = params.Get("operations");
  const size_t slots = static_cast<size_t>(params.Get("slots"));
  // Bookkeeping, never through Alloc: only the blocks are the workload's.
  std::vector<std::vector<Slot>> lineages(static_cast<size_t>(threads), std::vector<Slot>(slots));
  thread_internal::RunThreads(threads, [&](int64_t lineage) {
    std::vector<Slot>& mine = lineages[static_cast<size_t>(lineage)];
    for (int64_t g = 0; g < generations; ++g) {
      // A thread per generation; this one only starts and joins them.
      std::thread worker([&, g] {
        WorkloadRng rng =
            thread_internal::ThreadRng(seed, static_cast<uint64_t>(lineage * generations + g));
        Alloc<unsigned char> heap = GlobalHeapAllocator<Alloc, unsigned char>();
        if (g == 0) {
          for (Slot& s : mine) {
            s.size = thread_internal::BlockSize(rng, params);
            s.block = thread_internal::NewBlock(heap, s.size);
          }
        }
        for (int64_t i = 0; i < operations; ++i) {
          Slot& s = mine[rng.Below(mine.size())];
          heap.deallocate(s.block, s.size);
          s.size = thread_internal::BlockSize(rng, params);
          s.block = thread_internal::NewBlock(heap, s.size);
        }
        if (g == generations - 1) {
          for (Slot& s : mine) heap.deallocate(s.block, s.size);
        }
      });
      worker.join();
    }
  });
}

// migration: `threads` threads and one shared array of `slots` slots. Each
// thread makes `operations` steps: allocate a block of a random size in
// [min_size, max_size], swap it into a random slot (an atomic exchange) and
// free the block it took out, if any, most often one another thread made.
// After the threads are joined, the calling thread frees what is left.
//
// Arenas: every block comes from copies of ONE allocator instance (one
// arena allocated and freed in by every thread concurrently).
template <template <typename> class Alloc>
void RunMigration(const WorkloadParams& params, uint64_t seed) {
  // A block's size is in its first bytes, for the free.
  const int64_t threads = params.Get("threads");
  const int64_t operations = params.Get("operations");
  const Alloc<unsigned char> shared_alloc;
  std::vector<std::atomic<unsigned char*>> slots(static_cast<size_t>(params.Get("slots")));
  for (auto& s : slots) s.store(nullptr, std::memory_order_relaxed);
  auto release = [](Alloc<unsigned char>& alloc, unsigned char* p) {
    size_t size;
    std::memcpy(&size, p, sizeof(size));
    alloc.deallocate(p, size);
  };
  thread_internal::RunThreads(threads, [&](int64_t index) {
    WorkloadRng rng = thread_internal::ThreadRng(seed, static_cast<uint64_t>(index));
    Alloc<unsigned char> alloc = shared_alloc;
    for (int64_t i = 0; i < operations; ++i) {
      const size_t size = std::max<size_t>(sizeof(size_t), thread_internal::BlockSize(rng, params));
      unsigned char* p = alloc.allocate(size);
      std::memcpy(p, &size, sizeof(size));
      // acq_rel: the taker reads the size the maker wrote.
      unsigned char* old = slots[rng.Below(slots.size())].exchange(p, std::memory_order_acq_rel);
      if (old != nullptr) release(alloc, old);
    }
  });
  Alloc<unsigned char> alloc = shared_alloc;
  for (auto& s : slots) {
    if (unsigned char* p = s.load(std::memory_order_relaxed)) release(alloc, p);
  }
}

// thread_map_churn: `threads` threads, each with a std::map<int, int> of its
// own: `operations` steps, each inserting a random key from [0, keys) if it
// is absent and erasing it if present, then the map is destroyed. Nothing
// crosses threads: the baseline the three workloads above are compared with.
//
// Arenas: one per thread's map, created, used and destroyed on that thread.
template <template <typename> class Alloc>
void RunThreadMapChurn(const WorkloadParams& params, uint64_t seed) {
  using Map = std::map<int, int, std::less<int>, Alloc<std::pair<const int, int>>>;
  const int64_t operations = params.Get("operations");
  const int keys = static_cast<int>(params.Get("keys"));
  thread_internal::RunThreads(params.Get("threads"), [&](int64_t index) {
    WorkloadRng rng = thread_internal::ThreadRng(seed, static_cast<uint64_t>(index));
    Map m;
    for (int64_t i = 0; i < operations; ++i) {
      const int key = static_cast<int>(rng.Below(static_cast<uint64_t>(keys)));
      // try_emplace allocates a node only when the key is absent.
      if (!m.try_emplace(key, static_cast<int>(i)).second) m.erase(key);
    }
  });
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_THREAD_WORKLOADS_H_
