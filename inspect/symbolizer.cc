#include "alloctrace/inspect/symbolizer.h"

#include <algorithm>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "alloctrace/base/child_process.h"
#include "alloctrace/base/elf_file.h"
#include "alloctrace/base/scoped_fd.h"

namespace alloctrace {
namespace {

// Addresses per addr2line run: well inside the kernel's argument limit.
constexpr size_t kBatch = 2000;

// Runs addr2line on `addresses` of `path`; its output, or an error.
absl::StatusOr<std::string> RunAddr2line(const std::string& program, const std::string& path,
                                         const std::vector<uint64_t>& addresses) {
  absl::StatusOr<std::string> exe = FindProgram(program);
  if (!exe.ok()) return exe.status();
  absl::StatusOr<Pipe> pipe = Pipe::Make();
  if (!pipe.ok()) return pipe.status();
  ChildSpec spec;
  spec.path = *exe;
  spec.argv = {program, "-a", "-f", "-C", "-i", "-e", path};
  for (uint64_t a : addresses) spec.argv.push_back(absl::StrCat("0x", absl::Hex(a)));
  spec.stdin_null = true;
  spec.stdout_fd = pipe->write.get();
  absl::StatusOr<ChildProcess> child = ChildProcess::Start(spec);
  if (!child.ok()) return child.status();
  pipe->write.Reset();
  std::string out;
  ChildLimits limits;
  limits.wall_seconds = 120;
  const ChildExit end = child->Wait(limits, pipe->read.get(), &out);
  if (!end.Succeeded()) {
    return absl::InternalError(absl::StrCat(program, " ", ChildExitWords(end, limits)));
  }
  return out;
}

}  // namespace

absl::flat_hash_map<uint64_t, std::vector<FrameName>> ParseAddr2line(const std::string& out) {
  absl::flat_hash_map<uint64_t, std::vector<FrameName>> result;
  std::istringstream in(out);
  std::string line;
  std::vector<FrameName>* current = nullptr;
  while (std::getline(in, line)) {
    uint64_t address;
    if (line.rfind("0x", 0) == 0 && absl::SimpleHexAtoi(line.substr(2), &address)) {
      current = &result[address];
      continue;
    }
    if (current == nullptr) continue;
    std::string location;
    if (!std::getline(in, location)) break;
    FrameName f;
    f.named = line != "??";
    f.function = f.named ? line : "";
    // "??:0", "??:?" and "file:?" carry no line worth printing.
    if (location.rfind("??", 0) != 0) {
      const size_t colon = location.rfind(':');
      const std::string line_no = colon == std::string::npos ? "" : location.substr(colon + 1);
      const size_t space = line_no.find(' ');  // " (discriminator 3)"
      const std::string digits = line_no.substr(0, space);
      if (!digits.empty() && digits != "?" && digits != "0") {
        f.file = location.substr(0, colon);
        f.location = absl::StrCat(FileNameOf(f.file), ":", digits);
      }
    }
    current->push_back(std::move(f));
  }
  return result;
}

namespace {

// Why module `m` cannot be symbolized from `elf` (its file as it is now),
// or "".
std::string WhyNotSymbolized(const ModuleDef& m, const absl::StatusOr<ElfFile>& elf) {
  if (!elf.ok()) return std::string(elf.status().message());
  if (!m.build_id.empty() && elf->build_id() != m.build_id) {
    return absl::StrCat(m.path, ": build id ", absl::BytesToHexString(elf->build_id()),
                        " differs from the recorded ", absl::BytesToHexString(m.build_id),
                        " (the file changed since the recording)");
  }
  return "";
}

// Names the frames at `wanted` (return addresses) in module `m` into *out;
// *addr2line_missing: addr2line could not be run (set here the first time).
void SymbolizeModule(const ModuleDef& m, const absl::flat_hash_set<uint64_t>& wanted,
                     const std::string& addr2line, Symbols* out, bool* addr2line_missing) {
  const std::string name = FileNameOf(m.path);
  // The offset the file's own tools use (its link-time address), or the
  // file offset where the file cannot be read.
  auto fallback = [&](uint64_t address) {
    FrameName f;
    f.function = absl::StrCat(name, "+0x", absl::Hex(address));
    return f;
  };
  absl::StatusOr<ElfFile> elf = ElfFile::Open(m.path);
  const std::string why = WhyNotSymbolized(m, elf);
  std::vector<uint64_t> order;
  absl::flat_hash_map<uint64_t, uint64_t> address_of;  // pc -> link-time address of the call
  for (uint64_t pc : wanted) {
    const uint64_t offset = pc - 1 - m.start + m.file_offset;
    uint64_t address = offset;
    if (why.empty() && !elf->AddressOfOffset(offset, &address)) address = offset;
    address_of[pc] = address;
    out->frames[{m.id, pc}] = {fallback(address)};
    order.push_back(pc);
  }
  if (!why.empty()) {
    out->notes.push_back(absl::StrCat("not symbolized: ", why));
    return;
  }
  // In address order: addr2line's answers (its inlined chains) depend on
  // the order it is asked in, and a hash set's order changes run to run.
  std::sort(order.begin(), order.end(),
            [&](uint64_t a, uint64_t b) { return address_of[a] < address_of[b]; });
  if (*addr2line_missing) return;
  size_t named = 0;
  for (size_t at = 0; at < order.size(); at += kBatch) {
    std::vector<uint64_t> batch;
    for (size_t i = at; i < order.size() && i < at + kBatch; ++i) {
      batch.push_back(address_of[order[i]]);
    }
    absl::StatusOr<std::string> text = RunAddr2line(addr2line, m.path, batch);
    if (!text.ok()) {
      out->notes.push_back(absl::StrCat("not symbolized: ", text.status().message(),
                                        " (GNU binutils' addr2line names the frames)"));
      *addr2line_missing = absl::IsNotFound(text.status());
      break;
    }
    absl::flat_hash_map<uint64_t, std::vector<FrameName>> names = ParseAddr2line(*text);
    for (size_t i = at; i < order.size() && i < at + kBatch; ++i) {
      auto it = names.find(address_of[order[i]]);
      if (it == names.end() || it->second.empty()) continue;
      std::vector<FrameName>& chain = it->second;
      // Without DWARF addr2line names the nearest symbol before the
      // address, which for a function the file does not export is a
      // neighbour's name: kept only where a symbol covers the address.
      // (A line found means separate debug info was found: exact too.)
      const bool trusted = elf->has_debug_info() || !chain.front().location.empty() ||
                           elf->FunctionSymbolCovers(address_of[order[i]]);
      for (FrameName& f : chain) {
        if (!trusted) f.named = false;
        if (!f.named) f.function = fallback(address_of[order[i]]).function;
      }
      named += chain.front().named;
      out->frames[{m.id, order[i]}] = std::move(chain);
    }
  }
  if (named == 0 && !*addr2line_missing) {
    out->notes.push_back(
        absl::StrCat("not symbolized: ", m.path, " has no symbols for its frames (stripped?)"));
  }
}

}  // namespace

std::string FileNameOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Symbols Symbolize(const CallSiteTable& table, const std::string& addr2line) {
  Symbols out;
  // Return addresses by module.
  std::vector<absl::flat_hash_set<uint64_t>> pcs(table.modules().size() + 1);
  for (const StackDef& s : table.stacks()) {
    for (size_t i = 0; i < s.pcs.size(); ++i) pcs[s.modules[i]].insert(s.pcs[i]);
  }
  for (uint64_t pc : pcs[0]) {
    FrameName f;
    f.function = absl::StrCat("0x", absl::Hex(pc));
    out.frames[{0, pc}] = {f};
  }
  bool addr2line_missing = false;
  for (const ModuleDef& m : table.modules()) {
    if (!pcs[m.id].empty()) SymbolizeModule(m, pcs[m.id], addr2line, &out, &addr2line_missing);
  }
  return out;
}

}  // namespace alloctrace
