// events_to_trace: turns the event lines of stdlib_events (see
// stdlib_events_main.cc for the format) into a trace, through the same
// Recorder that record uses, with the header's workload, the parameters and
// seed as labels, and stdlib / stdlib_version / compiler labels saying which
// standard library made the events.
//
//   events_to_trace --in=EVENTS --out=TRACE
//
// The whole input is read and checked before the trace is started, so bad
// input leaves no trace file: every error names the file and line, e.g.
//   events_to_trace: x.events:12: F of 55d0c0 which is not live
// Exit status: 0 on success, 2 for a usage error, 1 for bad input or a trace
// that cannot be written.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "alloctrace/base/cli_util.h"
#include "alloctrace/base/output_file.h"
#include "alloctrace/tracer/recorder.h"
#include "alloctrace/tracer/workloads/workloads.h"

ABSL_FLAG(std::string, in, "", "the event lines written by stdlib_events");
ABSL_FLAG(std::string, out, "", "the trace to write (created or truncated)");

namespace alloctrace::workloads {
namespace {

struct Op {
  char kind;  // 'C', 'D', 'A', 'F'
  uint64_t address = 0;
  uint32_t arena = 0;
  uint64_t elem_size = 0;
  uint64_t count = 0;
  uint8_t align_log2 = 0;
};

struct Events {
  std::string workload;
  std::map<std::string, std::string> labels;
  std::vector<std::string> params;  // "name=value"
  std::vector<Op> ops;
};

bool ParseU64(absl::string_view text, uint64_t* v, int base = 10) {
  if (base == 16) return absl::SimpleHexAtoi(text, v);
  return absl::SimpleAtoi(text, v);
}

// What reading an event file keeps from line to line: the events so far,
// and the objects and arenas live after them, which the next line is
// checked against.
struct ReadState {
  Events ev;
  std::unordered_map<uint64_t, uint32_t> live;  // address -> arena
  std::vector<uint8_t> arena_live = {1};        // arena 0 always exists
  bool ended = false;                           // the end line was read
};

// The fields of an A line: the address as written (hex) and as read, then
// the arena, element size, count and alignment.
struct AllocLine {
  absl::string_view address_text;
  uint64_t address = 0, arena = 0, elem_size = 0, count = 0, align = 0;
};

// AddArenaCreate to AddEnd: one line each (C, D, A, F, end), checked against
// the state before it. The event is added, or an error says what is wrong
// (the caller adds the file and line).
absl::Status AddArenaCreate(uint64_t a, ReadState* st) {
  if (a >= st->arena_live.size()) st->arena_live.resize(a + 1, 0);
  if (st->arena_live[a])
    return absl::InvalidArgumentError(absl::StrCat("arena ", a, " created twice"));
  st->arena_live[a] = 1;
  st->ev.ops.push_back({'C', 0, static_cast<uint32_t>(a)});
  return absl::OkStatus();
}

absl::Status AddArenaDestroy(uint64_t a, ReadState* st) {
  if (a == 0 || a >= st->arena_live.size() || !st->arena_live[a]) {
    return absl::InvalidArgumentError(absl::StrCat("D of arena ", a, " which is not live"));
  }
  st->arena_live[a] = 0;
  st->ev.ops.push_back({'D', 0, static_cast<uint32_t>(a)});
  return absl::OkStatus();
}

absl::Status AddAlloc(const AllocLine& l, ReadState* st) {
  if (l.arena >= st->arena_live.size() || !st->arena_live[l.arena]) {
    return absl::InvalidArgumentError(absl::StrCat("A in arena ", l.arena, " which is not live"));
  }
  if (l.elem_size == 0 || l.elem_size > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("element size ", l.elem_size, " out of range"));
  }
  if (l.align == 0 || (l.align & (l.align - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("alignment ", l.align, " is not a power of two"));
  }
  if (!st->live.emplace(l.address, static_cast<uint32_t>(l.arena)).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("A of ", l.address_text, " which is already live"));
  }
  st->ev.ops.push_back({'A', l.address, static_cast<uint32_t>(l.arena), l.elem_size, l.count,
                        static_cast<uint8_t>(__builtin_ctzll(l.align))});
  return absl::OkStatus();
}

absl::Status AddFree(absl::string_view address_text, uint64_t address, uint64_t arena,
                     ReadState* st) {
  auto it = st->live.find(address);
  if (it == st->live.end()) {
    return absl::InvalidArgumentError(absl::StrCat("F of ", address_text, " which is not live"));
  }
  if (it->second != arena) {
    return absl::InvalidArgumentError(absl::StrCat("F of ", address_text, " in arena ", arena,
                                                   "; it was allocated in arena ", it->second));
  }
  st->live.erase(it);
  st->ev.ops.push_back({'F', address, static_cast<uint32_t>(arena)});
  return absl::OkStatus();
}

absl::Status AddEnd(uint64_t events, ReadState* st) {
  if (events != st->ev.ops.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("end says ", events, " events, the file has ", st->ev.ops.size()));
  }
  st->ended = true;
  return absl::OkStatus();
}

// Reads a line after the first into `st`: a header line (stdlib, compiler,
// workload, seed, param), an event or the end line. An error says what is
// wrong (the caller adds the file and line).
absl::Status ReadLine(const std::string& line, ReadState* st) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.empty()) return absl::InvalidArgumentError("empty line");
  const absl::string_view key = f[0];
  Events& ev = st->ev;
  uint64_t a = 0, b = 0, c = 0, d = 0, e = 0;
  if (key == "stdlib" && f.size() == 3) {
    ev.labels["stdlib"] = std::string(f[1]);
    ev.labels["stdlib_version"] = std::string(f[2]);
  } else if (key == "compiler" && f.size() >= 2) {
    ev.labels["compiler"] = line.substr(line.find(' ') + 1);
  } else if (key == "workload" && f.size() == 2) {
    ev.workload = std::string(f[1]);
  } else if (key == "seed" && f.size() == 2 && ParseU64(f[1], &a)) {
    ev.labels["seed"] = std::string(f[1]);
  } else if (key == "param" && f.size() == 3) {
    ev.params.push_back(absl::StrCat(f[1], "=", f[2]));
  } else if (key == "C" && f.size() == 2 && ParseU64(f[1], &a) && a > 0 && a < (1u << 31)) {
    return AddArenaCreate(a, st);
  } else if (key == "D" && f.size() == 2 && ParseU64(f[1], &a)) {
    return AddArenaDestroy(a, st);
  } else if (key == "A" && f.size() == 6 && ParseU64(f[1], &a, 16) && ParseU64(f[2], &b) &&
             ParseU64(f[3], &c) && ParseU64(f[4], &d) && ParseU64(f[5], &e)) {
    return AddAlloc({f[1], a, b, c, d, e}, st);
  } else if (key == "F" && f.size() == 3 && ParseU64(f[1], &a, 16) && ParseU64(f[2], &b)) {
    return AddFree(f[1], a, b, st);
  } else if (key == "end" && f.size() == 2 && ParseU64(f[1], &a)) {
    return AddEnd(a, st);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("cannot read \"", line.substr(0, 80), "\""));
  }
  return absl::OkStatus();
}

// The whole file at `path`, every line checked; an error names the file and
// the line.
absl::StatusOr<Events> ReadEvents(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  ReadState st;
  std::string line;
  uint64_t number = 0;
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", what));
  };
  while (std::getline(in, line)) {
    ++number;
    if (st.ended) return error("text after the end line");
    if (number == 1) {
      if (line != "alloctrace-events 1") {
        return error("not an alloctrace event file (expected \"alloctrace-events 1\")");
      }
      continue;
    }
    if (absl::Status s = ReadLine(line, &st); !s.ok()) return error(s.message());
  }
  if (number == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  if (!st.ended) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ends after line ", number, " without an end line: the event file was cut short"));
  }
  if (st.ev.workload.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no workload line"));
  }
  if (st.ev.labels.count("stdlib") == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no stdlib line"));
  }
  return std::move(st.ev);
}

// The recording's options: the trace at `out`, the workload, and as labels
// the event file's own and the workload's parameters.
RecordingOptions OptionsFor(const Events& events, const WorkloadParams& params,
                            const std::string& out) {
  RecordingOptions options;
  options.path = out;
  options.workload = events.workload;
  options.program = absl::StrCat("alloctrace stdlib_events (", events.labels.at("stdlib"), ")");
  options.labels = events.labels;
  for (size_t i = 0; i < params.specs().size(); ++i) {
    options.labels[std::string(params.specs()[i].name)] = absl::StrCat(params.values()[i]);
  }
  return options;
}

// Records `ops` in order through `recorder`, which has been started; the event
// file's arena numbers become the recorder's.
void RecordOps(const std::vector<Op>& ops, Recorder* recorder) {
  std::vector<uint32_t> arena_ids(1, 0);  // event file's arena -> recorder's
  for (const Op& op : ops) {
    const void* p = reinterpret_cast<const void*>(static_cast<uintptr_t>(op.address));
    switch (op.kind) {
      case 'C':
        if (op.arena >= arena_ids.size()) arena_ids.resize(op.arena + 1, 0);
        arena_ids[op.arena] = recorder->CreateArena();
        break;
      case 'D':
        recorder->DestroyArena(arena_ids[op.arena]);
        break;
      case 'A':
        recorder->RecordAlloc(p, arena_ids[op.arena], static_cast<uint32_t>(op.elem_size), op.count,
                              op.align_log2);
        break;
      default:
        recorder->RecordFree(p, arena_ids[op.arena]);
        break;
    }
  }
}

int Run(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "turns stdlib_events output into a trace.\nusage: events_to_trace --in=EVENTS --out=TRACE");
  const std::vector<char*> positional = ParseCommandLineOrExitUsage(argc, argv, "events_to_trace");
  if (positional.size() > 1 || absl::GetFlag(FLAGS_in).empty() ||
      absl::GetFlag(FLAGS_out).empty()) {
    std::fprintf(stderr, "events_to_trace: usage: events_to_trace --in=EVENTS --out=TRACE\n");
    return 2;
  }
  const std::string in = ResolveUserPath(absl::GetFlag(FLAGS_in));
  const std::string out = ResolveUserPath(absl::GetFlag(FLAGS_out));
  // The trace must not land on the events it is made from.
  if (absl::Status s = CheckOutputFile(out, {in}); !s.ok()) {
    std::fprintf(stderr, "events_to_trace: %s\n", std::string(s.message()).c_str());
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  absl::StatusOr<Events> events = ReadEvents(in);
  if (!events.ok()) {
    std::fprintf(stderr, "events_to_trace: %s\n", std::string(events.status().message()).c_str());
    return 1;
  }
  const WorkloadInfo* info = FindWorkload(events->workload);
  if (info == nullptr) {
    std::fprintf(stderr, "events_to_trace: %s: unknown workload '%s'\n", in.c_str(),
                 events->workload.c_str());
    return 1;
  }
  absl::StatusOr<WorkloadParams> params = info->ParseParams(events->params);
  if (!params.ok()) {
    std::fprintf(stderr, "events_to_trace: %s: %s\n", in.c_str(),
                 std::string(params.status().message()).c_str());
    return 1;
  }
  Recorder& recorder = Recorder::Global();
  if (absl::Status s = recorder.Start(OptionsFor(*events, *params, out)); !s.ok()) {
    std::fprintf(stderr, "events_to_trace: cannot record to %s: %s\n", out.c_str(),
                 std::string(s.message()).c_str());
    return 1;
  }
  RecordOps(events->ops, &recorder);
  RecordingStats stats;
  if (absl::Status s = recorder.Stop(&stats); !s.ok()) {
    std::fprintf(stderr, "events_to_trace: writing %s failed: %s\n", out.c_str(),
                 std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%s (%s): %llu events, %llu bytes -> %s\n", events->workload.c_str(),
              events->labels["stdlib"].c_str(), static_cast<unsigned long long>(stats.events),
              static_cast<unsigned long long>(stats.bytes), out.c_str());
  return 0;
}

}  // namespace
}  // namespace alloctrace::workloads

int main(int argc, char** argv) { return alloctrace::workloads::Run(argc, argv); }
