#include "alloctrace/tracer/ref_count.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace alloctrace {
namespace ref_count_internal {
namespace {

bool Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0) == 0; }

// In a fork child only the forking thread exists: it becomes the sole one
// (or the mode stays shared).
void AfterForkInChild() {
  if (sole.load(std::memory_order_relaxed) != &kSharedMode) {
    sole.store(&tls_mark, std::memory_order_relaxed);
  }
  sole_busy.store(0, std::memory_order_relaxed);
}

}  // namespace

bool ClaimOrShare() {
  static const bool have_membarrier = [] {
    pthread_atfork(nullptr, nullptr, &AfterForkInChild);
    return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  }();
  const void* me = &tls_mark;
  const void* s = sole.load(std::memory_order_acquire);
  if (s == nullptr && have_membarrier &&
      sole.compare_exchange_strong(s, me, std::memory_order_acq_rel, std::memory_order_acquire)) {
    return true;
  }
  if (s == &kSharedMode) return false;
  // Another thread is sole, or there is no membarrier: switch. Threads that
  // switch at once each fence and wait, so none counts atomically before
  // the sole thread has left its plain operation.
  sole.store(&kSharedMode, std::memory_order_seq_cst);
  if (have_membarrier) Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  // The sole thread is now either inside an operation that may have read
  // sole == itself (its sole_busy == 1 is visible here) or sees shared on
  // its next one.
  while (sole_busy.load(std::memory_order_acquire) != 0) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  return false;
}

}  // namespace ref_count_internal
}  // namespace alloctrace
