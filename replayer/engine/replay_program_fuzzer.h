// The fuzz entry over the trace reader and the replay-program builder:
// bytes in, LoadReplayProgram over them, and the builder's contract checked
// on whatever it accepts. Built two ways (replayer/BUILD.bazel): as a
// libFuzzer target with clang (tools/fuzz.sh) and as a seeded mutation loop
// under the default toolchain (replay_program_fuzz_test, in tools/test.sh).
//
// Thread-safety: one input at a time.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_REPLAY_PROGRAM_FUZZER_H_
#define ALLOCTRACE_REPLAYER_ENGINE_REPLAY_PROGRAM_FUZZER_H_

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // ALLOCTRACE_REPLAYER_ENGINE_REPLAY_PROGRAM_FUZZER_H_
