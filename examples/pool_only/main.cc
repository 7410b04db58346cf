// A program that adopts alloctrace's pool allocators without its tracing: a
// std::map in the slab pool, a std::list in the article's policy-based pool.
// Needs liballoctrace_pool (and Abseil), never protobuf.
//
//   pool_app     prints what it built; exits 1 if a sum is wrong
#include <cstdio>
#include <functional>
#include <list>
#include <map>
#include <utility>

#include "alloctrace/pool/pool_allocator.h"

int main() {
  std::map<int, long long, std::less<int>,
           alloctrace::pool::SlabAllocator<std::pair<const int, long long>>>
      slab;
  for (int i = 0; i < 10000; ++i) slab[i * 7919 % 10007] = i;
  for (int i = 0; i < 10007; i += 2) slab.erase(i);

  std::list<int, alloctrace::pool::PoolAllocator<int>> pooled;
  for (int i = 1; i <= 1000; ++i) pooled.push_back(i);

  long long slab_sum = 0, list_sum = 0;
  for (const auto& [key, value] : slab) slab_sum += key;
  for (int v : pooled) list_sum += v;
  std::printf("pool_app: slab-pooled map %zu entries, pooled list %zu entries\n", slab.size(),
              pooled.size());
  // The odd keys below 10007 that the 10000 insertions hit.
  long long expect = 0;
  for (int i = 0; i < 10000; ++i) {
    const int k = i * 7919 % 10007;
    if (k % 2 == 1) expect += k;
  }
  return slab_sum == expect && list_sum == 1000LL * 1001 / 2 ? 0 : 1;
}
