#include "alloctrace/format/hostile_trace.h"

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "alloctrace/format/trace_writer.h"
#include "alloctrace/proto/trace.pb.h"

namespace alloctrace {

absl::Status WriteHostileTrace(const std::string& path) {
  proto::Header header;
  header.set_workload(kHostileScript);
  header.set_program(kHostileImg);
  header.set_platform(kHostileTitle);
  (*header.mutable_labels())["label"] = kHostileScript;
  (*header.mutable_labels())["command_line"] = kHostileImg;
  (*header.mutable_labels())[kHostileImg] = kHostileTitle;
  (*header.mutable_labels())["<b onmouseover=alert(1)>key</b>"] = "'single' & \"double\"";
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, header, 1024);
  if (!writer.ok()) return writer.status();
  TraceWriter& w = **writer;
  // Arena 1 lives for the first half, arena 2 to the end; arena 0 throughout.
  w.ArenaCreate(0, 1);
  w.ArenaCreate(0, 2);
  std::vector<uint64_t> live[3];
  uint64_t address = 0x100000;
  uint64_t state = 12345;
  for (int i = 0; i < 6000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t arena =
        i < 3000 ? static_cast<uint32_t>((state >> 33) % 3) : 2 * ((state >> 33) % 2);
    std::vector<uint64_t>& mine = live[arena];
    if (!mine.empty() && (state >> 40) % 3 == 0) {
      w.Free(0, arena, mine.back());
      mine.pop_back();
    } else {
      address += 64;
      w.Alloc(0, arena, address, Shape{8, 1 + (state >> 50) % 12, 8});
      mine.push_back(address);
    }
    if (i == 3000) {
      for (const uint64_t a : live[1]) w.Free(0, 1, a);
      live[1].clear();
      w.ArenaDestroy(0, 1);
    }
  }
  return w.Finish();
}

}  // namespace alloctrace
