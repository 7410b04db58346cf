// LiveIdMap: live id -> value, for ids a process hands out from a counter
// (the recorder's arena ids), for the trace writer.
//
// Ids made close in time sit close in the table, so creating or looking up
// a recent id touches a cache line the last one did. A hash map scatters
// them: with a program making millions of short-lived arenas among a
// hundred thousand live ones, nearly every create missed the cache. Pages
// of 4096 entries are allocated on first use and freed when their last
// entry goes; the directory costs 8 bytes per 4096 ids up to the largest
// id seen (8 MiB for the largest 32-bit id).
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_LIVE_ID_MAP_H_
#define ALLOCTRACE_FORMAT_LIVE_ID_MAP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/attributes.h"

namespace alloctrace {

class LiveIdMap {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  // The value stored for `id`, or kNone.
  uint32_t Find(uint32_t id) const {
    const size_t p = id >> kPageBits;
    if (p >= pages_.size() || pages_[p] == nullptr) return kNone;
    return pages_[p]->values[id & kPageMask] - 1;
  }
  bool contains(uint32_t id) const { return Find(id) != kNone; }
  // Starts loading `id`'s slot into the cache; a hint (AddressMap::Prefetch
  // says why it is always inline).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Prefetch(uint32_t id) const {
    const size_t p = id >> kPageBits;
    if (p < pages_.size() && pages_[p] != nullptr) {
      __builtin_prefetch(&pages_[p]->values[id & kPageMask], 1);
    }
  }
  // Stores `value` (not kNone) for `id` if `id` is not present; returns
  // whether it stored.
  bool Insert(uint32_t id, uint32_t value) {
    const size_t p = id >> kPageBits;
    if (p >= pages_.size()) pages_.resize(p + 1);
    if (pages_[p] == nullptr) pages_[p] = std::make_unique<Page>();
    Page& page = *pages_[p];
    uint32_t& slot = page.values[id & kPageMask];
    if (slot != 0) return false;
    slot = value + 1;
    ++page.live;
    ++size_;
    return true;
  }
  // Removes `id` and returns its value, or kNone if it was not present.
  uint32_t Erase(uint32_t id) {
    const size_t p = id >> kPageBits;
    if (p >= pages_.size() || pages_[p] == nullptr) return kNone;
    Page& page = *pages_[p];
    uint32_t& slot = page.values[id & kPageMask];
    if (slot == 0) return kNone;
    const uint32_t value = slot - 1;
    slot = 0;
    --size_;
    if (--page.live == 0) pages_[p].reset();
    return value;
  }
  size_t size() const { return size_; }

 private:
  static constexpr int kPageBits = 12;
  static constexpr uint32_t kPageMask = (uint32_t{1} << kPageBits) - 1;

  struct Page {
    uint32_t values[size_t{1} << kPageBits] = {};  // value + 1; 0 = absent
    uint32_t live = 0;
  };

  std::vector<std::unique_ptr<Page>> pages_;
  size_t size_ = 0;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_LIVE_ID_MAP_H_
