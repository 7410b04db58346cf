// ModuleMap: which file's executable mapping a pc of this process lies in,
// for the call sites a recording writes (proto ModuleDef). Read from
// /proc/self/maps, which takes no lock of the dynamic loader's (a thread
// inside dlopen may be waiting for the writer thread that asks).
//
// Thread-compatible: the recorder's writer thread owns one per recording.
#ifndef ALLOCTRACE_TRACER_MODULE_MAP_H_
#define ALLOCTRACE_TRACER_MODULE_MAP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "alloctrace/format/trace_format.h"

namespace alloctrace {

class ModuleMap {
 public:
  // The id (from 1, stable for this map's life) of the module holding
  // `pc`, or 0 if none does (generated code, an anonymous mapping). On a
  // miss the map re-reads /proc/self/maps once per AllowRefresh (a library
  // loaded since the last read).
  uint32_t Find(uint64_t pc);
  void AllowRefresh() { may_refresh_ = true; }
  // Module `id` as the trace records it, its build id read from the file
  // the first time it is asked for.
  const ModuleDef& module(uint32_t id);

  // Parses /proc/<pid>/maps text: the executable mappings of files.
  struct Mapping {
    uint64_t start, end, offset;
    std::string path;
  };
  static std::vector<Mapping> ParseMaps(const std::string& text);

 private:
  void Refresh();

  struct Range {
    uint64_t start, end;
    uint32_t id;
  };
  std::vector<Range> ranges_;       // sorted by start
  std::vector<ModuleDef> modules_;  // id - 1 -> module
  std::vector<bool> build_id_read_;
  absl::flat_hash_map<std::pair<uint64_t, std::string>, uint32_t> ids_;  // (start, path) -> id
  bool may_refresh_ = true;
};

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_MODULE_MAP_H_
