// Test helpers for traces: temp files, reading a whole trace back, a random
// trace written through TraceWriter, and hand-made chunks for traces no
// writer would produce (the reader's and replayer's error paths).
#ifndef ALLOCTRACE_FORMAT_TEST_UTIL_H_
#define ALLOCTRACE_FORMAT_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/format/trace_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace::testing_util {

// A path under the test's temporary directory.
std::string TempPath(const std::string& name);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& bytes);

// What a reader saw, in a form easy to compare.
struct Decoded {
  std::vector<Event> events;
  std::vector<Shape> shapes;
  bool footer = false;
  std::string cut_short;
};
absl::StatusOr<Decoded> ReadAll(const std::string& path);

// Writes a reference event stream through TraceWriter: a few arenas and
// threads, random sizes, random frees, a realloc or two. *expected gets one
// (kind, bytes) per memory event (bytes 0 for frees). Returns false (after a
// gtest failure) if the writer failed. The header names `workload`.
bool WriteRandomTrace(const std::string& path, uint64_t seed, int n, uint32_t chunk_events,
                      bool finish, std::vector<std::pair<OpKind, uint64_t>>* expected,
                      const std::string& workload = "random_test");

// The memory events of a decode as (kind, bytes), as WriteRandomTrace lists them.
std::vector<std::pair<OpKind, uint64_t>> Summarize(const Decoded& d);

// One op of a hand-made chunk.
inline uint64_t Op(OpKind kind, uint64_t payload) {
  return (payload << kOpKindBits) | static_cast<uint64_t>(kind);
}
// Adds a shape to a hand-made chunk.
void AddShape(proto::Chunk* chunk, uint64_t elem_size, uint64_t count, uint64_t align,
              bool zeroed = false);
// One object grown by realloc in `steps` steps of 4 KiB (shape i: one
// block of 4096 * i bytes, aligned to 16): an alloc, steps - 1 reallocs and
// a free, so steps + 1 memory events.
proto::Chunk ReallocChainChunk(int steps);
// The bytes of a trace: a standard header, `chunks` as given, and a footer
// counting `footer_events` unless it is negative (no footer).
std::string TraceBytes(const std::vector<proto::Chunk>& chunks, int64_t footer_events = -1);
// Writes TraceBytes to TempPath(name) and returns the path.
std::string WriteTrace(const std::string& name, const std::vector<proto::Chunk>& chunks,
                       int64_t footer_events = -1);

// Hand-made traces that probe the reader's and the replayer's limits (one
// per hostile case: ids at the edge of 32 bits, size products
// that wrap, a realloc chain, a 1 GiB calloc, a trace of arena events only).
// format/testdata/ holds them as files (write_crafted_traces), as fuzzing
// seeds.
struct CraftedTrace {
  std::string name;  // file name, e.g. "thread_max.trace"
  std::vector<proto::Chunk> chunks;
  int64_t footer_events;  // -1: no footer
};
std::vector<CraftedTrace> CraftedTraces();

// A trace that claims much memory from few events: `arenas` arenas, each
// created and given one block of `block_bytes` (aligned to 16) that is never
// freed, no arena destroyed. A million arenas of 1 KiB is the replayer's
// memory-bound case: every per-arena pool holds at least a chunk.
// Too large for the fuzzing seeds; write_crafted_traces --many_arenas=N.
absl::Status WriteManyArenasTrace(const std::string& path, uint32_t arenas, uint64_t block_bytes);

// A trace whose cost per event is unbounded: one block of the global heap
// reallocated `reallocs` times, growing by `step_bytes` each time (every
// realloc may copy all of it: quadratic in bytes). The replayer's test of a
// bounded command; write_crafted_traces --realloc_chain=N.
absl::Status WriteReallocChainTrace(const std::string& path, uint32_t reallocs,
                                    uint64_t step_bytes);

}  // namespace alloctrace::testing_util

#endif  // ALLOCTRACE_FORMAT_TEST_UTIL_H_
