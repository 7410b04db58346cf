// What the call-site machinery needs from an ELF file on disk: its GNU
// build id (to tell whether the file is the one a recording ran) and the
// address its symbols use for a file offset (to symbolize a pc recorded in
// a mapping of the file). 64-bit little-endian ELF only (x86-64, aarch64).
#ifndef ALLOCTRACE_BASE_ELF_FILE_H_
#define ALLOCTRACE_BASE_ELF_FILE_H_

#include <elf.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace alloctrace {

class ElfFile {
 public:
  // Reads the file's ELF and program headers and its build id note. Fails,
  // saying why, for a file that cannot be read or is not a 64-bit ELF file.
  static absl::StatusOr<ElfFile> Open(const std::string& path);

  // The NT_GNU_BUILD_ID note's bytes; empty if the file has none.
  const std::string& build_id() const { return build_id_; }
  // The virtual address (as in the file's symbol and line tables) of file
  // offset `offset`: the loadable segment holding it decides. False if no
  // loadable segment holds it.
  bool AddressOfOffset(uint64_t offset, uint64_t* address) const;

  // Whether the file has DWARF (.debug_info): names and lines from it are
  // exact, inlined calls included.
  bool has_debug_info() const { return has_debug_info_; }
  // Whether a function symbol (.symtab, or .dynsym in a stripped file)
  // covers `address`. Without DWARF, a name for an address no symbol
  // covers is only the nearest exported one before it: not the function.
  bool FunctionSymbolCovers(uint64_t address) const;

 private:
  struct Segment {
    uint64_t offset, filesz, vaddr;
  };
  struct Range {
    uint64_t start, end;
  };
  std::vector<Segment> loads_;
  std::vector<Range> functions_;  // sorted by start
  std::string build_id_;
  bool has_debug_info_ = false;
  // Reads the section headers: .debug_info's presence and the function
  // symbols. False if they do not parse.
  bool ReadSections(std::ifstream& in, const Elf64_Ehdr& eh);
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_ELF_FILE_H_
