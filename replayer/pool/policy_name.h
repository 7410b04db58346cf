// Names of pool policy combinations, as the replayer lists and selects them.
//
// Scheme: "pool/<storage>/<growth>/<threading>/<holding>/<delete>", with
//   storage   simple | boundary | ordered
//   growth    linear | exp
//   threading st | mt
//   holding   stack | singleton
//   delete    delete | nodelete
// e.g. "pool/boundary/exp/st/stack/delete". Slashes, not commas, separate the
// parts so names can be listed comma-separated; names contain no spaces or
// glob characters, so "pool/*/exp/*" or "pool/ordered/*" select groups.
#ifndef ALLOCTRACE_REPLAYER_POOL_POLICY_NAME_H_
#define ALLOCTRACE_REPLAYER_POOL_POLICY_NAME_H_

#include <string>

#include "absl/strings/str_cat.h"

namespace alloctrace::pool {

template <typename Storage, typename Growth, typename Threading,
          typename Holding, bool kDelete>
std::string PolicyName() {
  return absl::StrCat("pool/", Storage::kName, "/", Growth::kName, "/",
                      Threading::kName, "/", Holding::kName, "/",
                      kDelete ? "delete" : "nodelete");
}

}  // namespace alloctrace::pool

#endif  // ALLOCTRACE_REPLAYER_POOL_POLICY_NAME_H_
