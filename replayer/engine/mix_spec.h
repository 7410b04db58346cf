// MixSpec: a replay per class of containers as the parent asks a child for
// it (engine/child_request.h: mix=), a registry policy per class id and one
// for the rest; mix_allocator.h replays it.
//
// Thread-safety: plain data and pure functions.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_MIX_SPEC_H_
#define ALLOCTRACE_REPLAYER_ENGINE_MIX_SPEC_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace alloctrace {

// A policy assigned per class: class id -> registry name, and `rest` for
// every other class and arena 0.
struct MixSpec {
  std::map<uint32_t, std::string> by_class;
  std::string rest = "malloc";
  friend bool operator==(const MixSpec& a, const MixSpec& b) {
    return a.by_class == b.by_class && a.rest == b.rest;
  }
};

// "3=slab/st/stack;5=slab/mt/stack;*=malloc" (classes by id, ascending,
// then `*`), and back: InvalidArgument naming the entry that is malformed.
std::string MixSpecWord(const MixSpec& spec);
absl::StatusOr<MixSpec> ParseMixSpecWord(const std::string& word);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_MIX_SPEC_H_
