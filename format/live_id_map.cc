#include "alloctrace/format/live_id_map.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace alloctrace {

LiveIdMap::LiveIdMap() {
  void* p = mmap(nullptr, kPages * sizeof(Page*), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  pages_ = static_cast<Page**>(p);
}

LiveIdMap::~LiveIdMap() {
  for (size_t i = 0; i < pages_used_; ++i) delete pages_[i];
  for (size_t i = 0; i < spares_; ++i) delete spare_[i];
  munmap(pages_, kPages * sizeof(Page*));
}

LiveIdMap::Page* LiveIdMap::NewPage(size_t index) {
  pages_used_ = std::max(pages_used_, index + 1);
  if (spares_ > 0) return spare_[--spares_];
  return new Page();
}

void LiveIdMap::FreePage(Page*& page) {
  if (spares_ < kSparePages) {
    spare_[spares_++] = page;  // every slot 0 and live 0, as new
  } else {
    delete page;
  }
  page = nullptr;
}

}  // namespace alloctrace
