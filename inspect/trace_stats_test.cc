#include "alloctrace/inspect/trace_stats.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "alloctrace/format/test_util.h"
#include "alloctrace/format/trace_writer.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

using testing_util::TempPath;

// Two threads, two arenas, a realloc; every kind of event.
void WriteSample(const std::string& path, bool finish) {
  auto w = TraceWriter::Create(path, proto::Header(), /*chunk_events=*/4);
  ASSERT_TRUE(w.ok()) << w.status();
  (*w)->ArenaCreate(1, 7);
  (*w)->Alloc(1, 7, 0x1000, Shape{8, 1, 8});
  (*w)->Alloc(2, 0, 0x2000, Shape{16, 4, 8});
  (*w)->Realloc(2, 0, 0x2000, 0x3000, Shape{1, 128, 8});
  (*w)->Free(1, 7, 0x1000);
  (*w)->ArenaDestroy(1, 7);
  (*w)->Free(2, 0, 0x3000);
  if (finish) {
    ASSERT_TRUE((*w)->Finish().ok());
  } else {
    ASSERT_TRUE((*w)->FlushChunk().ok());  // the recording stops without a footer
  }
}

TEST(CountTraceEventsTest, CountsAsTheFullStatisticsDo) {
  const std::string path = TempPath("counts.trace");
  WriteSample(path, /*finish=*/true);
  auto full = ComputeTraceStats(path);
  auto counts = CountTraceEvents(path);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->events, 7u);
  EXPECT_EQ(counts->allocs, 2u);
  EXPECT_EQ(counts->frees, 2u);
  EXPECT_EQ(counts->reallocs, 1u);
  EXPECT_EQ(counts->arenas_created, 1u);
  EXPECT_EQ(counts->arenas_destroyed, 1u);
  EXPECT_EQ(counts->threads, 2u);
  EXPECT_TRUE(counts->has_footer);
  EXPECT_EQ(counts->events, full->events);
  EXPECT_EQ(counts->allocs, full->allocs);
  EXPECT_EQ(counts->frees, full->frees);
  EXPECT_EQ(counts->reallocs, full->reallocs);
  EXPECT_EQ(counts->arenas_created, full->arenas_created);
  EXPECT_EQ(counts->arenas_destroyed, full->arenas_destroyed);
  EXPECT_EQ(counts->threads, full->threads);
  EXPECT_EQ(counts->chunks, full->chunks);
  EXPECT_EQ(counts->file_bytes, full->file_bytes);
}

TEST(CountTraceEventsTest, ATraceWithoutFooterSaysWhyItEnds) {
  const std::string path = TempPath("cut.trace");
  WriteSample(path, /*finish=*/false);
  auto counts = CountTraceEvents(path);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_FALSE(counts->has_footer);
  EXPECT_FALSE(counts->cut_short.empty());
  EXPECT_EQ(counts->events, 7u);
}

TEST(CountTraceEventsTest, AChangedByteIsAnError) {
  const std::string path = TempPath("changed.trace");
  WriteSample(path, /*finish=*/true);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  // A byte in the middle of the file (a chunk's), flipped.
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, st.st_size / 2, SEEK_SET);
  const int c = std::fgetc(f);
  std::fseek(f, st.st_size / 2, SEEK_SET);
  std::fputc(c ^ 0x40, f);
  std::fclose(f);
  auto counts = CountTraceEvents(path);
  EXPECT_FALSE(counts.ok());
  EXPECT_NE(std::string(counts.status().message()).find(path), std::string::npos)
      << counts.status();
}

TEST(CountTraceEventsTest, AMissingFileIsAnError) {
  auto counts = CountTraceEvents(TempPath("no_such.trace"));
  EXPECT_FALSE(counts.ok());
}

}  // namespace
}  // namespace alloctrace
