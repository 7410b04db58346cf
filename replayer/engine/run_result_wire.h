// How a child sends its RunResult to the parent: one line of text on a
// pipe, the format's tag ("v5", which ParseRunResult requires) first, then
// every figure at full precision (the run's totals, each pass, each window,
// the RSS course), the error's kind (a word of kRunErrorKindWords) and its
// words last. A serving child sends several on one pipe, each framed
// (FramedRunResult).
//
// Thread-safety: pure functions (WriteRunResult writes one fd).
#ifndef ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_WIRE_H_
#define ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_WIRE_H_

#include <string>

#include "absl/status/statusor.h"
#include "alloctrace/replayer/engine/run_result.h"

namespace alloctrace {

std::string SerializeRunResult(const RunResult& r);

// Internal error naming what is malformed (a child of the same binary
// writes what this reads, so a mismatch is a broken child, not bad input).
absl::StatusOr<RunResult> ParseRunResult(const std::string& line);

// One of several results on one pipe (a serving child's answers:
// window_server.h): the length of SerializeRunResult(r) in decimal, a
// newline, then the words.
std::string FramedRunResult(const RunResult& r);

// The first framed result at the start of `received`: its words in *words
// and the bytes it took in *used; false while it is not all there yet.
bool TakeFramedWords(const std::string& received, std::string* words, size_t* used);

// Writes SerializeRunResult(r) to fd; false if it could not.
bool WriteRunResult(int fd, const RunResult& r);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_WIRE_H_
