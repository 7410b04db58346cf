// ALLOCTRACE_CHECK: crash loudly, with file and line, when an invariant of
// the program itself is broken (a block freed into a pool that does not own
// it, two live instances of a process-wide pool adaptor, ...). Never for bad
// input: files and flags get an absl::Status. Always on, also in optimized
// builds: keep it off hot paths.
//
// Thread-safety: ALLOCTRACE_CHECK may be used from any thread; a failure aborts
// the process.
#ifndef ALLOCTRACE_BASE_CHECK_H_
#define ALLOCTRACE_BASE_CHECK_H_

#include "absl/base/optimization.h"

namespace alloctrace::base_internal {

// Prints "file:line: CHECK failed: condition: message" to stderr and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const char* message);

}  // namespace alloctrace::base_internal

#define ALLOCTRACE_CHECK(condition, message)                                             \
  do {                                                                                   \
    if (ABSL_PREDICT_FALSE(!(condition))) {                                              \
      ::alloctrace::base_internal::CheckFailed(__FILE__, __LINE__, #condition, message); \
    }                                                                                    \
  } while (false)

#endif  // ALLOCTRACE_BASE_CHECK_H_
