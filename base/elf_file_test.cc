// ElfFile on the test's own executable: its build id matches the one the
// loader sees, and a pc in it maps back to the address its symbols use.
#include "alloctrace/base/elf_file.h"

#include <link.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

// Some code of this executable.
__attribute__((noinline)) int Marker(int x) { return x * 3 + 1; }

struct Mapping {
  uint64_t start = 0, end = 0, offset = 0;
  std::string path;
};

Mapping ExecutableMappingOf(uint64_t pc) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    Mapping m;
    char perms[8] = {};
    char path[4096] = {};
    unsigned long long start, end, offset;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &offset,
                    path) >= 4 &&
        pc >= start && pc < end) {
      return Mapping{start, end, offset, path};
    }
  }
  return {};
}

uint64_t MainProgramBias() {
  uint64_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        *static_cast<uint64_t*>(out) = info->dlpi_addr;
        return 1;  // the first object is the program
      },
      &bias);
  return bias;
}

TEST(ElfFileTest, MapsAPcOfThisProgramToItsLinkAddress) {
  ASSERT_EQ(Marker(1), 4);
  const auto pc = reinterpret_cast<uint64_t>(&Marker);
  const Mapping m = ExecutableMappingOf(pc);
  ASSERT_FALSE(m.path.empty());
  absl::StatusOr<ElfFile> f = ElfFile::Open(m.path);
  ASSERT_TRUE(f.ok()) << f.status();
  uint64_t address = 0;
  ASSERT_TRUE(f->AddressOfOffset(pc - m.start + m.offset, &address));
  EXPECT_EQ(address + MainProgramBias(), pc);
  EXPECT_FALSE(f->AddressOfOffset(~uint64_t{0} / 2, &address));
  // Bazel builds the test with line tables (-g1) and a symbol table.
  EXPECT_TRUE(f->has_debug_info());
  EXPECT_TRUE(f->FunctionSymbolCovers(address));
  EXPECT_FALSE(f->FunctionSymbolCovers(8));
}

TEST(ElfFileTest, ReadsTheBuildIdTheLinkerWrote) {
  absl::StatusOr<ElfFile> f = ElfFile::Open("/proc/self/exe");
  ASSERT_TRUE(f.ok()) << f.status();
  // GCC and Clang on Debian link with --build-id (a 20-byte SHA-1).
  EXPECT_EQ(f->build_id().size(), 20u);
  EXPECT_EQ(absl::BytesToHexString(f->build_id()).size(), 40u);
}

TEST(ElfFileTest, SaysWhyAFileIsNotOne) {
  EXPECT_EQ(ElfFile::Open("/nonexistent/x").status().message(), "/nonexistent/x: cannot be opened");
  const std::string text = testing::TempDir() + "/not_elf.txt";
  std::ofstream(text) << "hello, this is text and not an executable";
  EXPECT_EQ(ElfFile::Open(text).status().message(), text + ": not an ELF file");
  EXPECT_EQ(absl::BytesToHexString(std::string("\x01\xab", 2)), "01ab");
}

}  // namespace
}  // namespace alloctrace
