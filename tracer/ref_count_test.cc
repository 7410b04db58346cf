#include "alloctrace/tracer/ref_count.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using ref_count_internal::kSharedMode;
using ref_count_internal::sole;
using ref_count_internal::tls_mark;

// Drops `refs` references; expects only the last to report zero.
void ExpectExactly(RefCount& c, int refs) {
  for (int i = 1; i < refs; ++i) ASSERT_FALSE(c.Unref()) << "reference " << i << " of " << refs;
  EXPECT_TRUE(c.Unref());
}

// The tests run in order in one process: the first makes this thread the
// sole one, the second switches the process to shared counting.
TEST(RefCountTest, TheFirstThreadCountsAlone) {
  RefCount c;
  for (int i = 0; i < 1000; ++i) c.Ref();
  EXPECT_EQ(sole.load(), static_cast<const void*>(&tls_mark))
      << "the first thread to count should own the counts (or membarrier(2) is missing)";
  ExpectExactly(c, 1001);
}

TEST(RefCountTest, ASecondThreadSwitchesWithoutLosingACount) {
  // The sole thread keeps counting while another thread starts counting
  // the same count: a lost update at the switch leaves the count off.
  constexpr int kRounds = 2'000'000;
  RefCount c;
  std::atomic<bool> started{false};
  std::thread other([&] {
    while (!started.load()) {
    }
    for (int i = 0; i < kRounds; ++i) c.Ref();
  });
  for (int i = 0; i < kRounds; ++i) {
    c.Ref();
    if (i == 1000) started.store(true);
  }
  other.join();
  EXPECT_EQ(sole.load(), static_cast<const void*>(&kSharedMode));
  ExpectExactly(c, 2 * kRounds + 1);
}

TEST(RefCountTest, SharedCountsStayExactUnderContention) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 200'000;
  RefCount c;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        c.Ref();
        c.Ref();
        EXPECT_FALSE(c.Unref());
      }
    });
  }
  for (auto& t : threads) t.join();
  ExpectExactly(c, kThreads * kRounds + 1);
}

}  // namespace
}  // namespace alloctrace
