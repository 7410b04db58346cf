// catalog: a product catalog built once and then only read, and shopping
// sessions that come and go, written as a user would write them, with one
// allocator alias per container role below, so that each role can be given
// its own allocator.
//
//   catalog [products [lookups]]     defaults: 200000 and 2000000
//
// The catalog (a std::map from product id to price and stock, role
// Catalog) is built at start with `products` products of scattered ids and
// never changed again: every later access is a lookup. The session (a
// std::set of product ids, role Session) is the cart of the current
// shopper: each lookup that finds a product adds it to the cart, and when
// the cart reaches its shopper's size (4 to 35 lines) it is checked out and
// emptied, so its nodes live for a few operations each. Half the lookups
// miss. Prints the number of checkouts and a checksum.
//
// The roles want different allocators: the catalog, built once and freed
// only at exit, anything that allocates fast and keeps memory (a pool that
// never frees will do); the session, constant insert and erase, a free
// list per container:
//   ALLOCTRACE_POLICY='Catalog=slab/st/stack;Session=slab/st/stack;*=std'
// The defaults take about 1 s of CPU under ALLOCTRACE_POLICY=std (measured
// on this project's loaded 2-core machine); raise `lookups` for longer
// runs. Single-threaded.
//
// With TraceAllocator the run is recorded to $ALLOCTRACE_OUT (default
// alloctrace.<pid>.trace), complete when the program exits; the trace's
// class table names the two roles.
//
// To adopt a verdict, change the alias of that role only (a
// default-constructible std allocator template).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "alloctrace/pool/pool_allocator.h"     // alloctrace::pool::*Allocator, for the aliases
#include "alloctrace/tracer/trace_allocator.h"  // alloctrace::TraceAllocator, for the aliases

// The roles (declared only: they name the classes in the trace and in
// ALLOCTRACE_POLICY).
struct Catalog;
struct Session;

// The lines to change to adopt a per-role verdict, e.g.
//   template <class T> using CatalogAlloc = alloctrace::pool::SlabAllocator<
//       T, alloctrace::pool::SingleThreaded, alloctrace::pool::HoldingStack>;
#ifdef ALLOCTRACE_ALIASES
// The lines a search in the program proves, pasted by its build
// (replayer --shipped_build; tools/shipped_build.sh passes them as
// -DALLOCTRACE_ALIASES=...): the build a user would ship.
ALLOCTRACE_ALIASES
#else
template <class T>
using CatalogAlloc = alloctrace::TraceAllocator<T, Catalog>;
template <class T>
using SessionAlloc = alloctrace::TraceAllocator<T, Session>;
#endif

namespace {

struct Product {
  uint32_t price_cents;
  uint32_t stock;
};

using CatalogMap = std::map<uint64_t, Product, std::less<uint64_t>,
                            CatalogAlloc<std::pair<const uint64_t, Product>>>;
using Cart = std::set<uint64_t, std::less<uint64_t>, SessionAlloc<uint64_t>>;

// The id of product number i: scattered, so the map's order is not the
// insertion order (splitmix64's finalizer).
uint64_t ProductId(uint64_t i) {
  uint64_t z = i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

long Arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "usage: catalog [products [lookups]] (integers >= 1)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long products = Arg(argc, argv, 1, 200000);
  const long lookups = Arg(argc, argv, 2, 2000000);
  std::mt19937_64 rng(42);
  uint64_t checksum = 0, checkouts = 0;
  {
    CatalogMap catalog;
    for (long i = 0; i < products; ++i) {
      const uint64_t r = rng();
      catalog.emplace(
          ProductId(static_cast<uint64_t>(i)),
          Product{static_cast<uint32_t>(99 + r % 100000), static_cast<uint32_t>((r >> 32) % 500)});
    }
    Cart cart;
    size_t cart_size = 4 + rng() % 32;
    for (long i = 0; i < lookups; ++i) {
      // Ids of products 0 .. 2 x products - 1: half are not in the catalog.
      const uint64_t n = rng() % (2 * static_cast<uint64_t>(products));
      const auto it = catalog.find(ProductId(n));
      if (it == catalog.end()) continue;
      checksum += it->second.price_cents;
      cart.insert(it->first);
      if (cart.size() >= cart_size) {
        for (uint64_t id : cart) checksum += id >> 48;
        cart.clear();
        ++checkouts;
        cart_size = 4 + rng() % 32;
      }
    }
    checksum += cart.size();
  }
  std::printf("catalog: %ld products, %ld lookups: %llu checkouts, checksum %llu\n", products,
              lookups, static_cast<unsigned long long>(checkouts),
              static_cast<unsigned long long>(checksum));
  return 0;
}
