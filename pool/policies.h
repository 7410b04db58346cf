// Growth, threading and holding policies of the pool (storage policies are in
// storage_policies.h). Each is a tiny tag struct; the contracts they meet are
// written out at the top of pool.h (growth, threading) and pool_allocator.h
// (holding). The delete policy is a plain bool template argument: true frees
// blocks as usual, false makes deallocate a no-op.
#ifndef ALLOCTRACE_POOL_POLICIES_H_
#define ALLOCTRACE_POOL_POLICIES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace alloctrace::pool {

// ---- Growth: how many blocks the next chunk of a bunch gets. ----

// Every chunk has 255 blocks, as in the article.
struct GrowthLinear {
  static constexpr char kName[] = "lin";
  static constexpr char kCppName[] = "alloctrace::pool::GrowthLinear";
  static constexpr uint32_t kBlocksPerChunk = 255;

  static uint32_t FirstChunkBlocks(size_t /*block_size*/) { return kBlocksPerChunk; }
  static uint32_t NextChunkBlocks(uint32_t /*previous*/, size_t /*block_size*/) {
    return kBlocksPerChunk;
  }
};

// Each chunk twice the previous one, from 16 blocks, until a chunk would pass
// 1 MiB: big enough that a bunch of a million blocks has tens of chunks, not
// thousands, and chunks touch their pages lazily (chunk.h), so a big chunk
// costs address space, not resident memory.
struct GrowthExponential {
  static constexpr char kName[] = "exp";
  static constexpr char kCppName[] = "alloctrace::pool::GrowthExponential";
  static constexpr uint32_t kFirstBlocks = 16;
  static constexpr size_t kMaxChunkBytes = size_t{1} << 20;

  static uint32_t FirstChunkBlocks(size_t /*block_size*/) { return kFirstBlocks; }
  static uint32_t NextChunkBlocks(uint32_t previous, size_t block_size) {
    const size_t cap = std::max<size_t>(kFirstBlocks, kMaxChunkBytes / block_size);
    return static_cast<uint32_t>(std::min<size_t>(size_t{previous} * 2, cap));
  }
};

// ---- Threading: the lock a pool takes around every change. ----

// No lock: one thread at a time, or external synchronization.
struct SingleThreaded {
  static constexpr char kName[] = "st";
  static constexpr char kCppName[] = "alloctrace::pool::SingleThreaded";
  static constexpr bool kThreadSafe = false;
  struct Mutex {
    void lock() {}
    void unlock() {}
  };
};

// One std::mutex per pool around every allocation and free.
struct MultiThreaded {
  static constexpr char kName[] = "mt";
  static constexpr char kCppName[] = "alloctrace::pool::MultiThreaded";
  static constexpr bool kThreadSafe = true;
  using Mutex = std::mutex;
};

// ---- Holding: which pool an allocator object uses. ----

// One pool per allocator instance (the article's "stack" holding: a pool per
// container, released with it). A default-constructed allocator creates a
// pool; its copies and rebinds share it; the last one to go releases it.
struct HoldingStack {
  static constexpr char kName[] = "stack";
  static constexpr char kCppName[] = "alloctrace::pool::HoldingStack";
  static constexpr bool kPoolPerInstance = true;

  template <typename PoolT>
  class Handle {
   public:
    Handle() : pool_(std::make_shared<PoolT>()) {}
    // Copy only: a moved-from allocator must stay usable and equal.
    Handle(const Handle&) = default;
    Handle& operator=(const Handle&) = default;

    PoolT& pool() const { return *pool_; }

   private:
    std::shared_ptr<PoolT> pool_;
  };
};

// One process-wide pool per pool type, created on first use and never
// destroyed (so it outlives every static container that uses it). Its memory
// is reachable until exit; Instance<PoolT>().ReleaseAll() gives it back early.
struct HoldingSingleton {
  static constexpr char kName[] = "single";
  static constexpr char kCppName[] = "alloctrace::pool::HoldingSingleton";
  static constexpr bool kPoolPerInstance = false;

  template <typename PoolT>
  static PoolT& Instance() {
    static PoolT* const pool = new PoolT();
    return *pool;
  }

  template <typename PoolT>
  class Handle {
   public:
    PoolT& pool() const { return Instance<PoolT>(); }
  };
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_POLICIES_H_
