// LiveIdMap: live id -> value, for ids a process hands out from a counter
// (the recorder's arena ids), for the trace writer.
//
// Ids made close in time sit close in the table, so creating or looking up
// a recent id touches a cache line the last one did. A hash map scatters
// them: with a program making millions of short-lived arenas among a
// hundred thousand live ones, nearly every create missed the cache. Pages
// of 4096 entries are allocated on first use and freed when their last
// entry goes; the directory is 8 MiB of address space, resident only as
// far as 8 bytes per 4096 ids up to the largest id seen.
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_LIVE_ID_MAP_H_
#define ALLOCTRACE_FORMAT_LIVE_ID_MAP_H_

#include <cstddef>
#include <cstdint>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"

namespace alloctrace {

class LiveIdMap {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  LiveIdMap();
  LiveIdMap(const LiveIdMap&) = delete;
  LiveIdMap& operator=(const LiveIdMap&) = delete;
  ~LiveIdMap();

  // The value stored for `id`, or kNone.
  uint32_t Find(uint32_t id) const {
    const Page* page = pages_[id >> kPageBits];
    return page == nullptr ? kNone : page->values[id & kPageMask] - 1;
  }
  bool contains(uint32_t id) const { return Find(id) != kNone; }
  // Starts loading `id`'s slot into the cache; a hint (AddressMap::Prefetch
  // says why it is always inline).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Prefetch(uint32_t id) const {
    if (const Page* page = pages_[id >> kPageBits]) {
      __builtin_prefetch(&page->values[id & kPageMask], 1);
    }
  }
  // Stores `value` (not kNone) for `id` if `id` is not present; returns
  // whether it stored.
  bool Insert(uint32_t id, uint32_t value) {
    Page*& page = pages_[id >> kPageBits];
    if (ABSL_PREDICT_FALSE(page == nullptr)) page = NewPage(id >> kPageBits);
    uint32_t& slot = page->values[id & kPageMask];
    if (slot != 0) return false;
    slot = value + 1;
    ++page->live;
    ++size_;
    return true;
  }
  // Removes `id` and returns its value, or kNone if it was not present.
  uint32_t Erase(uint32_t id) {
    Page*& page = pages_[id >> kPageBits];
    if (page == nullptr) return kNone;
    uint32_t& slot = page->values[id & kPageMask];
    if (slot == 0) return kNone;
    const uint32_t value = slot - 1;
    slot = 0;
    --size_;
    if (--page->live == 0) FreePage(page);
    return value;
  }
  size_t size() const { return size_; }

 private:
  static constexpr int kPageBits = 12;
  static constexpr uint32_t kPageMask = (uint32_t{1} << kPageBits) - 1;
  // Every page an id can be on: the directory has a pointer for each, so a
  // lookup is two loads and no bounds check.
  static constexpr size_t kPages = size_t{1} << (32 - kPageBits);

  struct Page {
    uint32_t values[size_t{1} << kPageBits] = {};  // value + 1; 0 = absent
    uint32_t live = 0;
  };
  ABSL_ATTRIBUTE_NOINLINE Page* NewPage(size_t index);
  ABSL_ATTRIBUTE_NOINLINE void FreePage(Page*& page);
  // Pages emptied, kept for reuse: an emptied page is all zeros already.
  // Ids come from a counter, so the page a program hands ids out on
  // empties whenever its arenas all end (a container made and destroyed
  // before the next one is made), and is wanted again by the next id:
  // freeing it then took a 16 KiB allocation and clearing for each such
  // arena (a fifth of the writer thread's time recording text_index).
  static constexpr size_t kSparePages = 8;
  Page* spare_[kSparePages] = {};
  size_t spares_ = 0;

  // kPages pointers (8 MiB) mapped at construction: untouched entries are
  // never made resident, and the ids a process hands out from a counter
  // fill it from the front (a thousand arenas in a few KiB of it).
  Page** pages_;
  size_t pages_used_ = 0;  // one past the highest page index made
  size_t size_ = 0;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_LIVE_ID_MAP_H_
