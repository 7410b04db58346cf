// pipeline: a two-stage multi-threaded pipeline, a parser thread handing
// records to an aggregator thread, written as a user would write one, with
// one allocator alias per container role below, so that each role can be
// given its own allocator.
//
//   pipeline [items [working_set]]     defaults: 100000 and 4096
//
// The parser (thread A) reads `items` lines of 24 words each (drawn from
// its own deterministic random source, 8 x working_set distinct words) and
// interns every word in its symbol table (a std::map from word to symbol
// id, role ParseIndex): a word not in the table gets the next symbol id,
// and past working_set words one drawn at random is dropped (a cache's
// random replacement), so most words cost an insert and an erase. Each
// line, its words as symbol ids, goes to the aggregator (thread B) as one
// record through the hand-off queue (a std::list of records under a
// std::mutex and two condition variables, role Handoff): the parser
// appends to a local list that shares the queue's allocator and splices a
// batch of 64 in under the lock (at most 4096 records wait); the
// aggregator splices out all that wait and frees them once read, so each
// record's node is allocated by A and freed by B. The aggregator counts
// the symbols it reads in a std::map from symbol id to count (role Totals)
// that keeps the working_set newest symbols: past them the oldest (the
// smallest id, the map's first) is dropped. Records keep their order
// through the queue, so the checksum printed does not depend on how the
// threads interleave.
//
// The roles want different allocators. ParseIndex and Totals are each
// reached by one thread only and carry nearly all the memory ops (40-byte
// map nodes, constant insert and erase), so each may use a single-threaded
// pool, even one pool for the whole process (`single`), as long as no such
// pool is reached by both threads: slab/st/single for one,
// small_node/st/single (another pool type, so another pool) for the other.
// Handoff's nodes are allocated by one thread and freed by the other, so it
// needs a thread-safe allocator (or std). So no single choice for the whole
// program may be single-threaded (Handoff is shared, and a `single` st pool
// for all would be reached by both threads); a mix may:
//   ALLOCTRACE_POLICY='ParseIndex=slab/st/single;Totals=small_node/st/single;Handoff=slab/mt/stack;*=std'
// A record per line, not per word, keeps the hand-off to about 2% of the
// memory ops: each record freed on the other thread is a point where a
// per-thread replay must order the two threads, and every such wait blurs
// the per-thread figures the per-container search compares.
// The defaults take about 0.9 s of CPU under ALLOCTRACE_POLICY=std
// (measured on this project's loaded 2-core machine); raise `items` for
// longer runs.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits; the trace's
// class table names the three roles.
//
// To adopt a verdict, change the alias of that role only. Each must be a
// default-constructible std allocator template; Handoff's must be safe to
// call from several threads at once.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the aliases
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the aliases

// The roles (declared only: they name the classes in the trace and in
// ALLOCTRACE_POLICY).
struct ParseIndex;
struct Totals;
struct Handoff;

// The lines to change to adopt a per-role verdict, e.g.
//   template <class T> using ParseIndexAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::SingleThreaded, alloctrace::pool::HoldingSingleton>;
//   template <class T> using TotalsAlloc = alloctrace::pool::SmallNodeAllocator<
//       T, alloctrace::pool::SingleThreaded, alloctrace::pool::HoldingSingleton>;
//   template <class T> using HandoffAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::MultiThreaded, alloctrace::pool::HoldingStack>;
#ifdef ALLOCTRACE_ALIASES
// The lines a search in the program proves, pasted by its build
// (replayer --shipped_build; tools/shipped_build.sh passes them as
// -DALLOCTRACE_ALIASES=...): the build a user would ship.
ALLOCTRACE_ALIASES
#else
template <class T>
using ParseIndexAlloc = alloctrace::TraceAllocator<T, ParseIndex>;
template <class T>
using TotalsAlloc = alloctrace::TraceAllocator<T, Totals>;
template <class T>
using HandoffAlloc = alloctrace::TraceAllocator<T, Handoff>;
#endif

namespace {

constexpr int kWords = 24;            // per record
constexpr size_t kBatch = 64;         // records spliced into the queue at once
constexpr size_t kMaxWaiting = 4096;  // records in the queue before the parser waits

struct Record {
  uint64_t sequence;
  uint32_t symbols[kWords];
};

using SymbolTable = std::map<uint32_t, uint32_t, std::less<uint32_t>,
                             ParseIndexAlloc<std::pair<const uint32_t, uint32_t>>>;
using Records = std::list<Record, HandoffAlloc<Record>>;
using Counts = std::map<uint32_t, uint32_t, std::less<uint32_t>,
                        TotalsAlloc<std::pair<const uint32_t, uint32_t>>>;

struct Queue {
  std::mutex mu;
  std::condition_variable filled;   // records wait, or the parser is done
  std::condition_variable drained;  // the aggregator took the waiting records
  Records records;
  size_t waiting = 0;
  bool done = false;
};

// Hands `batch` (sharing the queue's allocator) to the aggregator, waiting
// while the queue is full.
void Send(Queue* queue, Records& batch, size_t n, bool last) {
  std::unique_lock<std::mutex> lock(queue->mu);
  queue->drained.wait(lock, [&] { return queue->waiting < kMaxWaiting; });
  queue->records.splice(queue->records.end(), batch);
  queue->waiting += n;
  queue->done = last;
  queue->filled.notify_one();
}

// Thread A: interns the words of `items` lines and sends each on as a record.
// Returns the parser's checksum; `repeats` counts the words found interned.
uint64_t Parse(long items, uint32_t working_set, Queue* queue, uint64_t* repeats) {
  std::mt19937_64 rng(7);
  const uint32_t word_space = 8 * working_set;
  SymbolTable symbols;
  uint32_t next_symbol = 0;
  uint64_t checksum = 0;
  // Records are made here, outside the lock, with the queue's allocator (a
  // copy: the same arena, the same pool), so splicing moves nodes only.
  Records batch(queue->records.get_allocator());
  size_t in_batch = 0;
  for (long i = 0; i < items; ++i) {
    Record record{static_cast<uint64_t>(i), {}};
    for (int w = 0; w < kWords; ++w) {
      const uint32_t word = static_cast<uint32_t>(rng() % word_space);
      auto [it, fresh] = symbols.try_emplace(word, next_symbol);
      record.symbols[w] = it->second;
      checksum += word ^ it->second;
      if (!fresh) {
        ++*repeats;
        continue;
      }
      ++next_symbol;
      if (symbols.size() > working_set) {
        // The first word at or after a random one, the table's first past
        // its end; never the word just interned.
        auto victim = symbols.lower_bound(static_cast<uint32_t>(rng() % word_space));
        if (victim == symbols.end()) victim = symbols.begin();
        if (victim == it && ++victim == symbols.end()) victim = symbols.begin();
        symbols.erase(victim);
      }
    }
    batch.push_back(record);
    if (++in_batch == kBatch) {
      Send(queue, batch, in_batch, /*last=*/false);
      in_batch = 0;
    }
  }
  Send(queue, batch, in_batch, /*last=*/true);
  for (const auto& [word, symbol] : symbols) checksum += word * 3 + symbol;
  return checksum;
}

// Thread B: counts the symbols of the records, in the order the parser
// sent them, keeping the working_set newest. Returns the aggregator's
// checksum; `distinct` is the number of symbols counted at the end.
uint64_t Aggregate(uint32_t working_set, Queue* queue, size_t* distinct) {
  Counts counts;
  uint64_t checksum = 0;
  Records received(queue->records.get_allocator());
  for (;;) {
    bool done;
    {
      std::unique_lock<std::mutex> lock(queue->mu);
      queue->filled.wait(lock, [&] { return queue->waiting > 0 || queue->done; });
      received.splice(received.end(), queue->records);
      queue->waiting = 0;
      done = queue->done;
      queue->drained.notify_one();
    }
    for (const Record& record : received) {
      for (uint32_t symbol : record.symbols) {
        checksum += ++counts[symbol] * (record.sequence & 0xff);
        if (counts.size() > working_set) {
          checksum += counts.begin()->first;
          counts.erase(counts.begin());
        }
      }
    }
    received.clear();  // the records' nodes, allocated by the parser, freed here
    if (done) break;
  }
  for (const auto& [symbol, count] : counts) checksum += symbol ^ count;
  *distinct = counts.size();
  return checksum;
}

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "usage: pipeline [items [working_set]] (integers >= 1)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long items = Arg(argc, argv, 1, 100000);
  const long working_set = Arg(argc, argv, 2, 4096);
  if (working_set > (1L << 24)) {
    std::fprintf(stderr, "pipeline: working_set at most %ld, not %ld\n", 1L << 24, working_set);
    return 2;
  }
  const uint32_t ws = static_cast<uint32_t>(working_set);
  uint64_t parsed = 0, aggregated = 0, repeats = 0;
  size_t distinct = 0;
  {
    Queue queue;
    std::thread parser([&] { parsed = Parse(items, ws, &queue, &repeats); });
    std::thread aggregator([&] { aggregated = Aggregate(ws, &queue, &distinct); });
    parser.join();
    aggregator.join();
  }
  std::printf(
      "pipeline: %ld items, working set %ld: %llu repeated words, %zu symbols counted, "
      "checksum %llu\n",
      items, working_set, static_cast<unsigned long long>(repeats), distinct,
      static_cast<unsigned long long>(parsed + aggregated));
  return 0;
}
