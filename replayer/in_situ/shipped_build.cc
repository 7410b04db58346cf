#include "alloctrace/replayer/in_situ/shipped_build.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/scoped_fd.h"
#include "alloctrace/replayer/engine/allocators/registry.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"
#include "alloctrace/tracer/policy_switch.h"

namespace alloctrace {
namespace {

using Clock = std::chrono::steady_clock;

// A build may compile much; past this it is stopped and its candidate not run.
constexpr double kBuildLimitSeconds = 3600;

// The adoptable type of catalog policy `name` (the switch's), or an error.
absl::StatusOr<allocators::Adoption> AdoptionOf(const std::string& name) {
  if (name == policy_switch::kStdName) return allocators::Adoption();
  static const std::map<std::string, allocators::AllocatorInfo> infos =
      allocators::AllocatorInfosByName();
  const auto it = infos.find(name);
  if (it == infos.end() || it->second.adopt.cpp_type.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has no allocator type to paste into an alias line"));
  }
  return it->second.adopt;
}

std::string LastLine(const std::string& text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return lines.empty() ? "" : std::string(lines.back());
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// The parent's environment without the variables a build sets, then those.
std::vector<std::string> BuildEnv(const std::vector<std::pair<const char*, std::string>>& set) {
  std::vector<std::string> env = CurrentEnvironment();
  env.erase(std::remove_if(env.begin(), env.end(),
                           [](const std::string& v) {
                             for (const char* name : {kEnvAliases, kEnvAliasesFile, kEnvShipped,
                                                      policy_switch::kEnvPolicy}) {
                               if (absl::StartsWith(v, absl::StrCat(name, "="))) return true;
                             }
                             return false;
                           }),
            env.end());
  for (const auto& [name, value] : set) env.push_back(absl::StrCat(name, "=", value));
  return env;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ShippedAliasLines(const std::vector<ClassDef>& classes,
                                                           const std::string& policy) {
  std::optional<policy_switch::Assignment> assignment;
  if (absl::StrContains(policy, '=')) {
    std::string error;
    assignment = policy_switch::Assignment::Parse(policy, &error);
    if (!assignment) return absl::InvalidArgumentError(error);
  } else if (policy != policy_switch::kStdName && policy_switch::Find(policy) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown policy '", policy, "'"));
  }
  std::vector<std::string> lines;
  for (const ClassDef& def : classes) {
    if (def.id == 0) continue;
    std::string name = policy;
    if (assignment) {
      const policy_switch::Ops* ops = assignment->PolicyOf(def.name);
      name = ops == nullptr || ops->is_std ? policy_switch::kStdName : ops->name;
    }
    absl::StatusOr<allocators::Adoption> adopt = AdoptionOf(name);
    if (!adopt.ok()) return adopt.status();
    lines.push_back(AliasLine(def, *adopt));
  }
  if (lines.empty()) {
    return absl::InvalidArgumentError("the trace names no class of containers: no alias to paste");
  }
  return lines;
}

ShippedBuilds::ShippedBuilds(std::string command, std::vector<ClassDef> classes,
                             std::string log_path, std::string dir)
    : command_(std::move(command)),
      classes_(std::move(classes)),
      log_path_(std::move(log_path)),
      dir_(std::move(dir)) {
  if (dir_.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/alloctrace-shipped.XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) {
      dir_ = pattern;
      own_dir_ = true;
    }
  }
}

ShippedBuilds::~ShippedBuilds() {
  if (!own_dir_) return;
  for (int i = 1; i <= builds_; ++i) {
    unlink(absl::StrCat(dir_, "/build-", i).c_str());
    unlink(absl::StrCat(dir_, "/aliases-", i, ".h").c_str());
  }
  rmdir(dir_.c_str());
}

absl::StatusOr<std::string> ShippedBuilds::For(const std::string& policy) {
  absl::StatusOr<std::vector<std::string>> lines = ShippedAliasLines(classes_, policy);
  if (!lines.ok()) return lines.status();
  const std::string key = absl::StrJoin(*lines, "\n");
  if (auto it = built_.find(key); it != built_.end()) return it->second;
  ++builds_;
  if (progress_)
    std::fprintf(stderr, "shipped build %d, of %s: building\n", builds_, policy.c_str());
  const double before = seconds_;
  absl::StatusOr<std::string> built = Build(*lines, absl::StrCat(dir_, "/build-", builds_));
  if (progress_) {
    std::fprintf(stderr, "shipped build %d: %s in %.1f s\n", builds_,
                 built.ok() ? "built" : "FAILED", seconds_ - before);
  }
  built_.emplace(key, built);
  return built;
}

absl::StatusOr<std::string> ShippedBuilds::Build(const std::vector<std::string>& lines,
                                                 const std::string& out) {
  if (dir_.empty()) return absl::InternalError("no directory for the builds could be made");
  const std::string aliases_file = absl::StrCat(dir_, "/aliases-", builds_, ".h");
  if (!WriteFile(aliases_file, absl::StrCat(absl::StrJoin(lines, "\n"), "\n"))) {
    return absl::InternalError(
        absl::StrCat("cannot write ", aliases_file, ": ", std::strerror(errno)));
  }
  unlink(out.c_str());
  const Clock::time_point start = Clock::now();
  std::string text;
  std::string failure = RunCommand({{kEnvAliases, absl::StrJoin(lines, " ")},
                                    {kEnvAliasesFile, aliases_file},
                                    {kEnvShipped, out}},
                                   &text);
  seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  if (failure.empty() && access(out.c_str(), X_OK) != 0) {
    failure = absl::StrCat("the build command exited 0 but left no executable at $", kEnvShipped);
  }
  if (std::FILE* log = std::fopen(log_path_.c_str(), "a")) {
    std::fprintf(log, "==== shipped build %d%s\n%s\n", builds_,
                 failure.empty() ? "" : absl::StrCat(" FAILED: ", failure).c_str(),
                 absl::StrJoin(lines, "\n").c_str());
    std::fwrite(text.data(), 1, text.size(), log);
    std::fclose(log);
  }
  if (!failure.empty()) {
    const std::string last = LastLine(text);
    return absl::FailedPreconditionError(
        absl::StrCat("its shipped build failed: ", failure, last.empty() ? "" : ": ", last));
  }
  return out;
}

int ShippedBuilds::failed_builds() const {
  return static_cast<int>(
      std::count_if(built_.begin(), built_.end(), [](const auto& b) { return !b.second.ok(); }));
}

void ShippedBuilds::Restore() {
  if (restored_ || builds_ == 0) return;
  restored_ = true;
  const std::string out = absl::StrCat(dir_, "/restored");
  std::string text;
  RunCommand({{kEnvShipped, out}}, &text);
  unlink(out.c_str());
}

std::string ShippedBuilds::RunCommand(const std::vector<std::pair<const char*, std::string>>& set,
                                      std::string* text) const {
  // The build's output (stdout and stderr) into one pipe, read by Wait
  // while the build runs, so a verbose build never blocks on it.
  absl::StatusOr<Pipe> output = Pipe::Make();
  if (!output.ok())
    return absl::StrCat("cannot run the build command: ", output.status().message());
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", command_};
  spec.env = BuildEnv(set);
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (cwd != nullptr && *cwd != '\0') spec.working_dir = cwd;
  spec.stdin_null = true;
  spec.new_process_group = true;  // a build stopped at its limit takes its compilers too
  spec.stdout_fd = spec.stderr_fd = output->write.get();
  std::string failure;
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  output->write.Reset();  // the build has its copy: Wait sees EOF when it ends
  if (!child.ok()) {
    failure = std::string(child.status().message());
  } else {
    ChildLimits limits;
    limits.wall_seconds = kBuildLimitSeconds;
    const ChildExit end = child->Wait(limits, output->read.get(), text);
    if (!end.Succeeded()) failure = absl::StrCat("the build command ", ChildExitWords(end, limits));
  }
  return failure;
}

}  // namespace alloctrace
