// search_service: a multi-threaded search service, written as a user would
// write one, with one allocator alias per container role below, so that
// each role can be given its own allocator.
//
//   search_service [threads [documents [window]]]
//       defaults: 4, 30000 and 2048
//
// Each worker thread serves its own shard: it indexes `documents`
// documents of 16 terms each (drawn from its own deterministic random
// source, a skewed vocabulary of 8192 terms) into an inverted index (a
// std::map from term to a std::list of document ids, role Postings) that
// keeps the `window` newest documents: past them, the oldest document's
// postings are removed (and a term left with none is erased), so every
// document costs about 16 list nodes made and 16 freed. After each
// document the worker answers 4 queries of two terms (the documents that
// hold both, by walking the two postings lists) through its query cache
// (a std::map from query to answer and a std::list of the queries from
// least to most recently used, one arena, role QueryCache): a hit younger
// than window / 4 documents is served from the cache, an older one is
// recomputed in place, a miss is computed and cached, and past 512
// cached queries the least recently used is dropped. The worker keeps its
// 1024 best answers (a std::map by hits, then the later query, role
// Results): a better answer is inserted and the worst dropped. Postings and
// QueryCache carry most of the memory ops (about 70% and 30% at the
// defaults; SharedStats and Results about 1% together).
//
// One query in 16 also adds its hits plus one to its first term's bucket in
// the statistics shared by all workers (a std::map of 1024 term buckets to
// counts, role SharedStats), the way services keep a critical section
// short: the node is made OUTSIDE the lock (in a per-worker staging map
// that shares the statistics' allocator) and spliced in under a
// std::mutex, so the statistics' allocator is called by several threads at
// once.
//
// Each worker's Results map is handed to the main thread: the worker's
// thread ends, the main thread joins it, then walks the worker's answers
// into its own merged Results map (the 1024 best of all workers) and
// destroys the worker's map. So each Results map is used by its worker,
// then by the main thread after join(), never by two threads at once.
// Prints the merged answers and a checksum that does not depend on how the
// threads interleave (each worker's work is deterministic, the shared
// counts are sums, and answers are ranked by hits, then query id).
//
// The roles want different allocators: Postings and QueryCache a
// single-threaded pool per container (slab/st/stack); Results the same
// (join() orders the worker's last use before the main thread's first, so
// a pool without a lock is safe for it: `inspect` counts its arenas as
// handed off, not shared); SharedStats a thread-safe pool or std. A
// single-threaded policy is unsafe for SharedStats, and a single-threaded
// `single` policy (one pool for the process) unsafe for every role here,
// since the workers would share it. The class names include the namespace:
//   ALLOCTRACE_POLICY='role::Postings=slab/st/stack;role::QueryCache=slab/st/stack;role::Results=slab/st/stack;role::SharedStats=slab/mt/stack;*=std'
// The defaults take about 1.3 s of CPU under ALLOCTRACE_POLICY=std
// (measured on this project's loaded 2-core machine); raise `documents`
// for longer runs.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits; the trace's
// class table names the four roles.
//
// To adopt a verdict, change the alias of that role only. Each must be a
// default-constructible std allocator template; SharedStats's must be safe
// to call from several threads at once.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the aliases
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the aliases

// The roles (declared only: they name the classes in the trace and in
// ALLOCTRACE_POLICY, with the namespace: "role::Postings").
namespace role {
struct Postings;
struct QueryCache;
struct Results;
struct SharedStats;
}  // namespace role

// The lines to change to adopt a per-role verdict, e.g.
//   template <class T> using PostingsAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::SingleThreaded, alloctrace::pool::HoldingStack>;
//   template <class T> using SharedStatsAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::MultiThreaded, alloctrace::pool::HoldingStack>;
#ifdef ALLOCTRACE_ALIASES
// The lines a search in the program proves, pasted by its build
// (replayer --shipped_build; tools/shipped_build.sh passes them as
// -DALLOCTRACE_ALIASES=...): the build a user would ship.
ALLOCTRACE_ALIASES
#else
template <class T>
using PostingsAlloc = alloctrace::TraceAllocator<T, role::Postings>;
template <class T>
using QueryCacheAlloc = alloctrace::TraceAllocator<T, role::QueryCache>;
template <class T>
using ResultsAlloc = alloctrace::TraceAllocator<T, role::Results>;
template <class T>
using SharedStatsAlloc = alloctrace::TraceAllocator<T, role::SharedStats>;
#endif

namespace {

constexpr int kTermsPerDocument = 16;
constexpr uint32_t kVocabulary = 8192;
constexpr int kQueriesPerDocument = 4;
constexpr size_t kCachedQueries = 512;
constexpr size_t kResultsKept = 1024;
constexpr uint64_t kStatsEvery = 16;
constexpr uint32_t kStatsBuckets = 1024;

// Postings: the index, one arena (the lists are made with the index's
// allocator).
using PostingList = std::list<uint32_t, PostingsAlloc<uint32_t>>;
using Index = std::map<uint32_t, PostingList, std::less<uint32_t>,
                       PostingsAlloc<std::pair<const uint32_t, PostingList>>>;

// QueryCache: the answers and their recency, one arena.
using Recency = std::list<uint64_t, QueryCacheAlloc<uint64_t>>;
struct Answer {
  uint32_t hits;
  uint32_t newest;       // the newest document holding both terms
  uint64_t computed_at;  // documents indexed when it was computed
  Recency::iterator use;
};
using Cache = std::map<uint64_t, Answer, std::less<uint64_t>,
                       QueryCacheAlloc<std::pair<const uint64_t, Answer>>>;

// Results: answers ranked by (score, query id), the worst first.
struct Result {
  uint32_t term_a, term_b;
  uint32_t hits;
  uint32_t newest;
};
using Rank = std::pair<uint64_t, uint64_t>;  // score, query id
using Results =
    std::map<Rank, Result, std::less<Rank>, ResultsAlloc<std::pair<const Rank, Result>>>;

using StatsMap = std::map<uint32_t, uint64_t, std::less<uint32_t>,
                          SharedStatsAlloc<std::pair<const uint32_t, uint64_t>>>;

struct SharedStats {
  std::mutex mu;
  StatsMap counts;
};

// What a worker hands to the main thread once its thread has ended.
struct WorkerOutput {
  uint64_t checksum = 0;
  uint64_t cache_hits = 0;
  std::optional<Results> results;
};

// A term of the skewed vocabulary, from 64 random bits: low terms are
// frequent (about ln(kVocabulary / t) / kVocabulary), as words are in text.
uint32_t SkewedTerm(uint64_t r) {
  const uint32_t bound = static_cast<uint32_t>(r % kVocabulary) + 1;
  return static_cast<uint32_t>((r >> 32) % bound);
}

// Splitmix64's finalizer: fixed, scattered bits for a number.
uint64_t Mix(uint64_t x) {
  x = (x + 1) * 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A query: one of kVocabulary numbered queries, drawn with the terms'
// skew (low numbers are frequent, so a cache of a few hundred has hits),
// whose two terms follow the documents' distribution, the same for every
// worker.
std::pair<uint32_t, uint32_t> DrawQuery(std::mt19937_64& rng) {
  const uint64_t h = Mix(SkewedTerm(rng()));
  return {SkewedTerm(h), SkewedTerm(Mix(h))};
}

// Keeps `result` if it is among the kResultsKept best of `results`.
void Keep(Results& results, const Rank& rank, const Result& result) {
  if (results.size() >= kResultsKept && !(results.begin()->first < rank)) return;
  results.emplace(rank, result);
  if (results.size() > kResultsKept) results.erase(results.begin());
}

// Counts the documents holding both terms, by walking their postings lists
// (both in ascending document order).
Answer Intersect(const Index& index, uint32_t a, uint32_t b, uint64_t now) {
  Answer answer{0, 0, now, {}};
  const auto ia = index.find(a);
  const auto ib = index.find(b);
  if (ia == index.end() || ib == index.end()) return answer;
  auto pa = ia->second.begin(), pb = ib->second.begin();
  while (pa != ia->second.end() && pb != ib->second.end()) {
    if (*pa < *pb) {
      ++pa;
    } else if (*pb < *pa) {
      ++pb;
    } else {
      ++answer.hits;
      answer.newest = *pa;
      ++pa;
      ++pb;
    }
  }
  return answer;
}

// Retires document `oldest`, the front of each of its terms' lists (a term
// it holds twice was popped at its first occurrence); its terms are drawn
// again from `retiring`, which runs `window` documents behind.
void Retire(Index& index, std::mt19937_64& retiring, uint32_t oldest) {
  for (int k = 0; k < kTermsPerDocument; ++k) {
    auto it = index.find(SkewedTerm(retiring()));
    if (it == index.end() || it->second.front() != oldest) continue;
    it->second.pop_front();
    if (it->second.empty()) index.erase(it);
  }
}

// Adds `delta` to the shared statistics' `bucket`: the node made in
// `staging` outside the lock, spliced in under it.
void AddToStats(SharedStats* stats, StatsMap& staging, uint32_t bucket, uint64_t delta) {
  staging.emplace(bucket, delta);
  {
    std::lock_guard<std::mutex> lock(stats->mu);
    // Moves the node in if the bucket is new; else it stays in staging.
    // (Not extract + insert(node): libstdc++ 12's insert of a node handle
    // never destroys the handle's copy of the allocator.)
    stats->counts.merge(staging);
    if (!staging.empty()) stats->counts.find(bucket)->second += delta;
  }
  staging.clear();  // a node not moved in is freed here, outside the lock
}

// One worker's run over its shard; fills `out`.
void Work(int worker, long documents, uint32_t window, SharedStats* stats, WorkerOutput* out) {
  const uint64_t seed = 2000 + static_cast<uint64_t>(worker);
  std::mt19937_64 terms(seed);     // the documents' terms
  std::mt19937_64 retiring(seed);  // the same, `window` documents behind
  std::mt19937_64 queries(~seed);  // the queries' numbers
  Index index;
  const PostingsAlloc<uint32_t> postings_alloc(index.get_allocator());
  Cache cache;
  Recency recency(cache.get_allocator());
  Results results;
  // Statistics nodes are made here, outside the lock, with the shared
  // map's allocator (a copy: the same arena, the same pool).
  StatsMap staging(stats->counts.get_allocator());
  uint64_t checksum = 0, cache_hits = 0, query = 0;

  for (uint32_t doc = 0; doc < static_cast<uint32_t>(documents); ++doc) {
    if (doc >= window) Retire(index, retiring, doc - window);
    for (int k = 0; k < kTermsPerDocument; ++k) {
      PostingList& postings = index.try_emplace(SkewedTerm(terms()), postings_alloc).first->second;
      if (postings.empty() || postings.back() != doc) postings.push_back(doc);
    }

    for (int q = 0; q < kQueriesPerDocument; ++q, ++query) {
      const auto [a, b] = DrawQuery(queries);
      const uint64_t key = (uint64_t{std::min(a, b)} << 32) | std::max(a, b);
      Answer* answer;
      auto hit = cache.find(key);
      if (hit != cache.end()) {
        answer = &hit->second;
        recency.splice(recency.end(), recency, answer->use);
        if (doc - answer->computed_at < window / 4) {
          ++cache_hits;
        } else {
          const Recency::iterator use = answer->use;
          *answer = Intersect(index, a, b, doc);
          answer->use = use;
        }
      } else {
        recency.push_back(key);
        answer = &cache.emplace(key, Intersect(index, a, b, doc)).first->second;
        answer->use = std::prev(recency.end());
        if (cache.size() > kCachedQueries) {
          cache.erase(recency.front());
          recency.pop_front();
        }
      }
      checksum += answer->hits * 31 + answer->newest;
      if (answer->hits > 0) {
        const uint64_t id = (static_cast<uint64_t>(worker) << 40) | query;
        Keep(results, {answer->hits, id}, Result{a, b, answer->hits, answer->newest});
      }

      if (query % kStatsEvery == 0) AddToStats(stats, staging, a % kStatsBuckets, answer->hits + 1);
    }
  }
  for (const auto& [term, postings] : index) checksum += term * postings.size();
  out->checksum = checksum;
  out->cache_hits = cache_hits;
  out->results.emplace(std::move(results));
}

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "usage: search_service [threads [documents [window]]] (integers >= 1)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long threads = Arg(argc, argv, 1, 4);
  const long documents = Arg(argc, argv, 2, 30000);
  const long window = Arg(argc, argv, 3, 2048);
  if (threads > 256 || documents > (1L << 31) || window > (1L << 20)) {
    std::fprintf(stderr,
                 "search_service: at most 256 threads, 2^31 documents and a window of 2^20\n");
    return 2;
  }
  uint64_t checksum = 0, cache_hits = 0;
  size_t merged_count = 0;
  {
    SharedStats stats;
    std::vector<WorkerOutput> outputs(static_cast<size_t>(threads));
    std::vector<std::thread> workers;
    for (long t = 0; t < threads; ++t) {
      workers.emplace_back(Work, static_cast<int>(t), documents, static_cast<uint32_t>(window),
                           &stats, &outputs[static_cast<size_t>(t)]);
    }
    Results merged;
    for (long t = 0; t < threads; ++t) {
      workers[static_cast<size_t>(t)].join();
      // The worker's thread has ended: its Results are the main thread's
      // now, walked into the merged answers, then destroyed.
      WorkerOutput& out = outputs[static_cast<size_t>(t)];
      checksum += out.checksum;
      cache_hits += out.cache_hits;
      for (const auto& [rank, result] : *out.results) Keep(merged, rank, result);
      out.results.reset();
    }
    // The shared counts are sums, whatever the interleaving; the merged
    // answers are the best of all workers' by (score, query id).
    for (const auto& [bucket, count] : stats.counts) checksum += bucket * count;
    for (const auto& [rank, result] : merged) {
      checksum += rank.first * 7 + (rank.second & 0xffffff) + result.term_a * 3 + result.term_b +
                  result.newest;
    }
    merged_count = merged.size();
  }
  std::printf(
      "search_service: %ld threads x %ld documents, window %ld: %llu cache hits, %zu answers "
      "merged, checksum %llu\n",
      threads, documents, window, static_cast<unsigned long long>(cache_hits), merged_count,
      static_cast<unsigned long long>(checksum));
  return 0;
}
