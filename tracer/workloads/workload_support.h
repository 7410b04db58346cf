// What every workload uses: a seeded random source whose output does not
// depend on the standard library, the allocator for the global heap, and an
// optimization barrier.
//
// A workload is a function template over an allocator template:
//
//   template <template <typename> class Alloc>
//   void RunSomething(const WorkloadParams& params, uint64_t seed);
//
// It must be deterministic for (params, seed): the same calls to Alloc in the
// same order. Each container is built with a default-constructed Alloc<...>
// (for TraceAllocator: its own arena); memory that a program would take from
// `new` or std::make_shared comes from GlobalHeapAllocator<Alloc, T>() (arena
// 0). A workload frees everything it allocates before it returns.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_SUPPORT_H_
#define ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_SUPPORT_H_

#include <cstdint>
#include <memory>
#include <new>
#include <random>
#include <type_traits>
#include <utility>

#include "alloctrace/tracer/no_arena.h"

namespace alloctrace::workloads {

// Uniform random integers from std::mt19937_64, whose output sequence the
// standard fixes, reduced to a range by Lemire's unbiased multiply-and-reject
// (std::uniform_int_distribution differs between standard libraries).
class WorkloadRng {
 public:
  explicit WorkloadRng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n). Requires n > 0.
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(engine_()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(engine_()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Uniform in [lo, hi]. Requires lo <= hi.
  int64_t Between(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span == ~uint64_t{0}) return static_cast<int64_t>(engine_());
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + Below(span + 1));
  }
  // A random int key in [0, 2^31).
  int Key() { return static_cast<int>(engine_() >> 33); }
  // True with probability percent / 100.
  bool Percent(uint64_t percent) { return Below(100) < percent; }

  // Fisher-Yates shuffle, deterministic across standard libraries.
  template <typename Vector>
  void Shuffle(Vector& v) {
    for (size_t i = v.size(); i > 1; --i) {
      using std::swap;
      swap(v[i - 1], v[Below(i)]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

// An Alloc<T> for the global heap, the one `new` and std::make_shared use:
// constructed from alloctrace::kNoArena where Alloc<T> accepts it (arena 0
// for TraceAllocator), else default-constructed (std::allocator).
template <template <typename> class Alloc, typename T>
Alloc<T> GlobalHeapAllocator() {
  if constexpr (std::is_constructible_v<Alloc<T>, NoArenaTag>) {
    return Alloc<T>(kNoArena);
  } else {
    return Alloc<T>();
  }
}

namespace support_internal {
template <typename A, typename Tag, typename = void>
struct Tagged {
  using type = A;
};
template <typename A, typename Tag>
struct Tagged<A, Tag, std::void_t<typename A::template with_tag<Tag>>> {
  using type = typename A::template with_tag<Tag>;
};
}  // namespace support_internal

// Alloc<T> naming its containers' class with the tag type `Tag` where the
// allocator can (TraceAllocator's with_tag, tracer/trace_allocator.h), else
// Alloc<T> itself: a workload tags its containers once for every allocator.
template <template <typename> class Alloc, typename T, typename Tag>
using TaggedAllocator = typename support_internal::Tagged<Alloc<T>, Tag>::type;

// Destroys and frees an object made by SharedFromNew.
template <template <typename> class Alloc, typename T>
struct GlobalHeapDelete {
  Alloc<T> alloc;
  void operator()(T* p) {
    p->~T();
    alloc.deallocate(p, 1);
  }
};

// std::shared_ptr<T>(new T()): the object and then the control block, two
// allocations from the global heap (std::make_shared makes one).
template <template <typename> class Alloc, typename T>
std::shared_ptr<T> SharedFromNew() {
  Alloc<T> alloc = GlobalHeapAllocator<Alloc, T>();
  T* p = alloc.allocate(1);
  ::new (static_cast<void*>(p)) T();
  // The control block comes from a rebound copy of the last argument.
  return std::shared_ptr<T>(p, GlobalHeapDelete<Alloc, T>{alloc}, GlobalHeapAllocator<Alloc, T>());
}

// Keeps the compiler from proving a pointer unused, so that an allocation
// paired with its deallocation is not optimized away in plain runs.
template <typename T>
inline void DoNotOptimize(T* p) {
  asm volatile("" : : "r"(p) : "memory");
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_WORKLOAD_SUPPORT_H_
