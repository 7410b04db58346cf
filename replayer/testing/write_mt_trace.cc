// write_mt_trace: writes synthetic multi-threaded traces, as a concurrent
// program's recorder would have ordered its events, for the per-thread
// replay's tests and measurements until `record` has multi-threaded
// workloads of its own.
//
//   write_mt_trace --kind=pc --threads=4 --ops=200000 --out=/tmp/pc.trace
//
// Kinds:
//   pc       producer/consumer: the first half of the threads allocate
//            messages (16 to 512 bytes) into a bounded queue, the others
//            free them; every message is freed by another thread.
//   private  every thread allocates and frees its own objects (a sliding
//            window of live ones): nothing passes between threads.
// --arenas=heap puts every object in arena 0 (a whole-program capture);
// --arenas=thread gives each thread an arena of its own (a container per
// thread; with pc the consumer frees into the producer's arena).
// The global order interleaves the threads at random (--seed), one event at
// a time, as a recorder's clock would on a machine with as many cores.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_writer.h"

ABSL_FLAG(std::string, kind, "pc", "pc or private");
ABSL_FLAG(uint32_t, threads, 2, "traced threads (at least 2 for pc)");
ABSL_FLAG(uint64_t, ops, 100000, "memory events to write, about");
ABSL_FLAG(std::string, arenas, "heap", "heap (arena 0) or thread (an arena per thread)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the interleaving and the sizes");
ABSL_FLAG(std::string, out, "", "the trace to write");

namespace alloctrace {
namespace {

int Main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string kind = absl::GetFlag(FLAGS_kind);
  const uint32_t threads = absl::GetFlag(FLAGS_threads);
  const uint64_t ops = absl::GetFlag(FLAGS_ops);
  const bool per_thread_arena = absl::GetFlag(FLAGS_arenas) == "thread";
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty() || threads < 1 || (kind == "pc" && threads < 2) ||
      (kind != "pc" && kind != "private")) {
    std::fprintf(stderr, "usage: write_mt_trace --kind=pc|private --threads=N --ops=N --out=F\n");
    return 2;
  }
  proto::Header header;
  header.set_workload(absl::StrCat("synthetic_", kind));
  auto writer = TraceWriter::Create(out, header);
  if (!writer.ok()) {
    std::fprintf(stderr, "write_mt_trace: %s\n", std::string(writer.status().message()).c_str());
    return 1;
  }
  TraceWriter& w = **writer;
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  auto arena_of = [&](uint32_t t) { return per_thread_arena ? t + 1 : 0; };
  if (per_thread_arena) {
    for (uint32_t t = 0; t < threads; ++t) w.ArenaCreate(t, arena_of(t));
  }
  uint64_t next_address = 0x100000;
  auto shape = [&]() { return Shape{1, 16 + rng() % 497, 8}; };
  struct Message {
    uint64_t address;
    uint32_t arena;
  };
  uint64_t written = 0;
  if (kind == "pc") {
    const uint32_t producers = threads / 2;
    std::deque<Message> queue;
    constexpr size_t kQueue = 256;
    while (written < ops) {
      const uint32_t t = static_cast<uint32_t>(rng() % threads);
      if (t < producers && queue.size() < kQueue) {
        next_address += 1024;
        w.Alloc(t, arena_of(t), next_address, shape());
        queue.push_back({next_address, arena_of(t)});
        ++written;
      } else if (t >= producers && !queue.empty()) {
        w.Free(t, queue.front().arena, queue.front().address);
        queue.pop_front();
        ++written;
      }
    }
    while (!queue.empty()) {
      w.Free(producers, queue.front().arena, queue.front().address);
      queue.pop_front();
    }
  } else {
    std::vector<std::deque<uint64_t>> live(threads);
    constexpr size_t kWindow = 64;
    while (written < ops) {
      const uint32_t t = static_cast<uint32_t>(rng() % threads);
      if (live[t].size() < kWindow && (live[t].empty() || rng() % 2 == 0)) {
        next_address += 1024;
        w.Alloc(t, arena_of(t), next_address, shape());
        live[t].push_back(next_address);
      } else {
        const size_t k = rng() % live[t].size();
        w.Free(t, arena_of(t), live[t][k]);
        live[t].erase(live[t].begin() + static_cast<std::ptrdiff_t>(k));
      }
      ++written;
    }
    for (uint32_t t = 0; t < threads; ++t) {
      for (uint64_t a : live[t]) w.Free(t, arena_of(t), a);
    }
  }
  if (per_thread_arena) {
    for (uint32_t t = 0; t < threads; ++t) w.ArenaDestroy(t, arena_of(t));
  }
  if (absl::Status s = w.Finish(); !s.ok()) {
    std::fprintf(stderr, "write_mt_trace: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) { return alloctrace::Main(argc, argv); }
