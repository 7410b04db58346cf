// The capture session: what liballoctrace_capture.so records, into which
// file, across fork, exec and exit. libc_override.cc holds the replaced libc
// and C++ functions and asks this file whether to record.
//
// - Start: the library's constructor calls StartSession. ALLOCTRACE_OUT names
//   the file (`%p` is replaced by the pid; default `alloctrace.%p.trace`),
//   ALLOCTRACE_WORKLOAD the workload (default: the program's name); labels
//   carry the command line from /proc/self/cmdline, the pid, ppid and exe.
//   Allocations made before that are not recorded; their frees are dropped
//   by the trace writer and counted as unmatched frees.
// - A name is never overwritten: the file is created exclusively, and if it
//   exists (an exec'd image keeps its pid; an old run may have used the pid)
//   ".1", ".2", ... is put before a ".trace" extension (or appended).
// - fork: the child abandons the parent's recording (its drainer thread does
//   not exist there) and starts its own trace lazily, at its first
//   allocation, so a child that only execs leaves no file. If ALLOCTRACE_OUT
//   has no `%p`, a child puts ".<pid>" before the extension: a forked
//   process, or, when ALLOCTRACE_CAPTURE_PARENT_PID is set (capture sets it
//   to its own pid), any process whose parent is not that process. capture
//   starts one process and is no subreaper, so while it waits the program
//   it started, through its exec chain, is the only process whose parent it
//   is; a process the program forks, spawns (vfork, posix_spawn) or orphans
//   has another parent.
// - exit: the library's destructor stops the recording and writes the
//   footer, after the program's atexit handlers and static destructors.
//   _exit and _Exit stop it first too (StopAtExit), unless called from
//   inside an allocation function (a signal handler interrupting one) or
//   from a vfork child (another pid sharing our memory).
// - exec stops the recording first, so the old image's trace is complete;
//   if exec fails, recording goes on in a new file (the next free name).
//   The new image writes its own trace (same pid: the next free name).
// - Anything else that ends the process (a fatal signal, a raw exit_group)
//   leaves every chunk already written (flushed every 50 ms) and no footer:
//   the trace reads as cut short. No signal handlers are installed: they
//   would change the program's own signal behaviour.
//
// Thread-safety: SessionRecording may be called from any thread at any
// time. The other functions are called with the calling thread excluded
// from recording (Recorder::SetThreadExcluded), as noted. Failure to create
// or write the trace is printed to stderr ("alloctrace: ...") and recording
// stops; the program runs on.
#ifndef ALLOCTRACE_TRACER_CAPTURE_CAPTURE_SESSION_H_
#define ALLOCTRACE_TRACER_CAPTURE_CAPTURE_SESSION_H_

#include <atomic>

#include "alloctrace/tracer/recorder.h"

namespace alloctrace::capture_internal {

enum SessionState : int {
  kOff = 0,           // before the constructor, after the destructor, or failed
  kOn = 1,            // recording
  kChildPending = 2,  // forked: start at the first allocation
  kStarting = 3,      // a thread is starting the child's recording
};

// Read by every replaced function; only this file's functions write it.
extern std::atomic<int> g_session_state;
// Recorder::Global(), looked up once: the replaced functions record into it.
extern Recorder* g_recorder;

// How many frames of each allocation's call stack to record (0: no call
// sites). Set once by StartSession from ALLOCTRACE_CALL_SITES.
extern int g_call_site_depth;

// Starts the session (reads ALLOCTRACE_VERBOSE and ALLOCTRACE_CALL_SITES,
// registers the fork handler, starts recording). Once, from the library's
// constructor, thread excluded.
void StartSession();

// The first allocation of a forked child: starts its recording unless
// another thread does. Returns whether the process is recording now.
bool StartInChild();

// Whether the process records now (the caller then excludes its thread for
// the duration of the call). Cheap: one atomic load while recording.
inline bool SessionRecording() {
  const int state = g_session_state.load(std::memory_order_acquire);
  if (__builtin_expect(state == kOn, 1)) return true;
  return state == kChildPending && StartInChild();
}

// At exit, _exit or _Exit: stops the recording and writes the footer. Does
// nothing when the thread is excluded (a signal handler that interrupted a
// replaced function: the recorder's locks may be held) or in a vfork child
// (its memory, and so the session, is its parent's). Keeps errno.
void StopAtExit();

// Around an exec function (an exec'd image runs no destructors): stops the
// recording if StopAtExit would; returns whether it did. If exec returns,
// ResumeAfterFailedExec starts recording again in a new file.
bool StopBeforeExec();
void ResumeAfterFailedExec();

}  // namespace alloctrace::capture_internal

#endif  // ALLOCTRACE_TRACER_CAPTURE_CAPTURE_SESSION_H_
