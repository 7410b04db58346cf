// Symbolizer: names the frames of a trace's call stacks offline, from the
// files the recording ran (format/call_sites.h holds the tables).
//
// For each module the files are checked first: a file that is gone, or
// whose build id differs from the one recorded (the program was rebuilt),
// is not symbolized, and a note says why. The rest go through GNU
// addr2line (binutils), which reads the symbol and line tables, inlined
// calls included; a stripped file gives names only where one of its
// dynamic symbols covers the address (addr2line alone would name the
// nearest exported function before it), and no file:line. A frame that
// cannot be named is shown as
// the module's file name and the offset the file's own tools use
// ("libfoo.so+0x1a2b"); a pc in no module as its address.
//
// Thread-compatible.
#ifndef ALLOCTRACE_INSPECT_SYMBOLIZER_H_
#define ALLOCTRACE_INSPECT_SYMBOLIZER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "alloctrace/format/call_sites.h"

namespace alloctrace {

// One function of a frame: the frame's own, or one inlined into it.
struct FrameName {
  std::string function;  // demangled; the module+offset form if unknown
  std::string location;  // "file.cc:42"; "" if unknown
  std::string file;      // the source file's full path, as the line table has it
  bool named = false;    // function is a symbol's name
};

struct Symbols {
  // By (module id, return address): the functions at the call before the
  // return address, innermost (inlined) first; at least one.
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, std::vector<FrameName>> frames;
  // One line per module not symbolized (or symbolized only in part),
  // saying why.
  std::vector<std::string> notes;
};

// Names every frame of every stack in `table`. `addr2line`: the program to
// run (a name looked up in PATH, or a path).
Symbols Symbolize(const CallSiteTable& table, const std::string& addr2line = "addr2line");

// "libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6": how frames and
// modules are shown.
std::string FileNameOf(const std::string& path);

// Parses `addr2line -a -f -C -i` output: for each address line ("0x..."),
// its (function, location) pairs. Exposed for tests.
absl::flat_hash_map<uint64_t, std::vector<FrameName>> ParseAddr2line(const std::string& out);

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_SYMBOLIZER_H_
