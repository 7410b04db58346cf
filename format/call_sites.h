// CallSiteTable: a trace's stack and module tables as a reader builds them
// chunk by chunk, with the checks that make a damaged table an error
// instead of a wrong attribution (format in proto/trace.proto: Chunk.site,
// StackDef, ModuleDef).
//
// Call sites are optional: a trace recorded without them has an empty
// table, and every chunk's site column is empty. Where a chunk has one, it
// holds one entry per ALLOC and REALLOC op, in op order.
//
// Thread-compatible.
#ifndef ALLOCTRACE_FORMAT_CALL_SITES_H_
#define ALLOCTRACE_FORMAT_CALL_SITES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "alloctrace/format/chunk_decoder.h"
#include "alloctrace/format/trace_format.h"

namespace alloctrace {

// Limits on what a trace's tables may hold, whatever its file says.
inline constexpr size_t kMaxStackDepth = 64;  // pcs per stack

class CallSiteTable {
 public:
  // Adds the chunk's modules and stacks and checks its site column: ids
  // dense from 1 in order of definition, every stack's module references
  // defined, as many sites as the chunk has ALLOC and REALLOC ops, every
  // site 0 or a defined stack. Errors say what is wrong and, for a site,
  // the index of its event in the trace (`chunk.first_event` counts from
  // the trace's first event); the caller adds the file and byte offset.
  absl::Status AddChunk(const ChunkColumns& chunk);

  bool empty() const { return stacks_.empty(); }
  // Stack `id` (from 1; id - 1 indexes the vector).
  const std::vector<StackDef>& stacks() const { return stacks_; }
  const std::vector<ModuleDef>& modules() const { return modules_; }
  const StackDef* stack(uint64_t id) const {
    return id == 0 || id > stacks_.size() ? nullptr : &stacks_[id - 1];
  }
  const ModuleDef* module(uint32_t id) const {
    return id == 0 || id > modules_.size() ? nullptr : &modules_[id - 1];
  }

 private:
  std::vector<StackDef> stacks_;
  std::vector<ModuleDef> modules_;
};

// The event index, within its chunk, of the chunk's `n`th ALLOC or REALLOC
// op (from 0); the chunk's event count if there are fewer. Counts only
// events (not SET_ARENA, SET_THREAD or TIMESTAMP). For error messages.
uint64_t EventIndexOfAllocation(const ChunkColumns& chunk, uint64_t n);

// The number of ALLOC and REALLOC ops in the chunk's ops column (stops at a
// corrupt varint, which the decoder reports).
uint64_t CountAllocations(const ChunkColumns& chunk);

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_CALL_SITES_H_
