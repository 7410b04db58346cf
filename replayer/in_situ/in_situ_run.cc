#include "alloctrace/replayer/in_situ/in_situ_run.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/io.h"
#include "alloctrace/base/scoped_fd.h"
#include "alloctrace/tracer/policy_switch.h"

extern char** environ;

namespace alloctrace {
namespace {

constexpr int kStderrTailLines = 5;
constexpr char kMallocPrefix[] = "alloctrace-malloc ";

// All of fd's contents from its start.
std::string ReadFromStart(int fd) {
  std::string s;
  if (lseek(fd, 0, SEEK_SET) == 0) ReadAll(fd, &s);
  return s;
}

std::vector<std::string> LastLines(const std::string& text, int count) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    lines.emplace_back(l);
  }
  if (static_cast<int>(lines.size()) > count) lines.erase(lines.begin(), lines.end() - count);
  return lines;
}

// The child's environment: the parent's without the variables a run sets.
std::vector<std::string> ChildEnv(const ProgramRun& spec, int ack_fd) {
  std::vector<std::string> env;
  std::string old_preload;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view v(*e);
    if (absl::StartsWith(v, "LD_PRELOAD=")) {
      old_preload = std::string(v.substr(11));
      continue;
    }
    if (absl::StartsWith(v, "ALLOCTRACE_LAUNCH_LD_PRELOAD=") ||
        absl::StartsWith(v, absl::StrCat(policy_switch::kEnvPolicy, "=")) ||
        absl::StartsWith(v, absl::StrCat(policy_switch::kEnvAckFd, "="))) {
      continue;
    }
    env.emplace_back(v);
  }
  if (!spec.policy.empty())
    env.push_back(absl::StrCat(policy_switch::kEnvPolicy, "=", spec.policy));
  env.push_back(absl::StrCat(policy_switch::kEnvAckFd, "=", ack_fd));
  std::string preload = spec.preload;
  if (!preload.empty() && !spec.probe.empty()) absl::StrAppend(&preload, ":", spec.probe);
  if (!old_preload.empty()) {
    absl::StrAppend(&preload, preload.empty() ? "" : ":", old_preload);
  }
  // Set as LD_PRELOAD by the launcher, in the program only.
  if (!preload.empty()) env.push_back("ALLOCTRACE_LAUNCH_LD_PRELOAD=" + preload);
  return env;
}

// What went wrong with a run that ended as `end` ("" if nothing did),
// from the launcher's report `line`, whose figures go into *run.
std::string ProgramError(const ProgramRun& spec, const ChildExit& end, const ChildLimits& limits,
                         const std::string& line, InSituRun* run) {
  int program_status = 0;
  long maxrss_kib = 0, minflt = 0, majflt = 0;
  const bool reported = std::sscanf(line.c_str(), "v1 %d %lf %lf %ld %ld %ld", &program_status,
                                    &run->wall_s, &run->cpu_s, &maxrss_kib, &minflt, &majflt) == 6;
  run->peak_rss_bytes = static_cast<int64_t>(maxrss_kib) * 1024;
  run->minor_faults = minflt;
  run->major_faults = majflt;
  if (end.how == ChildExit::How::kTimedOut) {
    run->wall_s = spec.timeout_seconds;
    return ChildExitWords(end, limits);
  }
  if (!reported) {
    return absl::StrCat("the launcher ", spec.launcher, " reported nothing (",
                        ChildExitWords(end, limits), ")");
  }
  if (WIFSIGNALED(program_status)) {
    ChildExit program;
    program.how = ChildExit::How::kSignaled;
    program.signal = WTERMSIG(program_status);
    return ChildExitWords(program, limits);
  }
  if (WIFEXITED(program_status) && WEXITSTATUS(program_status) != 0) {
    ChildExit program;
    program.code = WEXITSTATUS(program_status);
    return ChildExitWords(program, limits);
  }
  return "";
}

}  // namespace

absl::StatusOr<LogFile> LogFile::Open(const std::string& path, bool append) {
  std::FILE* f = std::fopen(path.c_str(), append ? "a" : "w");
  if (f == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write the log ", path, ": ", strerror(errno)));
  }
  return LogFile(f);
}

LogFile::~LogFile() {
  if (f_ != nullptr) std::fclose(f_);
}

void LogFile::Append(const std::string& header, int stdout_fd, int stderr_fd) {
  std::fprintf(f_, "==== %s: stdout\n", header.c_str());
  const std::string out = ReadFromStart(stdout_fd);
  std::fwrite(out.data(), 1, out.size(), f_);
  std::fprintf(f_, "==== %s: stderr\n", header.c_str());
  const std::string err = ReadFromStart(stderr_fd);
  std::fwrite(err.data(), 1, err.size(), f_);
  std::fflush(f_);
}

ChildOutcome RunProgram(const ProgramRun& run, LogFile& log, const std::string& header) {
  ChildOutcome o;
  const ScopedFd out_fd(memfd_create("alloctrace-stdout", MFD_CLOEXEC));
  const ScopedFd err_fd(memfd_create("alloctrace-stderr", MFD_CLOEXEC));
  if (!out_fd.valid() || !err_fd.valid()) {
    o.error = absl::StrCat("cannot set up the run: ", strerror(errno));
    return o;
  }
  absl::StatusOr<Pipe> ack = Pipe::Make(O_CLOEXEC | O_NONBLOCK);
  absl::StatusOr<Pipe> result = ack.ok() ? Pipe::Make() : ack.status();
  if (!result.ok()) {
    o.error = absl::StrCat("cannot set up the run: ", result.status().message());
    return o;
  }
  ChildSpec spec;
  spec.argv = {run.launcher, absl::StrCat(result->write.get())};
  spec.argv.insert(spec.argv.end(), run.argv.begin(), run.argv.end());
  spec.env = ChildEnv(run, ack->write.get());
  spec.new_process_group = true;  // the time limit kills whatever the program started too
  spec.stdin_null = true;
  spec.stdout_fd = out_fd.get();
  spec.stderr_fd = err_fd.get();
  spec.inherit_fds = {ack->write.get(), result->write.get()};
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  ack->write.Reset();  // the child's copies are the only writers: their end is EOF
  result->write.Reset();
  std::string line;
  if (!child.ok()) {
    o.error = std::string(child.status().message());
  } else {
    ChildLimits limits;
    limits.wall_seconds = run.timeout_seconds;
    const ChildExit end = child->Wait(limits, result->read.get(), &line);
    o.timed_out = end.how == ChildExit::How::kTimedOut;
    o.error = ProgramError(run, end, limits, line, &o.run);
  }
  std::string acks;
  char buf[4096];
  ssize_t n;
  while ((n = read(ack->read.get(), buf, sizeof buf)) > 0) acks.append(buf, static_cast<size_t>(n));
  for (absl::string_view line : absl::StrSplit(acks, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, policy_switch::kAckRssPrefix)) {
      long long bytes = 0;
      if (o.start_rss_bytes == 0 && absl::SimpleAtoi(line, &bytes) && bytes > 0) {
        o.start_rss_bytes = bytes;
      }
    } else if (absl::ConsumePrefix(&line, policy_switch::kAckPrefix)) {
      if (o.acknowledged_policy.empty()) o.acknowledged_policy = std::string(line);
    } else if (absl::ConsumePrefix(&line, kMallocPrefix)) {
      if (o.malloc_provider.empty()) o.malloc_provider = std::string(line);
    }
  }
  o.run.start_rss_bytes = o.start_rss_bytes;
  if (!o.error.empty()) o.stderr_tail = LastLines(ReadFromStart(err_fd.get()), kStderrTailLines);
  log.Append(absl::StrCat(header, o.error.empty() ? "" : absl::StrCat(" FAILED: ", o.error)),
             out_fd.get(), err_fd.get());
  return o;
}

}  // namespace alloctrace
