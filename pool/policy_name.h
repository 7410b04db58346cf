// Names of pool policy combinations, as the replayer lists and selects them.
//
// Scheme: "pool/<storage>/<growth>/<threading>/<holding>/<delete>", with
//   storage   simple | boundary | ordered
//   growth    lin | exp              (Linear: 255 blocks a chunk; Exponential)
//   threading st | mt
//   holding   stack | single         (one pool per arena; one Singleton pool)
//   delete    free | keep            (DeletePolicy true; false: memory is kept
//                                     until the pool goes)
// e.g. "pool/boundary/exp/st/stack/free". Kept short so a name fits the
// replayer's 80-column table. Slashes, not commas, separate the
// parts so names can be listed comma-separated; names contain no spaces or
// glob characters, so "pool/*/exp/*" or "pool/ordered/*" select groups.
#ifndef ALLOCTRACE_POOL_POLICY_NAME_H_
#define ALLOCTRACE_POOL_POLICY_NAME_H_

#include <string>

#include "absl/strings/str_cat.h"

namespace alloctrace::pool {

template <typename Storage, typename Growth, typename Threading,
          typename Holding, bool kDelete>
std::string PolicyName() {
  return absl::StrCat("pool/", Storage::kName, "/", Growth::kName, "/",
                      Threading::kName, "/", Holding::kName, "/",
                      kDelete ? "free" : "keep");
}

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_POOL_POLICY_NAME_H_
