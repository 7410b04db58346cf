// The entry of a child run: the replayer re-executed by the measuring
// parent (child_request.h) runs one policy over the shared program, once,
// and writes its RunResult to the result pipe (run_result_wire.h).
//
// Before the run the child only maps the program the parent decoded, so
// its heap holds nothing but what the runtime allocates. A preloaded malloc
// (tcmalloc, jemalloc, mimalloc) is checked to be the one serving malloc
// (dladdr); if not, the run's result says so instead of timing glibc under
// another name. An allocation failure becomes the result's error, never a
// crash (with a data limit inherited from ulimit -d named in it).
//
// Testing only: ALLOCTRACE_TEST_FAULT=POLICY:ATTEMPT:KIND makes the child
// of that policy's run number ATTEMPT (from 1) really fail: KIND segv
// raises SIGSEGV, hang sleeps until killed, exit exits with status 7.
//
// Thread-safety: runs in its own process; the run itself may start the
// per-thread replay's threads.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_CHILD_MAIN_H_
#define ALLOCTRACE_REPLAYER_ENGINE_CHILD_MAIN_H_

#include <map>
#include <string>

#include "alloctrace/replayer/engine/runnable_policies.h"

namespace alloctrace {

// Runs the request in argv (IsChildInvocation(argc, argv) holds) with
// `policies` (RunnablePolicies()), and ends the process once the run is
// done (_Exit, so that nothing is freed or destroyed after it): exit
// status 0 once the result is written (the run's own failure is in it), 1
// if it could not be. Returns 2, the process's exit status, for a
// malformed request or unknown policy.
int ChildMain(int argc, char** argv, const std::map<std::string, RunnablePolicy>& policies);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_CHILD_MAIN_H_
