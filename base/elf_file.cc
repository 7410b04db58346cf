#include "alloctrace/base/elf_file.h"

#include <elf.h>

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
  return f;
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

std::string HexBytes(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace alloctrace
