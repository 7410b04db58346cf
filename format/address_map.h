// AddressMap: live block address -> object id, for the trace writer.
//
// A hash map scatters neighbouring addresses across memory, so with a large
// live set nearly every lookup misses the cache. Allocators hand out
// addresses in dense runs, so a radix table keyed by the address keeps
// neighbours together: 16-byte granules map to slots of 64 KiB leaves
// (4096 slots of 4 bytes), leaves hang off 4 GiB directories found through a
// small hash map with a one-entry cache. A lookup is two or three dependent
// loads that usually hit the cache. Addresses not 16-byte aligned (rare:
// malloc and operator new return 16-aligned blocks on x86-64) go to a hash
// map.
//
// Replace and Erase, which the writer calls for nearly every event, are
// inline, their rare branches (an unaligned address, a leaf not yet made)
// out of line: as calls they were a tenth of the writer's instructions.
//
// Memory: a quarter of the address span the program's live blocks cover, in
// 16 KiB leaves allocated on first use (never freed before the map).
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_ADDRESS_MAP_H_
#define ALLOCTRACE_FORMAT_ADDRESS_MAP_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"

namespace alloctrace {

class AddressMap {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  // The id stored for `address`, or kNone.
  uint32_t Find(uint64_t address) {
    if (address & (kGranule - 1)) {
      auto it = unaligned_.find(address);
      return it == unaligned_.end() ? kNone : it->second;
    }
    uint32_t* slot = Slot(address, /*create=*/false);
    return slot == nullptr ? kNone : *slot - 1;
  }
  // Stores `id` (not kNone) for `address` and returns the id it replaces
  // (kNone if the address was not present).
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Replace(uint64_t address, uint32_t id) {
    if (ABSL_PREDICT_FALSE(address & (kGranule - 1))) return ReplaceUnaligned(address, id);
    uint32_t* slot = Slot(address, /*create=*/true);
    const uint32_t old = *slot - 1;
    *slot = id + 1;
    size_ += old == kNone;
    return old;
  }
  // Stores `id` (not kNone) for `address`, which must not be present.
  void Insert(uint64_t address, uint32_t id) {
    if (address & (kGranule - 1)) {
      unaligned_[address] = id;
    } else {
      *Slot(address, /*create=*/true) = id + 1;
    }
    ++size_;
  }
  // Removes `address` and returns its id, or kNone if it was not present.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Erase(uint64_t address) {
    if (ABSL_PREDICT_FALSE(address & (kGranule - 1))) return EraseUnaligned(address);
    uint32_t* slot = Slot(address, /*create=*/false);
    if (slot == nullptr || *slot == 0) return kNone;
    const uint32_t id = *slot - 1;
    *slot = 0;
    --size_;
    return id;
  }
  size_t size() const { return size_; }

  // Starts loading `address`'s slot into the cache (where its leaf is in
  // the directory last used): a writer that knows its next events calls it
  // some events ahead of their Erase, which otherwise waits for a line last
  // touched when the block was allocated. A hint; the map is unchanged.
  // Always inline: GCC finds a function whose only effect is a prefetch
  // pure, and deletes a call to it whose result is unused.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Prefetch(uint64_t address) const {
    if ((address >> kTopShift) != last_top_ || (address & (kGranule - 1))) return;
    const Leaf* leaf =
        last_dir_->leaves[(address >> kDirectoryShift) & ((1 << kDirectoryBits) - 1)].get();
    if (leaf != nullptr) {
      __builtin_prefetch(&leaf->slots[(address >> kLeafShift) & ((1 << kLeafBits) - 1)], 1);
    }
  }

 private:
  static constexpr uint64_t kGranule = 16;
  static constexpr int kLeafBits = 12;       // slots per leaf: 64 KiB of address
  static constexpr int kDirectoryBits = 16;  // leaves per directory: 4 GiB
  static constexpr int kLeafShift = 4;
  static constexpr int kDirectoryShift = kLeafShift + kLeafBits;
  static constexpr int kTopShift = kDirectoryShift + kDirectoryBits;

  struct Leaf {
    uint32_t slots[1 << kLeafBits] = {};  // id + 1; 0 = empty
  };
  struct Directory {
    std::unique_ptr<Leaf> leaves[1 << kDirectoryBits];
  };

  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t* Slot(uint64_t address, bool create) {
    if (ABSL_PREDICT_TRUE((address >> kTopShift) == last_top_)) {
      Leaf* leaf =
          last_dir_->leaves[(address >> kDirectoryShift) & ((1 << kDirectoryBits) - 1)].get();
      if (ABSL_PREDICT_TRUE(leaf != nullptr)) {
        return &leaf->slots[(address >> kLeafShift) & ((1 << kLeafBits) - 1)];
      }
    }
    return SlotSlow(address, create);
  }

  ABSL_ATTRIBUTE_NOINLINE uint32_t ReplaceUnaligned(uint64_t address, uint32_t id) {
    auto [it, inserted] = unaligned_.try_emplace(address, id);
    if (inserted) {
      ++size_;
      return kNone;
    }
    return std::exchange(it->second, id);
  }
  ABSL_ATTRIBUTE_NOINLINE uint32_t EraseUnaligned(uint64_t address) {
    auto it = unaligned_.find(address);
    if (it == unaligned_.end()) return kNone;
    const uint32_t id = it->second;
    unaligned_.erase(it);
    --size_;
    return id;
  }

  ABSL_ATTRIBUTE_NOINLINE uint32_t* SlotSlow(uint64_t address, bool create) {
    const uint64_t top = address >> kTopShift;
    Directory* dir;
    if (top == last_top_ && last_dir_ != nullptr) {
      dir = last_dir_;
    } else {
      auto it = directories_.find(top);
      if (it == directories_.end()) {
        if (!create) return nullptr;
        it = directories_.emplace(top, std::make_unique<Directory>()).first;
      }
      dir = it->second.get();
      last_top_ = top;
      last_dir_ = dir;
    }
    std::unique_ptr<Leaf>& leaf =
        dir->leaves[(address >> kDirectoryShift) & ((1 << kDirectoryBits) - 1)];
    if (leaf == nullptr) {
      if (!create) return nullptr;
      leaf = std::make_unique<Leaf>();
    }
    return &leaf->slots[(address >> kLeafShift) & ((1 << kLeafBits) - 1)];
  }

  absl::flat_hash_map<uint64_t, std::unique_ptr<Directory>> directories_;
  uint64_t last_top_ = ~uint64_t{0};
  Directory* last_dir_ = nullptr;
  absl::flat_hash_map<uint64_t, uint32_t> unaligned_;
  size_t size_ = 0;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_ADDRESS_MAP_H_
