#include "alloctrace/inspect/site_classes.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/format/trace_writer.h"

namespace alloctrace {

absl::Status WriteSiteClasses(const std::string& in, const CallSiteReport& report, size_t top,
                              const std::string& out) {
  if (!report.has_sites) {
    return absl::InvalidArgumentError(
        absl::StrCat(in, ": the trace has no call sites (capture --call_sites=N records them)"));
  }
  if (report.stacks == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        in, ": no call stack of the trace could be read, so there is no site to make a class of",
        report.notes.empty() ? "" : absl::StrCat(" (", report.notes.front(), ")")));
  }
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(in);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  proto::Header header = reader.header();
  header.set_workload(absl::StrCat(header.workload(), " (classes from call sites)"));
  (*header.mutable_labels())[kClassesFromLabel] = kClassesFromCallSites;
  // Its sites are its classes now: the trace written has none.
  header.mutable_labels()->erase("call_site_depth");
  absl::StatusOr<std::unique_ptr<TraceWriter>> created = TraceWriter::Create(out, header);
  if (!created.ok()) return created.status();
  TraceWriter& writer = **created;

  // Arena (and class) g + 1 for the top groups, 0 for the rest.
  auto arena_of_site = [&](uint64_t site) -> uint32_t {
    if (site == 0 || site >= report.group_of_stack.size()) return 0;
    const uint32_t g = report.group_of_stack[site];
    return g < top && report.groups[g].function != "(no call site)" ? g + 1 : 0;
  };
  std::vector<uint32_t> arena_of_object;
  std::vector<bool> created_arena(top + 1, false);
  const std::vector<uint64_t>* sites = nullptr;
  size_t next_site = 0;
  uint64_t last_time = 0;
  auto alloc = [&](const Event& e, uint32_t object) {
    const uint64_t site = sites != nullptr && next_site < sites->size() ? (*sites)[next_site++] : 0;
    const uint32_t arena = arena_of_site(site);
    if (arena != 0 && !created_arena[arena]) {
      created_arena[arena] = true;
      const SiteGroup& g = report.groups[arena - 1];
      writer.DefineClass(ClassDef{arena, absl::StrCat("site: ", g.function), g.median_block, true});
      writer.ArenaCreate(e.thread, arena, arena);
    }
    if (object >= arena_of_object.size()) arena_of_object.resize(size_t{object} + 1, 0);
    arena_of_object[object] = arena;
    writer.Alloc(e.thread, arena, uint64_t{object} + 1, reader.shapes()[e.shape]);
  };
  absl::Status s = reader.ForEachEvent(
      [&](const std::vector<Event>&) {
        sites = &reader.chunk_sites();
        next_site = 0;
      },
      [&](const Event& e) -> absl::Status {
        if (e.arena != 0 || e.kind == OpKind::kArenaCreate || e.kind == OpKind::kArenaDestroy) {
          return absl::InvalidArgumentError(absl::StrCat(
              in, ": event ", reader.events_read(),
              " is in an arena of its own: classes from call sites are for captures, whose "
              "allocations are all in the global heap"));
        }
        if (e.time_ns != last_time) {
          writer.Timestamp(e.time_ns);
          last_time = e.time_ns;
        }
        if (e.kind == OpKind::kAlloc) {
          alloc(e, e.object);
        } else if (e.kind == OpKind::kFree) {
          writer.Free(e.thread, arena_of_object[e.object], uint64_t{e.object} + 1);
        } else if (e.kind == OpKind::kRealloc) {
          writer.Free(e.thread, arena_of_object[e.old_object], uint64_t{e.old_object} + 1);
          alloc(e, e.object);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  proto::Footer footer;
  if (reader.has_footer()) footer.set_program_cpu_ns(reader.footer().program_cpu_ns());
  return writer.Finish(footer);
}

}  // namespace alloctrace
