#include "alloctrace/replayer/engine/run_result_wire.h"

#include <optional>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/enum_words.h"
#include "alloctrace/base/io.h"

namespace alloctrace {

namespace {

void WritePass(std::ostringstream& o, const PassFigures& f) {
  o << ' ' << f.wall_seconds << ' ' << f.cpu_seconds << ' ' << f.minor_faults << ' '
    << f.major_faults << ' ' << f.involuntary_switches << ' ' << f.voluntary_switches << ' '
    << f.wait_seconds << ' ' << f.thread_cpu_seconds.size();
  for (double c : f.thread_cpu_seconds) o << ' ' << c;
}

bool ReadPass(std::istringstream& in, PassFigures* f) {
  in >> f->wall_seconds >> f->cpu_seconds >> f->minor_faults >> f->major_faults >>
      f->involuntary_switches >> f->voluntary_switches >> f->wait_seconds;
  size_t threads = 0;
  in >> threads;
  if (!in || threads > 100000) return false;
  f->thread_cpu_seconds.resize(threads);
  for (double& c : f->thread_cpu_seconds) in >> c;
  return static_cast<bool>(in);
}

}  // namespace

std::string SerializeRunResult(const RunResult& r) {
  std::ostringstream o;
  o.precision(17);
  o << "v5 " << r.teardown_seconds << ' ' << r.ops << ' ' << r.baseline_rss << ' ' << r.peak_rss
    << ' ' << r.final_rss << ' ' << r.migrations << ' ' << r.threads << ' ' << r.sync_points << ' '
    << r.cross_thread_frees << ' ' << r.passes.size();
  for (const PassFigures& f : r.passes) WritePass(o, f);
  o << ' ' << r.windows.size();
  for (const WindowFigures& w : r.windows) {
    o << ' ' << w.ops << ' ' << w.weight;
    WritePass(o, w.figures);
  }
  o << ' ' << r.rss_course.size();
  for (int64_t v : r.rss_course) o << ' ' << v;
  o << ' ' << WordOf(kRunErrorKindWords, r.error.kind) << ' ' << r.error.words << '\n';
  return o.str();
}

absl::StatusOr<RunResult> ParseRunResult(const std::string& line) {
  std::istringstream in(line);
  RunResult r;
  std::string version;
  size_t passes = 0;
  in >> version >> r.teardown_seconds >> r.ops >> r.baseline_rss >> r.peak_rss >> r.final_rss >>
      r.migrations >> r.threads >> r.sync_points >> r.cross_thread_frees >> passes;
  if (!in || version != "v5" || passes > 100000) {
    return absl::InternalError(absl::StrCat("malformed result from child: ", line.substr(0, 80)));
  }
  r.passes.resize(passes);
  for (PassFigures& f : r.passes) {
    if (!ReadPass(in, &f)) return absl::InternalError("truncated result from child");
  }
  size_t windows = 0;
  in >> windows;
  if (!in || windows > 100000) return absl::InternalError("truncated result from child");
  r.windows.resize(windows);
  for (WindowFigures& w : r.windows) {
    in >> w.ops >> w.weight;
    if (!ReadPass(in, &w.figures)) return absl::InternalError("truncated result from child");
  }
  size_t n = 0;
  in >> n;
  if (!in || n > 1000000) return absl::InternalError("truncated result from child");
  r.rss_course.resize(n);
  for (size_t i = 0; i < n; ++i) in >> r.rss_course[i];
  std::string kind_word;
  in >> kind_word;
  if (!in) return absl::InternalError("truncated result from child");
  const std::optional<RunErrorKind> kind = ParseWord(kRunErrorKindWords, kind_word);
  if (!kind) return absl::InternalError(absl::StrCat("unknown error kind from child: ", kind_word));
  r.error.kind = *kind;
  std::string& words = r.error.words;
  std::getline(in, words);
  if (!words.empty() && words[0] == ' ') words.erase(0, 1);
  if (!r.passes.empty()) {
    r.seconds = r.passes[0].wall_seconds;
    r.minor_faults = r.passes[0].minor_faults;
    r.major_faults = r.passes[0].major_faults;
  }
  return r;
}

std::string FramedRunResult(const RunResult& r) {
  const std::string words = SerializeRunResult(r);
  return absl::StrCat(words.size(), "\n", words);
}

bool TakeFramedWords(const std::string& received, std::string* words, size_t* used) {
  const size_t nl = received.find('\n');
  size_t length = 0;
  if (nl == std::string::npos || !absl::SimpleAtoi(received.substr(0, nl), &length)) return false;
  if (received.size() - nl - 1 < length) return false;
  *words = received.substr(nl + 1, length);
  *used = nl + 1 + length;
  return true;
}

bool WriteRunResult(int fd, const RunResult& r) { return WriteAll(fd, SerializeRunResult(r)) == 0; }

}  // namespace alloctrace
