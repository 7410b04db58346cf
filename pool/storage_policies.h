// Storage policies: how a bunch (bunch.h) keeps its chunks, which chunk serves
// the next allocation, and how a freed block finds the chunk that owns it.
// The contract every storage policy meets is written out at the top of
// pool.h; in short, a policy is a tag struct with a name and a nested
// `Chunks` class, the state of one bunch.
//
//   StorageSimple    one list of chunks; the last chunk used is tried first,
//                    otherwise a linear search. O(c) allocate and free.
//   StorageBoundary  full and non-full chunks kept apart: O(1) allocate from
//                    the newest non-full chunk, O(c) free to find the owner.
//   StorageOrdered   chunks in a std::map by address: address-ordered first
//                    fit, O(c) allocate, O(log c) free.
// (c = chunks in the bunch.)
//
// Thread-safety: none; the pool serializes access.
// Failure: Add may throw std::bad_alloc (the bunch turns it into nullptr);
// Deallocate CHECK-fails on a block no chunk owns.
#ifndef ALLOCTRACE_POOL_STORAGE_POLICIES_H_
#define ALLOCTRACE_POOL_STORAGE_POLICIES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "alloctrace/base/check.h"
#include "alloctrace/pool/chunk.h"

namespace alloctrace::pool {

struct StorageSimple {
  static constexpr char kName[] = "simple";
  static constexpr char kCppName[] = "alloctrace::pool::StorageSimple";

  class Chunks {
   public:
    void* TryAllocate() {
      if (alloc_hint_ < chunks_.size() && !chunks_[alloc_hint_]->full()) {
        return chunks_[alloc_hint_]->Allocate();
      }
      for (size_t i = 0; i < chunks_.size(); ++i) {
        if (!chunks_[i]->full()) {
          alloc_hint_ = i;
          return chunks_[i]->Allocate();
        }
      }
      return nullptr;
    }

    void Add(Chunk::Ptr chunk) {
      chunks_.push_back(std::move(chunk));
      alloc_hint_ = chunks_.size() - 1;
    }

    void Deallocate(void* block) {
      const size_t owner = FindOwner(block);
      chunks_[owner]->Deallocate(block);
      free_hint_ = owner;
    }

    size_t chunk_count() const { return chunks_.size(); }
    template <typename F>
    void ForEachChunk(F&& f) const {
      for (const Chunk::Ptr& chunk : chunks_) f(*chunk);
    }

   private:
    // Searches outwards from the chunk of the previous free: frees cluster.
    size_t FindOwner(const void* block) const {
      const size_t n = chunks_.size();
      ALLOCTRACE_CHECK(n > 0, "block freed into an empty bunch");
      const size_t start = free_hint_ < n ? free_hint_ : n - 1;
      if (chunks_[start]->Contains(block)) return start;
      size_t down = start;
      size_t up = start + 1;
      while (down > 0 || up < n) {
        if (down > 0 && chunks_[--down]->Contains(block)) return down;
        if (up < n && chunks_[up]->Contains(block)) return up;
        ++up;
      }
      ALLOCTRACE_CHECK(false, "block not owned by any chunk of its bunch");
      return 0;
    }

    std::vector<Chunk::Ptr> chunks_;
    size_t alloc_hint_ = 0;  // Chunk of the last allocation.
    size_t free_hint_ = 0;   // Chunk of the last free.
  };
};

struct StorageBoundary {
  static constexpr char kName[] = "boundary";
  static constexpr char kCppName[] = "alloctrace::pool::StorageBoundary";

  class Chunks {
   public:
    void* TryAllocate() {
      if (non_full_.empty()) return nullptr;
      Chunk* chunk = non_full_.back().get();
      void* block = chunk->Allocate();
      if (chunk->full()) {
        full_.push_back(std::move(non_full_.back()));
        non_full_.pop_back();
      }
      return block;
    }

    void Add(Chunk::Ptr chunk) {
      // Both lists keep room for every chunk, so moving a chunk from one to
      // the other never allocates (and never throws).
      const size_t total = chunk_count() + 1;
      Reserve(full_, total);
      Reserve(non_full_, total);
      non_full_.push_back(std::move(chunk));
    }

    void Deallocate(void* block) {
      // Newest chunks first: recently allocated blocks live there.
      for (size_t i = non_full_.size(); i-- > 0;) {
        if (non_full_[i]->Contains(block)) {
          non_full_[i]->Deallocate(block);
          return;
        }
      }
      for (size_t i = full_.size(); i-- > 0;) {
        if (full_[i]->Contains(block)) {
          full_[i]->Deallocate(block);
          non_full_.push_back(std::move(full_[i]));
          full_[i] = std::move(full_.back());
          full_.pop_back();
          return;
        }
      }
      ALLOCTRACE_CHECK(false, "block not owned by any chunk of its bunch");
    }

    size_t chunk_count() const { return non_full_.size() + full_.size(); }
    template <typename F>
    void ForEachChunk(F&& f) const {
      for (const Chunk::Ptr& chunk : non_full_) f(*chunk);
      for (const Chunk::Ptr& chunk : full_) f(*chunk);
    }

   private:
    static void Reserve(std::vector<Chunk::Ptr>& list, size_t n) {
      if (list.capacity() < n) list.reserve(std::max(n, 2 * list.capacity()));
    }

    std::vector<Chunk::Ptr> non_full_;  // Allocation takes the back one.
    std::vector<Chunk::Ptr> full_;
  };
};

struct StorageOrdered {
  static constexpr char kName[] = "ordered";
  static constexpr char kCppName[] = "alloctrace::pool::StorageOrdered";

  class Chunks {
   public:
    Chunks() = default;
    Chunks(Chunks&& other) noexcept { *this = std::move(other); }
    Chunks& operator=(Chunks&& other) noexcept {
      // A map's end() does not survive a move; its other iterators do.
      const bool at_end = other.first_free_ == other.chunks_.end();
      const auto first_free = other.first_free_;
      chunks_ = std::move(other.chunks_);
      first_free_ = at_end ? chunks_.end() : first_free;
      other.chunks_.clear();
      other.first_free_ = other.chunks_.end();
      return *this;
    }

    void* TryAllocate() {
      for (; first_free_ != chunks_.end(); ++first_free_) {
        Chunk& chunk = *first_free_->second;
        if (!chunk.full()) return chunk.Allocate();
      }
      return nullptr;
    }

    void Add(Chunk::Ptr chunk) {
      const uintptr_t key = reinterpret_cast<uintptr_t>(chunk->data());
      Lower(chunks_.emplace(key, std::move(chunk)).first);
    }

    void Deallocate(void* block) {
      auto owner = chunks_.upper_bound(reinterpret_cast<uintptr_t>(block));
      ALLOCTRACE_CHECK(owner != chunks_.begin(), "block not owned by any chunk of its bunch");
      --owner;
      ALLOCTRACE_CHECK(owner->second->Contains(block), "block not owned by any chunk of its bunch");
      owner->second->Deallocate(block);
      Lower(owner);
    }

    size_t chunk_count() const { return chunks_.size(); }
    template <typename F>
    void ForEachChunk(F&& f) const {
      for (const auto& [address, chunk] : chunks_) f(*chunk);
    }

   private:
    using Map = std::map<uintptr_t, Chunk::Ptr>;

    // `it` has a free block: the first-fit search must start there or lower.
    void Lower(Map::iterator it) {
      if (first_free_ == chunks_.end() || it->first < first_free_->first) {
        first_free_ = it;
      }
    }

    Map chunks_;  // By address of the first block.
    // Every chunk below first_free_ is full.
    Map::iterator first_free_ = chunks_.end();
  };
};

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_STORAGE_POLICIES_H_
