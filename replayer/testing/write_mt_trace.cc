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

// The trace being written and what its events are drawn from: the threads,
// the interleaving's and the sizes' random numbers, the next address.
struct Synthesis {
  TraceWriter* w;  // not owned
  uint32_t threads;
  bool per_thread_arena;
  std::mt19937_64 rng;
  uint64_t next_address = 0x100000;

  uint32_t ArenaOf(uint32_t t) const { return per_thread_arena ? t + 1 : 0; }
  // Allocates a new object (16 to 512 bytes) in thread t, 1 KiB past the
  // last one; returns its address.
  uint64_t Alloc(uint32_t t) {
    next_address += 1024;
    w->Alloc(t, ArenaOf(t), next_address, Shape{1, 16 + rng() % 497, 8});
    return next_address;
  }
};

// pc: the first half of the threads allocate messages into a bounded queue,
// the others free them, until `ops` events; then the first consumer frees
// what is still queued.
void WriteProducerConsumer(uint64_t ops, Synthesis* s) {
  struct Message {
    uint64_t address;
    uint32_t arena;
  };
  const uint32_t producers = s->threads / 2;
  std::deque<Message> queue;
  constexpr size_t kQueue = 256;
  uint64_t written = 0;
  while (written < ops) {
    const uint32_t t = static_cast<uint32_t>(s->rng() % s->threads);
    if (t < producers && queue.size() < kQueue) {
      queue.push_back({s->Alloc(t), s->ArenaOf(t)});
      ++written;
    } else if (t >= producers && !queue.empty()) {
      s->w->Free(t, queue.front().arena, queue.front().address);
      queue.pop_front();
      ++written;
    }
  }
  while (!queue.empty()) {
    s->w->Free(producers, queue.front().arena, queue.front().address);
    queue.pop_front();
  }
}

// private: every thread allocates and frees its own objects, a sliding
// window of at most 64 live, until `ops` events; then frees what it has left.
void WritePrivate(uint64_t ops, Synthesis* s) {
  std::vector<std::deque<uint64_t>> live(s->threads);
  constexpr size_t kWindow = 64;
  for (uint64_t written = 0; written < ops; ++written) {
    const uint32_t t = static_cast<uint32_t>(s->rng() % s->threads);
    if (live[t].size() < kWindow && (live[t].empty() || s->rng() % 2 == 0)) {
      live[t].push_back(s->Alloc(t));
    } else {
      const size_t k = s->rng() % live[t].size();
      s->w->Free(t, s->ArenaOf(t), live[t][k]);
      live[t].erase(live[t].begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  for (uint32_t t = 0; t < s->threads; ++t) {
    for (uint64_t a : live[t]) s->w->Free(t, s->ArenaOf(t), a);
  }
}

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
  Synthesis s{writer->get(), threads, per_thread_arena, std::mt19937_64(absl::GetFlag(FLAGS_seed))};
  if (per_thread_arena) {
    for (uint32_t t = 0; t < threads; ++t) s.w->ArenaCreate(t, s.ArenaOf(t));
  }
  if (kind == "pc") {
    WriteProducerConsumer(ops, &s);
  } else {
    WritePrivate(ops, &s);
  }
  if (per_thread_arena) {
    for (uint32_t t = 0; t < threads; ++t) s.w->ArenaDestroy(t, s.ArenaOf(t));
  }
  if (absl::Status status = s.w->Finish(); !status.ok()) {
    std::fprintf(stderr, "write_mt_trace: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) { return alloctrace::Main(argc, argv); }
