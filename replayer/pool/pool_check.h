// ALLOCTRACE_POOL_CHECK: crash loudly, with file and line, when an allocator
// invariant is broken (a block freed into a pool that does not own it, two
// live instances of a process-wide pool adaptor, ...). Always on, also in
// optimized builds: these checks sit on slow paths only.
#ifndef ALLOCTRACE_REPLAYER_POOL_POOL_CHECK_H_
#define ALLOCTRACE_REPLAYER_POOL_POOL_CHECK_H_

#include "absl/base/optimization.h"

namespace alloctrace::pool::pool_internal {

// Prints "file:line: CHECK failed: condition: message" to stderr and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const char* message);

}  // namespace alloctrace::pool::pool_internal

#define ALLOCTRACE_POOL_CHECK(condition, message)                          \
  do {                                                                     \
    if (ABSL_PREDICT_FALSE(!(condition))) {                                \
      ::alloctrace::pool::pool_internal::CheckFailed(__FILE__, __LINE__,   \
                                                     #condition, message); \
    }                                                                      \
  } while (false)

#endif  // ALLOCTRACE_REPLAYER_POOL_POOL_CHECK_H_
