// What the reports say about adopting a policy: the C++ type to paste and
// where it comes from (allocators::Adoption), as one line, as the list
// `--list-policies` prints, and as the C++ file that proves every listed
// type compiles (catalog_types_test, and the installed package's check in
// tools/test.sh).
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_VERDICT_ADOPT_H_
#define ALLOCTRACE_REPLAYER_VERDICT_ADOPT_H_

#include <string>
#include <vector>

#include "alloctrace/replayer/engine/allocators/allocator_concept.h"

namespace alloctrace {

// "alloctrace::pool::SlabAllocator<T, ...> (#include "alloctrace/pool/pool_allocator.h";
// Bazel @alloctrace//pool, CMake alloctrace::pool)", or for a malloc how to
// adopt it; "" for nothing.
std::string AdoptWords(const allocators::Adoption& adopt);

// The policies as `--list-policies` prints them: per policy its name,
// family, `[default]` mark and description, then how to adopt it. Markdown:
// one table row per policy (name, C++ type or how, header, targets).
std::string FormatPolicyList(const std::vector<allocators::AllocatorInfo>& infos,
                             const std::vector<std::string>& defaults, bool markdown);

// A C++ file that includes every listed header and declares, for each
// policy with a C++ type, `template <class T> using A<i> = <cpp_type>;`
// exactly as printed, then uses each in a std::map. Pool catalog types are
// also checked to be the very types the replayer replays.
std::string CatalogTypesSource(const std::vector<allocators::AllocatorInfo>& infos);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_VERDICT_ADOPT_H_
