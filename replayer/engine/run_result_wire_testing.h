// For tests of the processes that answer in FramedRunResult
// (run_result_wire.h): every answer a pipe holds, read to its end.
#ifndef ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_WIRE_TESTING_H_
#define ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_WIRE_TESTING_H_

#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/base/io.h"
#include "alloctrace/replayer/engine/run_result.h"
#include "alloctrace/replayer/engine/run_result_wire.h"

namespace alloctrace {

// Reads `fd` to its end and closes it; each complete framed answer in what
// it held, parsed, in order. What follows the last one (a partial answer)
// goes to *rest.
inline std::vector<absl::StatusOr<RunResult>> ReadFramedAnswers(int fd, std::string* rest) {
  std::string received;
  ReadAll(fd, &received);
  close(fd);
  std::vector<absl::StatusOr<RunResult>> answers;
  std::string words;
  size_t used = 0;
  while (TakeFramedWords(received, &words, &used)) {
    answers.push_back(ParseRunResult(words));
    received.erase(0, used);
  }
  *rest = std::move(received);
  return answers;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_ENGINE_RUN_RESULT_WIRE_TESTING_H_
