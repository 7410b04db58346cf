// Call sites for recordings: walks the allocating thread's frame-pointer
// chain, and interns each distinct stack once per process, so an event
// carries a 32-bit stack id and the trace holds each stack once (the writer
// thread copies a stack into the trace the first time an event names it).
//
// The walk. The first frame is always right: it is the return address of
// the replaced function (the caller of malloc or operator new). Further
// frames follow the saved frame pointers; each step is checked (the next
// frame lies above this one, within the thread's stack, 8-byte aligned), so
// the walk never reads outside the stack. Code built without frame pointers
// (most distribution binaries) breaks the chain: the walk then stops early,
// or, where such code left a stack address in the frame-pointer register,
// may add a frame that is not a caller. docs/trace-format.md says so.
//
// Cost: the walk reads two words per frame from the stack (in cache); a
// 1,024-entry cache per thread maps the stack's hash to its id, so a
// process-wide lock is taken only the first time a thread sees a stack.
// Stacks are identified by a 64-bit hash of their frames.
//
// Thread-safety: every function may be called from any thread. Intern
// allocates (under the registry's lock) on a thread's first sight of a
// stack: the capture library calls it while the thread is excluded from
// recording, so those allocations are not recorded.
#ifndef ALLOCTRACE_TRACER_CALL_SITES_H_
#define ALLOCTRACE_TRACER_CALL_SITES_H_

#include <cstdint>
#include <vector>

namespace alloctrace {

// The deepest stack a recording keeps (the trace allows 64).
inline constexpr int kMaxRecordedDepth = 32;

// Walks the frame-pointer chain from `frame`, a frame of the caller's own
// (__builtin_frame_address(0) of a function built with frame pointers),
// storing up to `depth` return addresses in `pcs`, the return address of
// `frame` first. Returns how many it stored (at least 1).
int WalkFrames(const void* frame, uint64_t* pcs, int depth);

// The process-wide id (from 1) of the stack pcs[0..n), n >= 1.
uint32_t InternStack(const uint64_t* pcs, int n);

// The frames of stack `id` into *pcs; false for an id never interned.
bool StackFrames(uint32_t id, std::vector<uint64_t>* pcs);

// In a forked child: the registry's lock may have been held by a thread
// that does not exist there. Makes the lock usable again (the table stays).
void ResetCallSitesAfterFork();

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_CALL_SITES_H_
