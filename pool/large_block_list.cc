#include "alloctrace/pool/large_block_list.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace alloctrace::pool {
namespace {

// Bytes from the start of the system allocation to the user block: room for
// the link, and a multiple of the alignment.
size_t Offset(size_t align) { return align > 32 ? align : 32; }

}  // namespace

void* LargeBlockList::Push(char* memory, size_t offset) {
  char* block = memory + offset;
  Link* link = reinterpret_cast<Link*>(block) - 1;
  link->offset = offset;
  link->prev = nullptr;
  link->next = head_;
  if (head_ != nullptr) head_->prev = link;
  head_ = link;
  ++count_;
  return block;
}

void* LargeBlockList::Allocate(size_t bytes, size_t align) {
  const size_t offset = Offset(align);
  if (bytes > std::numeric_limits<size_t>::max() - 2 * offset) return nullptr;
  char* memory;
  if (align <= alignof(std::max_align_t)) {
    memory = static_cast<char*>(std::malloc(offset + bytes));
  } else {
    const size_t total = (offset + bytes + align - 1) & ~(align - 1);
    memory = static_cast<char*>(std::aligned_alloc(align, total));
  }
  if (memory == nullptr) return nullptr;
  return Push(memory, offset);
}

void* LargeBlockList::AllocateZeroed(size_t bytes, size_t align) {
  if (align > alignof(std::max_align_t)) {
    void* block = Allocate(bytes, align);
    if (block != nullptr) std::memset(block, 0, bytes);
    return block;
  }
  const size_t offset = Offset(align);
  if (bytes > std::numeric_limits<size_t>::max() - 2 * offset) return nullptr;
  char* memory = static_cast<char*>(std::calloc(1, offset + bytes));
  if (memory == nullptr) return nullptr;
  return Push(memory, offset);
}

bool LargeBlockList::CanReallocate(size_t align) { return align <= alignof(std::max_align_t); }

void* LargeBlockList::Reallocate(void* block, size_t bytes) {
  Link* link = static_cast<Link*>(block) - 1;
  const size_t offset = link->offset;
  if (bytes > std::numeric_limits<size_t>::max() - 2 * offset) return nullptr;
  char* memory =
      static_cast<char*>(std::realloc(static_cast<char*>(block) - offset, offset + bytes));
  if (memory == nullptr) return nullptr;
  // The link moved with the block: point its neighbours at its new place.
  link = reinterpret_cast<Link*>(memory + offset) - 1;
  if (link->prev != nullptr) {
    link->prev->next = link;
  } else {
    head_ = link;
  }
  if (link->next != nullptr) link->next->prev = link;
  return memory + offset;
}

void LargeBlockList::Deallocate(void* block) {
  Link* link = static_cast<Link*>(block) - 1;
  if (link->prev != nullptr) {
    link->prev->next = link->next;
  } else {
    head_ = link->next;
  }
  if (link->next != nullptr) link->next->prev = link->prev;
  --count_;
  std::free(static_cast<char*>(block) - link->offset);
}

void LargeBlockList::ReleaseAll() {
  while (head_ != nullptr) {
    Link* link = head_;
    head_ = link->next;
    --count_;
    std::free(reinterpret_cast<char*>(link + 1) - link->offset);
  }
}

}  // namespace alloctrace::pool
