#include "alloctrace/base/elf_file.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace alloctrace {
namespace {

// Reads `n` bytes at `offset`; false past the end.
bool ReadAt(std::ifstream& in, uint64_t offset, void* out, size_t n) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<size_t>(in.gcount()) == n;
}

// The build id in a PT_NOTE segment's bytes, or "".
std::string BuildIdInNotes(const std::string& notes) {
  size_t pos = 0;
  while (pos + sizeof(Elf64_Nhdr) <= notes.size()) {
    Elf64_Nhdr h;
    std::memcpy(&h, notes.data() + pos, sizeof h);
    pos += sizeof h;
    const size_t name = (h.n_namesz + 3) & ~size_t{3};
    const size_t desc = (h.n_descsz + 3) & ~size_t{3};
    if (name > notes.size() - pos || desc > notes.size() - pos - name) return "";
    if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 &&
        std::memcmp(notes.data() + pos, "GNU", 4) == 0) {
      return notes.substr(pos + name, h.n_descsz);
    }
    pos += name + desc;
  }
  return "";
}

}  // namespace

absl::StatusOr<ElfFile> ElfFile::Open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be opened"));
  Elf64_Ehdr eh;
  if (!ReadAt(in, 0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ELF file"));
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a 64-bit little-endian ELF file"));
  }
  ElfFile f;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!ReadAt(in, eh.e_phoff + uint64_t{i} * sizeof ph, &ph, sizeof ph)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": program header ", i, " lies past the end of the file"));
    }
    if (ph.p_type == PT_LOAD) f.loads_.push_back(Segment{ph.p_offset, ph.p_filesz, ph.p_vaddr});
    if (ph.p_type == PT_NOTE && f.build_id_.empty() && ph.p_filesz <= (1 << 20)) {
      std::string notes(ph.p_filesz, '\0');
      if (ReadAt(in, ph.p_offset, notes.data(), notes.size())) f.build_id_ = BuildIdInNotes(notes);
    }
  }
  if (!f.ReadSections(in, eh)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": its section headers do not parse"));
  }
  return f;
}

bool ElfFile::ReadSections(std::ifstream& in, const Elf64_Ehdr& eh) {
  if (eh.e_shnum == 0) return true;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) return false;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!ReadAt(in, eh.e_shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr))) return false;
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  if (names.sh_size > (64 << 20)) return false;
  std::string name_table(names.sh_size, '\0');
  if (!ReadAt(in, names.sh_offset, name_table.data(), name_table.size())) return false;
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_name < name_table.size() &&
        std::strcmp(name_table.c_str() + sh.sh_name, ".debug_info") == 0) {
      has_debug_info_ = true;
    }
    if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
        sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_size > (256 << 20)) {
      continue;
    }
    std::vector<Elf64_Sym> symbols(sh.sh_size / sizeof(Elf64_Sym));
    if (!ReadAt(in, sh.sh_offset, symbols.data(), symbols.size() * sizeof(Elf64_Sym))) continue;
    for (const Elf64_Sym& sym : symbols) {
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0 && sym.st_shndx != SHN_UNDEF) {
        functions_.push_back(Range{sym.st_value, sym.st_value + sym.st_size});
      }
    }
  }
  std::sort(functions_.begin(), functions_.end(),
            [](const Range& a, const Range& b) { return a.start < b.start; });
  return true;
}

bool ElfFile::FunctionSymbolCovers(uint64_t address) const {
  // Symbols may nest or repeat (.symtab and .dynsym): any covering one counts.
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [](uint64_t a, const Range& r) { return a < r.start; });
  for (int back = 0; back < 8 && it != functions_.begin(); ++back) {
    --it;
    if (address < it->end) return true;
  }
  return false;
}

bool ElfFile::AddressOfOffset(uint64_t offset, uint64_t* address) const {
  for (const Segment& s : loads_) {
    if (offset >= s.offset && offset - s.offset < s.filesz) {
      *address = s.vaddr + (offset - s.offset);
      return true;
    }
  }
  return false;
}

}  // namespace alloctrace
