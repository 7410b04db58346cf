// Luca Bolognese, "Writing functional code in C++ III: Performance of
// different allocation schemes" (2012). The article fills a container with
// `howMany` records of `bigBlock` bytes of payload plus a small header, and
// repeats that `repetitions` times, storing the records:
//
//   kByValue          by value in a std::vector grown by push_back (the
//                     vector's arena: its growth reallocations).
//   kPodVector        by value in a pod_vector: a buffer of N records that
//                     lives on the stack, with a heap fallback once it is
//                     full. The stack is never seen by an allocator, so the
//                     trace holds only the heap fallback: none at all when N
//                     >= records (the article's N = 2 x howMany), a buffer
//                     doubling from 2N records when N is smaller (N = howMany
//                     / 10). Here the "stack" buffer is untraced memory made
//                     once per run (a real stack of 2000 KiB records would
//                     overflow), and the fallback is the container's arena.
//   kLocalPool        through a boost::pool<> local to the round: records are
//                     never freed one by one; the pool's memory goes when it
//                     goes out of scope. What the program's allocator sees is
//                     the pool's own chunks (boost::pool asks its user
//                     allocator, new[] by default, for chunks of 32, 64, 128
//                     ... records), so the trace holds those chunks, on the
//                     global heap (arena 0), and the vector of pointers.
//   kSharedFromNew    std::shared_ptr(new Record): record and control block,
//                     two global-heap allocations.
//   kSingletonPool    std::shared_ptr made from a boost::singleton_pool
//                     record with a deleter that returns it to the pool: the
//                     control block is a global-heap allocation per record;
//                     the pool's chunks (global heap) are taken in the first
//                     round, reused after, and purged when the run ends.
//   kMakeShared       std::make_shared: one global-heap allocation.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_RECORD_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_RECORD_WORKLOADS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "alloctrace/tracer/workloads/workload_params.h"
#include "alloctrace/tracer/workloads/workload_support.h"
#include "boost/pool/pool.hpp"
#include "boost/pool/singleton_pool.hpp"

namespace alloctrace::workloads {

enum class RecordStorage {
  kByValue,
  kPodVector,
  kLocalPool,
  kSharedFromNew,
  kSingletonPool,
  kMakeShared
};

// The article's record: an id, six two-character keys and bigBlock bytes of
// payload (16 + kBigBlock bytes, rounded to 4).
template <size_t kBigBlock>
struct Record {
  int id;
  char k1[2];
  char k2[2];
  char k3[2];
  char k4[2];
  char k5[2];
  char k6[2];
  char mem[kBigBlock];
};
static_assert(sizeof(Record<1000>) == 1016);
static_assert(sizeof(Record<48>) == 64);

// Values accepted by the big_block parameter (the article's is 1000).
inline const std::vector<int64_t>& BigBlockValues() {
  static const std::vector<int64_t>* const kValues = new std::vector<int64_t>{48, 240, 1000};
  return *kValues;
}

namespace record_internal {

// A Boost.Pool UserAllocator over the global heap of Alloc, as new[] is for
// the article's pools: boost::pool's chunk requests are what the program's
// allocator sees. Boost frees without a size and std allocators need one, so
// the sizes are kept beside (untraced bookkeeping). Not thread-safe.
template <template <typename> class Alloc>
struct HeapUserAllocator {
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;

  static char* malloc BOOST_PREVENT_MACRO_SUBSTITUTION(const size_type bytes) {
    char* p = GlobalHeapAllocator<Alloc, char>().allocate(bytes);
    Sizes()[p] = bytes;
    return p;
  }
  static void free BOOST_PREVENT_MACRO_SUBSTITUTION(char* const block) {
    auto it = Sizes().find(block);
    const size_t bytes = it->second;
    Sizes().erase(it);
    GlobalHeapAllocator<Alloc, char>().deallocate(block, bytes);
  }

 private:
  static std::unordered_map<char*, size_t>& Sizes() {
    static auto* const kSizes = new std::unordered_map<char*, size_t>;
    return *kSizes;
  }
};

// Tag of the article's singleton pool, one per allocator template and size.
template <template <typename> class Alloc, size_t kBigBlock>
struct SingletonPoolTag {};

template <template <typename> class Alloc, size_t kBigBlock>
using RecordSingletonPool =
    boost::singleton_pool<SingletonPoolTag<Alloc, kBigBlock>, sizeof(Record<kBigBlock>),
                          HeapUserAllocator<Alloc>>;

// Destroys a record and gives it back to the singleton pool.
template <template <typename> class Alloc, size_t kBigBlock>
struct ReturnToSingletonPool {
  void operator()(Record<kBigBlock>* r) const {
    r->~Record<kBigBlock>();
    RecordSingletonPool<Alloc, kBigBlock>::free(r);
  }
};

// The article's pod_vector: a fixed buffer (the stack) of `capacity` PODs
// and a heap buffer from Alloc once that is full, doubling from twice the
// fixed buffer, its contents copied with memcpy.
template <typename T, typename A>
class PodVector {
 public:
  PodVector(T* fixed, size_t capacity, const A& alloc)
      : alloc_(alloc), data_(fixed), capacity_(capacity) {}
  PodVector(const PodVector&) = delete;
  PodVector& operator=(const PodVector&) = delete;
  ~PodVector() {
    if (on_heap_) alloc_.deallocate(data_, capacity_);
  }

  void push_back(const T& value) {
    if (size_ == capacity_) Grow();
    std::memcpy(static_cast<void*>(data_ + size_), &value, sizeof(T));
    ++size_;
  }
  size_t size() const { return size_; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  void Grow() {
    const size_t capacity = capacity_ == 0 ? 1 : 2 * capacity_;
    T* heap = alloc_.allocate(capacity);
    if (size_ > 0) std::memcpy(static_cast<void*>(heap), data_, size_ * sizeof(T));
    if (on_heap_) alloc_.deallocate(data_, capacity_);
    data_ = heap;
    capacity_ = capacity;
    on_heap_ = true;
  }

  A alloc_;
  T* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool on_heap_ = false;
};

template <template <typename> class Alloc, RecordStorage kStorage, size_t kBigBlock>
void RunRecordsOfSize(const WorkloadParams& params) {
  using R = Record<kBigBlock>;
  const int64_t records = params.Get("records");
  const int64_t rounds = params.Get("rounds");
  if constexpr (kStorage == RecordStorage::kByValue) {
    for (int64_t round = 0; round < rounds; ++round) {
      std::vector<R, Alloc<R>> v;
      for (int64_t i = 0; i < records; ++i) {
        R r{};
        r.id = static_cast<int>(i);
        v.push_back(r);
      }
      DoNotOptimize(v.data());
    }
  } else if constexpr (kStorage == RecordStorage::kPodVector) {
    const size_t fixed_records = static_cast<size_t>(records * params.Get("buffer_percent") / 100);
    // The stack buffer: never an allocation the program's allocator sees.
    std::unique_ptr<unsigned char[]> stack(new unsigned char[(fixed_records + 1) * sizeof(R)]);
    for (int64_t round = 0; round < rounds; ++round) {
      PodVector<R, Alloc<R>> v(reinterpret_cast<R*>(stack.get()), fixed_records, Alloc<R>());
      for (int64_t i = 0; i < records; ++i) {
        R r{};
        r.id = static_cast<int>(i);
        v.push_back(r);
      }
      DoNotOptimize(&v[v.size() - 1]);
    }
  } else if constexpr (kStorage == RecordStorage::kLocalPool) {
    for (int64_t round = 0; round < rounds; ++round) {
      boost::pool<record_internal::HeapUserAllocator<Alloc>> pool(sizeof(R));
      std::vector<R*, Alloc<R*>> v;
      for (int64_t i = 0; i < records; ++i) {
        R* r = ::new (pool.malloc()) R{};
        r->id = static_cast<int>(i);
        v.push_back(r);
      }
      DoNotOptimize(v.data());
      // Records are trivially destructible and never freed one by one: the
      // pool's destructor gives its chunks back.
    }
  } else {
    using Ptr = std::shared_ptr<R>;
    using SingletonPool = RecordSingletonPool<Alloc, kBigBlock>;
    for (int64_t round = 0; round < rounds; ++round) {
      std::vector<Ptr, Alloc<Ptr>> v;
      for (int64_t i = 0; i < records; ++i) {
        Ptr r;
        if constexpr (kStorage == RecordStorage::kSharedFromNew) {
          r = SharedFromNew<Alloc, R>();
        } else if constexpr (kStorage == RecordStorage::kSingletonPool) {
          void* p = SingletonPool::malloc();
          if (p == nullptr) throw std::bad_alloc();
          // The control block comes from the global heap, as with new.
          r = Ptr(::new (p) R{}, ReturnToSingletonPool<Alloc, kBigBlock>{},
                  GlobalHeapAllocator<Alloc, R>());
        } else {
          r = std::allocate_shared<R>(GlobalHeapAllocator<Alloc, R>());
        }
        r->id = static_cast<int>(i);
        v.push_back(std::move(r));
      }
    }
    // What the article's program gives back at exit; a run frees everything.
    if constexpr (kStorage == RecordStorage::kSingletonPool) SingletonPool::purge_memory();
  }
}

}  // namespace record_internal

// Parameters: records, rounds, big_block (one of BigBlockValues()), and for
// kPodVector buffer_percent (the fixed buffer's records, in percent of
// `records`). Each round fills a fresh container (its own arena) and
// destroys it.
template <template <typename> class Alloc, RecordStorage kStorage>
void RunRecords(const WorkloadParams& params, uint64_t /*seed*/) {
  switch (params.Get("big_block")) {
    case 48:
      return record_internal::RunRecordsOfSize<Alloc, kStorage, 48>(params);
    case 240:
      return record_internal::RunRecordsOfSize<Alloc, kStorage, 240>(params);
    default:
      return record_internal::RunRecordsOfSize<Alloc, kStorage, 1000>(params);
  }
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_RECORD_WORKLOADS_H_
