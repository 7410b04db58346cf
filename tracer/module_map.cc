#include "alloctrace/tracer/module_map.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "alloctrace/base/elf_file.h"

namespace alloctrace {

std::vector<ModuleMap::Mapping> ModuleMap::ParseMaps(const std::string& text) {
  std::vector<Mapping> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    uint64_t start, end, offset;
    char perms[8] = {};
    int path_at = -1;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start,
                    &end, perms, &offset, &path_at) < 4 ||
        path_at < 0) {
      continue;
    }
    if (perms[2] != 'x' || end <= start) continue;
    std::string path = line.substr(static_cast<size_t>(path_at));
    if (path.empty() || path[0] != '/') continue;  // [vdso], anonymous
    constexpr std::string_view kDeleted = " (deleted)";
    if (path.size() > kDeleted.size() &&
        path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
      path.resize(path.size() - kDeleted.size());
    }
    out.push_back(Mapping{start, end, offset, std::move(path)});
  }
  return out;
}

void ModuleMap::Refresh() {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  ranges_.clear();
  for (Mapping& m : ParseMaps(text.str())) {
    auto [it, inserted] = ids_.try_emplace(std::make_pair(m.start, m.path),
                                           static_cast<uint32_t>(modules_.size() + 1));
    if (inserted) {
      ModuleDef def;
      def.id = it->second;
      def.path = m.path;
      def.start = m.start;
      def.end = m.end;
      def.file_offset = m.offset;
      modules_.push_back(std::move(def));
      build_id_read_.push_back(false);
    }
    ranges_.push_back(Range{m.start, m.end, it->second});
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const Range& a, const Range& b) { return a.start < b.start; });
}

uint32_t ModuleMap::Find(uint64_t pc) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), pc,
                               [](uint64_t v, const Range& r) { return v < r.start; });
    if (it != ranges_.begin() && pc < std::prev(it)->end) return std::prev(it)->id;
    if (!may_refresh_) return 0;
    may_refresh_ = false;
    Refresh();
  }
  return 0;
}

const ModuleDef& ModuleMap::module(uint32_t id) {
  ModuleDef& m = modules_[id - 1];
  if (!build_id_read_[id - 1]) {
    build_id_read_[id - 1] = true;
    if (absl::StatusOr<ElfFile> f = ElfFile::Open(m.path); f.ok()) m.build_id = f->build_id();
  }
  return m;
}

}  // namespace alloctrace
