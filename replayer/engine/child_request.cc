#include "alloctrace/replayer/engine/child_request.h"

#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace alloctrace {
namespace {

// Sixteen significant digits: a double's words read back as the same double.
std::string Exact(double v) { return absl::StrFormat("%.17g", v); }

}  // namespace

std::vector<std::string> ChildArgs(const ChildRequest& r) {
  return {kChildMarker,
          absl::StrCat("policy=", r.policy),
          absl::StrCat("program_fd=", r.program_fd),
          absl::StrCat("schedule_fd=", r.schedule_fd),
          absl::StrCat("attempt=", r.attempt),
          absl::StrCat("touch=", WordOf(kTouchWords, r.options.touch)),
          absl::StrCat("rss_samples=", r.options.rss_samples),
          absl::StrCat("passes=", r.options.max_passes),
          absl::StrCat("warm_s=", Exact(r.options.min_warm_seconds)),
          absl::StrCat("windows=", r.windows),
          absl::StrCat("states_fd=", r.states_fd),
          absl::StrCat("mix=", r.mix)};
}

bool IsProbeInvocation(int argc, char** argv) {
  return argc == 2 && std::strcmp(argv[1], kProbeMarker) == 0;
}

bool IsChildInvocation(int argc, char** argv) {
  return argc >= 2 && std::strcmp(argv[1], kChildMarker) == 0;
}

absl::StatusOr<ChildRequest> ParseChildArgs(int argc, char** argv) {
  std::map<std::string, std::string> words;
  for (int i = 2; i < argc; ++i) {
    const char* eq = std::strchr(argv[i], '=');
    if (eq == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("child run: '", argv[i], "'"));
    words[std::string(argv[i], static_cast<size_t>(eq - argv[i]))] = eq + 1;
  }
  auto bad = [](const std::string& key) {
    return absl::InvalidArgumentError(absl::StrCat("child run: missing or malformed ", key, "="));
  };
  ChildRequest r;
  auto integer = [&](const char* key, int* out) {
    auto it = words.find(key);
    return it != words.end() && absl::SimpleAtoi(it->second, out);
  };
  if (!integer("program_fd", &r.program_fd)) return bad("program_fd");
  if (!integer("schedule_fd", &r.schedule_fd)) return bad("schedule_fd");
  if (!integer("result_fd", &r.result_fd) || r.result_fd < 0) return bad("result_fd");
  if (!integer("attempt", &r.attempt)) return bad("attempt");
  if (words.count("command_fd") != 0 &&
      (!integer("command_fd", &r.command_fd) || r.command_fd < 0)) {
    return bad("command_fd");
  }
  if (!integer("states_fd", &r.states_fd)) return bad("states_fd");
  if (!integer("rss_samples", &r.options.rss_samples)) return bad("rss_samples");
  if (!integer("passes", &r.options.max_passes)) return bad("passes");
  auto warm = words.find("warm_s");
  if (warm == words.end() || !absl::SimpleAtod(warm->second, &r.options.min_warm_seconds)) {
    return bad("warm_s");
  }
  auto windows = words.find("windows");
  if (windows == words.end()) return bad("windows");
  r.windows = windows->second;
  auto mix = words.find("mix");
  if (mix == words.end()) return bad("mix");
  r.mix = mix->second;
  auto touch = words.find("touch");
  std::optional<Touch> t =
      touch == words.end() ? std::nullopt : ParseWord(kTouchWords, touch->second);
  if (!t) return bad("touch");
  r.options.touch = *t;
  // A walk replays whole runs on one thread (the replayer's config sees to
  // it); a per-thread or windowed child would replay without it.
  if (r.options.touch == Touch::kWalk &&
      (r.schedule_fd >= 0 || !r.windows.empty() || r.command_fd >= 0)) {
    return absl::InvalidArgumentError(
        "child run: touch=walk replays whole runs on one thread, not with schedule_fd=, "
        "windows= or command_fd=");
  }
  auto policy = words.find("policy");
  if (policy == words.end() || policy->second.empty()) return bad("policy");
  r.policy = policy->second;
  return r;
}

}  // namespace alloctrace
