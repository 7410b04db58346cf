// graph_search: shortest paths over a random weighted graph, written as a
// user would write them, with every container on the allocator named by the
// alias below.
//
//   graph_search [vertices [searches]]     defaults: 50000 and 10
//
// The graph: `vertices` vertices, each with 4 edges to random others
// (weights 1 to 100), as a std::map from vertex to a std::set of (weight,
// neighbour) pairs; each vertex's set default-constructs its allocator (an
// arena of its own with TraceAllocator). Then `searches` runs of Dijkstra's
// algorithm from random sources (a std::set as the priority queue, a
// std::map of distances), and between searches 1% of the edges are removed
// and as many added, so the adjacency sets churn. Prints the sum of the
// distances found. The defaults take about 0.9 s of CPU with std::allocator
// (measured on this project's loaded 2-core machine); raise `searches` for
// longer runs.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits. To run on
// another allocator, change only the alias (a default-constructible std
// allocator template; the program is single-threaded).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the alias
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the alias

// The one line to change to run on another allocator, e.g.
//   using Alloc = std::allocator<T>;
//   using Alloc = alloctrace::pool::SlabAllocator<T>;
template <class T>
using Alloc = alloctrace::TraceAllocator<T>;

namespace {

using Edge = std::pair<int, int>;  // (weight, neighbour)
using Edges = std::set<Edge, std::less<Edge>, Alloc<Edge>>;
using Graph = std::map<int, Edges, std::less<int>, Alloc<std::pair<const int, Edges>>>;
using Distances = std::map<int, int64_t, std::less<int>, Alloc<std::pair<const int, int64_t>>>;

constexpr int kEdgesPerVertex = 4;

void AddRandomEdge(Graph& graph, int vertices, std::mt19937& rng) {
  const int from = static_cast<int>(rng() % vertices);
  const int to = static_cast<int>(rng() % vertices);
  if (from != to) graph[from].insert({1 + static_cast<int>(rng() % 100), to});
}

void RemoveRandomEdge(Graph& graph, int vertices, std::mt19937& rng) {
  auto it = graph.find(static_cast<int>(rng() % vertices));
  if (it == graph.end() || it->second.empty()) return;
  it->second.erase(it->second.begin());
}

// Dijkstra from `source`; returns the sum of the distances to every vertex
// reached.
int64_t ShortestPaths(const Graph& graph, int source) {
  Distances dist;
  std::set<std::pair<int64_t, int>, std::less<std::pair<int64_t, int>>,
           Alloc<std::pair<int64_t, int>>>
      frontier;
  dist[source] = 0;
  frontier.insert({0, source});
  while (!frontier.empty()) {
    const auto [d, v] = *frontier.begin();
    frontier.erase(frontier.begin());
    auto edges = graph.find(v);
    if (edges == graph.end()) continue;
    for (const auto& [weight, next] : edges->second) {
      const int64_t nd = d + weight;
      auto [it, inserted] = dist.try_emplace(next, nd);
      if (!inserted) {
        if (it->second <= nd) continue;
        frontier.erase({it->second, next});
        it->second = nd;
      }
      frontier.insert({nd, next});
    }
  }
  int64_t sum = 0;
  for (const auto& [v, d] : dist) sum += d;
  return sum;
}

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 2) {
    std::fprintf(stderr, "usage: graph_search [vertices [searches]] (integers >= 2)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const int vertices = static_cast<int>(Arg(argc, argv, 1, 50000));
  const long searches = Arg(argc, argv, 2, 10);
  std::mt19937 rng(7);
  int64_t total = 0;
  size_t edges = 0;
  {
    Graph graph;
    for (long i = 0; i < static_cast<long>(vertices) * kEdgesPerVertex; ++i) {
      AddRandomEdge(graph, vertices, rng);
    }
    const int churn = vertices * kEdgesPerVertex / 100 + 1;
    for (long s = 0; s < searches; ++s) {
      total += ShortestPaths(graph, static_cast<int>(rng() % vertices));
      for (int i = 0; i < churn; ++i) {
        RemoveRandomEdge(graph, vertices, rng);
        AddRandomEdge(graph, vertices, rng);
      }
    }
    for (const auto& [v, out] : graph) edges += out.size();
  }
  std::printf("graph_search: %d vertices, %zu edges at the end, %ld searches, distance sum %lld\n",
              vertices, edges, searches, static_cast<long long>(total));
  return 0;
}
