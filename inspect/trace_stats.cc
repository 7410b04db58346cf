#include "alloctrace/inspect/trace_stats.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "alloctrace/base/json.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/inspect/arena_usage.h"

namespace alloctrace {
namespace {

uint64_t Bucket(uint64_t bytes) {
  if (bytes == 0) return 0;
  uint64_t b = 1;
  while (b <= bytes / 2) b <<= 1;
  return b;
}

}  // namespace

std::string HumanBytes(uint64_t b) {
  if (b < 10 * 1024) return absl::StrCat(b, " B");
  if (b < 10 * 1024 * 1024) return absl::StrFormat("%.1f KiB", b / 1024.0);
  return absl::StrFormat("%.1f MiB", b / (1024.0 * 1024.0));
}

namespace {

// The streaming pass of ComputeTraceStats: one event at a time into `st`.
class StatsPass {
 public:
  StatsPass(TraceReader& reader, TraceStats& st) : reader_(reader), st_(st) {}

  // Grows the tables by object id to cover the chunk at hand.
  void SizeTables() {
    if (object_bytes_.size() < reader_.object_id_limit()) {
      object_bytes_.resize(reader_.object_id_limit());
      object_arena_.resize(reader_.object_id_limit());
    }
  }
  absl::Status OnEvent(const Event& e);
  // What is known only at the end.
  void Finish();

 private:
  // The stats of the arena with dense index `dense`, noting its first and
  // latest use; keyed by the id the trace gave it.
  ArenaStats& Arena(uint32_t dense) {
    auto [it, inserted] = st_.arenas.try_emplace(reader_.arena_id(dense));
    if (inserted) it->second.first_event = index_;
    it->second.last_event = index_;
    return it->second;
  }
  void AllocOrRealloc(const Event& e);
  void Free(const Event& e);
  // Adds the event at hand to the live course, halving its resolution when
  // it has twice the points it keeps.
  void Sample();

  TraceReader& reader_;
  TraceStats& st_;
  std::vector<uint64_t> object_bytes_;  // by object id
  std::vector<uint32_t> object_arena_;
  uint64_t live_objects_ = 0, live_bytes_ = 0;
  uint64_t index_ = 0;   // of the event at hand, over the whole trace
  uint64_t stride_ = 1;  // events per point of the live course
  LivePoint span_;       // the point being filled
  ArenaUsage usage_;     // threads and blocks by arena (arena_usage.h)
  ClassStatsBuilder classes_;
};

void StatsPass::AllocOrRealloc(const Event& e) {
  ArenaStats& a = Arena(e.arena);
  const uint64_t bytes = reader_.shapes()[e.shape].bytes();
  if (e.kind == OpKind::kRealloc) {
    ++st_.reallocs;
    const uint64_t old = object_bytes_[e.old_object];
    live_bytes_ -= old;
    --live_objects_;
    Arena(object_arena_[e.old_object]).live_bytes -= old;
    usage_.Free(object_arena_[e.old_object], e.thread);
    classes_.Realloc(object_arena_[e.old_object], old, e.arena, e.thread, bytes);
  } else {
    ++st_.allocs;
    ++a.allocs;
    classes_.Alloc(e.arena, e.thread, bytes);
  }
  object_bytes_[e.object] = bytes;
  object_arena_[e.object] = e.arena;
  usage_.Alloc(e.arena, e.thread);
  ++live_objects_;
  live_bytes_ += bytes;
  st_.bytes_allocated += bytes;
  a.bytes_allocated += bytes;
  a.live_bytes += bytes;
  a.peak_live_bytes = std::max(a.peak_live_bytes, a.live_bytes);
  ++st_.size_histogram[Bucket(bytes)];
  st_.peak_live_bytes = std::max(st_.peak_live_bytes, live_bytes_);
  st_.peak_live_objects = std::max(st_.peak_live_objects, live_objects_);
}

void StatsPass::Free(const Event& e) {
  ++st_.frees;
  const uint64_t bytes = object_bytes_[e.object];
  ArenaStats& a = Arena(object_arena_[e.object]);
  usage_.Free(object_arena_[e.object], e.thread);
  classes_.Free(object_arena_[e.object], e.thread, bytes);
  ++a.frees;
  a.live_bytes -= bytes;
  live_bytes_ -= bytes;
  --live_objects_;
}

void StatsPass::Sample() {
  span_.live_bytes = std::max(span_.live_bytes, live_bytes_);
  span_.live_objects = std::max(span_.live_objects, live_objects_);
  if (++index_ % stride_ != 0) return;
  span_.end_event = index_;
  st_.live_course.push_back(span_);
  span_ = LivePoint{};
  if (st_.live_course.size() == 2 * TraceStats::kLiveCoursePoints) {
    // Halve the resolution: merge neighbours, keeping their maxima.
    for (size_t i = 0; i < TraceStats::kLiveCoursePoints; ++i) {
      const LivePoint& a = st_.live_course[2 * i];
      const LivePoint& b = st_.live_course[2 * i + 1];
      st_.live_course[i] = {b.end_event, std::max(a.live_bytes, b.live_bytes),
                            std::max(a.live_objects, b.live_objects)};
    }
    st_.live_course.resize(TraceStats::kLiveCoursePoints);
    stride_ *= 2;
  }
}

absl::Status StatsPass::OnEvent(const Event& e) {
  switch (e.kind) {
    case OpKind::kAlloc:
    case OpKind::kRealloc:
      AllocOrRealloc(e);
      break;
    case OpKind::kFree:
      Free(e);
      break;
    case OpKind::kArenaCreate:
      ++st_.arenas_created;
      Arena(e.arena);
      classes_.ArenaCreated(e.arena, e.shape);  // its class
      break;
    case OpKind::kArenaDestroy:
      ++st_.arenas_destroyed;
      Arena(e.arena).destroyed = true;
      break;
    default:
      break;
  }
  Sample();
  return absl::OkStatus();
}

void StatsPass::Finish() {
  if (index_ % stride_ != 0) {
    span_.end_event = index_;
    st_.live_course.push_back(span_);
  }
  st_.events = reader_.events_read();
  st_.chunks = reader_.chunks_read();
  st_.shapes = reader_.shapes().size();
  st_.has_footer = reader_.has_footer();
  st_.cut_short = reader_.cut_short();
  st_.threads = reader_.threads_seen();
  st_.arena_usage = usage_.Summarize(reader_);
  st_.has_class_table = !reader_.classes().empty();
  st_.classes = classes_.Summarize(reader_.classes());
  st_.class_table_notes = CheckClassTable(reader_.classes(), classes_.ArenaClasses()).notes;
  st_.live_objects_at_end = live_objects_;
  st_.live_bytes_at_end = live_bytes_;
}

}  // namespace

absl::StatusOr<TraceStats> ComputeTraceStats(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  TraceStats st;
  st.header = reader.header();
  st.file_bytes = reader.file_size();
  StatsPass pass(reader, st);
  if (absl::Status s = reader.ForEachEvent([&](const std::vector<Event>&) { pass.SizeTables(); },
                                           [&](const Event& e) { return pass.OnEvent(e); });
      !s.ok()) {
    return s;
  }
  pass.Finish();
  return st;
}

absl::StatusOr<TraceStats> CountTraceEvents(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  TraceStats st;
  st.header = reader.header();
  st.file_bytes = reader.file_size();
  if (absl::Status s = reader.ForEachEvent([](const std::vector<Event>&) {},
                                           [&](const Event& e) {
                                             switch (e.kind) {
                                               case OpKind::kAlloc:
                                                 ++st.allocs;
                                                 break;
                                               case OpKind::kFree:
                                                 ++st.frees;
                                                 break;
                                               case OpKind::kRealloc:
                                                 ++st.reallocs;
                                                 break;
                                               case OpKind::kArenaCreate:
                                                 ++st.arenas_created;
                                                 break;
                                               case OpKind::kArenaDestroy:
                                                 ++st.arenas_destroyed;
                                                 break;
                                               default:
                                                 break;
                                             }
                                             return absl::OkStatus();
                                           });
      !s.ok()) {
    return s;
  }
  st.events = reader.events_read();
  st.chunks = reader.chunks_read();
  st.has_footer = reader.has_footer();
  st.cut_short = reader.cut_short();
  st.threads = reader.threads_seen();
  return st;
}

const char* ChecksumKind(const TraceStats& st) {
  if (st.header.has_crc32c()) return "all";
  return st.header.chunks_have_crc32c() ? "chunks" : "none";
}

std::string ChecksumWords(const TraceStats& st) {
  if (st.header.has_crc32c()) {
    return st.has_footer ? "header, every chunk and footer, each verified"
                         : "header and every chunk read, each verified";
  }
  if (st.header.chunks_have_crc32c())
    return "every chunk, each verified (not the header or footer)";
  return "none (written before them): a changed byte that still decodes would go unseen";
}

std::string FormatTraceStatsText(const TraceStats& st) {
  std::string o;
  const proto::Header& h = st.header;
  absl::StrAppend(&o, "trace format ", h.format_version(), ", workload \"", h.workload(),
                  "\", program \"", h.program(), "\"\n");
  absl::StrAppend(&o, "recorded ",
                  absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixNanos(h.start_unix_ns()),
                                   absl::UTCTimeZone()),
                  " on ", h.platform(), ", ", h.pointer_size() * 8, "-bit, pid ", h.pid(), "\n");
  if (!h.labels().empty()) {
    std::map<std::string, std::string> labels(h.labels().begin(), h.labels().end());
    absl::StrAppend(&o, "labels: ", absl::StrJoin(labels, " ", absl::PairFormatter("=")), "\n");
  }
  if (st.has_footer) {
    absl::StrAppend(&o, "complete (footer present)\n");
  } else {
    absl::StrAppend(&o, "INCOMPLETE: ", st.cut_short, "; every complete chunk was read\n");
  }
  absl::StrAppend(&o, "checksums: ", ChecksumWords(st), "\n");
  absl::StrAppend(&o, "\n");
  absl::StrAppendFormat(&o, "%-22s %s in %d chunks\n", "file", HumanBytes(st.file_bytes),
                        st.chunks);
  absl::StrAppendFormat(
      &o, "%-22s %d (alloc %d, free %d, realloc %d, arena create %d, destroy %d)\n", "events",
      st.events, st.allocs, st.frees, st.reallocs, st.arenas_created, st.arenas_destroyed);
  absl::StrAppendFormat(&o, "%-22s %.2f\n", "bytes per event", st.bytes_per_event());
  absl::StrAppendFormat(&o, "%-22s %d\n", "threads", st.threads);
  absl::StrAppendFormat(
      &o, "%-22s %s\n", "arenas shared",
      st.arena_usage.shared_count == 0
          ? "none: every arena is used by one thread"
          : absl::StrCat(st.arena_usage.shared_count, ": ", st.arena_usage.SharingWords(),
                         "; only thread-safe policies can serve them"));
  absl::StrAppendFormat(&o, "%-22s %d of %d arenas never hold more than 1 block\n",
                        "one-block arenas", st.arena_usage.arenas_single_block,
                        st.arena_usage.arenas_used);
  if (const std::string shape = st.arena_usage.ShapeWords(); !shape.empty()) {
    absl::StrAppend(&o, "note: ", shape, "\n");
  }
  absl::StrAppendFormat(&o, "%-22s %d\n", "distinct shapes", st.shapes);
  absl::StrAppendFormat(&o, "%-22s %s\n", "bytes allocated", HumanBytes(st.bytes_allocated));
  absl::StrAppendFormat(&o, "%-22s %s (%d bytes)\n", "peak live bytes",
                        HumanBytes(st.peak_live_bytes), st.peak_live_bytes);
  absl::StrAppendFormat(&o, "%-22s %d\n", "peak live objects", st.peak_live_objects);
  absl::StrAppendFormat(&o, "%-22s %d objects, %s\n", "live at end", st.live_objects_at_end,
                        HumanBytes(st.live_bytes_at_end));

  absl::StrAppend(&o, "\n", FormatClassTable(st.classes, st.has_class_table, st.captured()));
  for (const std::string& note : st.class_table_notes) absl::StrAppend(&o, "  note: ", note, "\n");

  absl::StrAppend(&o, "\nallocation sizes (bytes)        count\n");
  uint64_t max_count = 1;
  for (const auto& [b, n] : st.size_histogram) max_count = std::max(max_count, n);
  for (const auto& [b, n] : st.size_histogram) {
    const std::string range = b == 0 ? "0" : absl::StrCat(b, "..", 2 * b - 1);
    absl::StrAppendFormat(&o, "  %-20s %10d  %s\n", range, n,
                          std::string(static_cast<size_t>(30.0 * n / max_count + 0.5), '#'));
  }

  absl::StrAppend(&o, "\narenas: ", st.arenas.size(), " (0 = global heap)\n");
  absl::StrAppendFormat(&o, "  %-8s %10s %10s %14s %14s  %s\n", "arena", "allocs", "frees", "bytes",
                        "peak live", "state");
  int shown = 0;
  for (const auto& [id, a] : st.arenas) {
    if (++shown > 20) {
      absl::StrAppend(&o, "  ... ", st.arenas.size() - 20, " more (see --json)\n");
      break;
    }
    absl::StrAppendFormat(&o, "  %-8d %10d %10d %14d %14d  %s\n", id, a.allocs, a.frees,
                          a.bytes_allocated, a.peak_live_bytes,
                          id == 0 ? "global" : (a.destroyed ? "destroyed" : "live at end"));
  }
  return o;
}

std::string FormatTraceStatsJson(const TraceStats& st) {
  const proto::Header& h = st.header;
  std::string o = "{\n";
  absl::StrAppend(&o, "  \"format_version\": ", h.format_version(), ",\n");
  absl::StrAppend(&o, "  \"workload\": ", JsonString(h.workload()), ",\n");
  absl::StrAppend(&o, "  \"program\": ", JsonString(h.program()), ",\n");
  absl::StrAppend(&o, "  \"platform\": ", JsonString(h.platform()), ",\n");
  absl::StrAppend(&o, "  \"pointer_size\": ", h.pointer_size(), ",\n");
  absl::StrAppend(&o, "  \"start_unix_ns\": ", h.start_unix_ns(), ",\n");
  std::map<std::string, std::string> labels(h.labels().begin(), h.labels().end());
  std::vector<std::string> lab;
  for (const auto& [k, v] : labels) lab.push_back(absl::StrCat(JsonString(k), ": ", JsonString(v)));
  absl::StrAppend(&o, "  \"labels\": {", absl::StrJoin(lab, ", "), "},\n");
  absl::StrAppend(&o, "  \"complete\": ", st.has_footer ? "true" : "false", ",\n");
  absl::StrAppend(&o, "  \"cut_short\": ", JsonString(st.cut_short), ",\n");
  absl::StrAppend(&o, "  \"checksums\": \"", ChecksumKind(st), "\",\n");
  absl::StrAppend(&o, "  \"file_bytes\": ", st.file_bytes, ",\n");
  absl::StrAppend(&o, "  \"chunks\": ", st.chunks, ",\n");
  absl::StrAppend(&o, "  \"events\": ", st.events, ",\n");
  absl::StrAppend(&o, "  \"bytes_per_event\": ", absl::StrFormat("%.4f", st.bytes_per_event()),
                  ",\n");
  absl::StrAppend(&o, "  \"allocs\": ", st.allocs, ",\n  \"frees\": ", st.frees,
                  ",\n  \"reallocs\": ", st.reallocs, ",\n");
  absl::StrAppend(&o, "  \"arenas_created\": ", st.arenas_created,
                  ",\n  \"arenas_destroyed\": ", st.arenas_destroyed, ",\n");
  absl::StrAppend(&o, "  \"threads\": ", st.threads, ",\n  \"shapes\": ", st.shapes, ",\n");
  std::vector<std::string> shared;
  for (const SharedArena& a : st.arena_usage.shared) {
    shared.push_back(absl::StrCat("{\"arena\": ", a.arena, ", \"threads\": [",
                                  absl::StrJoin(a.threads, ", "),
                                  "], \"thread_count\": ", a.thread_count, "}"));
  }
  absl::StrAppend(&o, "  \"shared_arena_count\": ", st.arena_usage.shared_count,
                  ",\n  \"shared_arenas\": [", absl::StrJoin(shared, ", "),
                  "],\n  \"arena_sharing\": ", JsonString(st.arena_usage.SharingWords()),
                  ",\n  \"arenas_used\": ", st.arena_usage.arenas_used,
                  ",\n  \"arenas_single_block\": ", st.arena_usage.arenas_single_block,
                  ",\n  \"arena_shape\": ", JsonString(st.arena_usage.ShapeWords()), ",\n");
  absl::StrAppend(&o, "  \"bytes_allocated\": ", st.bytes_allocated, ",\n");
  absl::StrAppend(&o, "  \"peak_live_bytes\": ", st.peak_live_bytes, ",\n");
  absl::StrAppend(&o, "  \"peak_live_objects\": ", st.peak_live_objects, ",\n");
  absl::StrAppend(&o, "  \"live_objects_at_end\": ", st.live_objects_at_end, ",\n");
  absl::StrAppend(&o, "  \"live_bytes_at_end\": ", st.live_bytes_at_end, ",\n");
  std::vector<std::string> hist;
  for (const auto& [b, n] : st.size_histogram) {
    hist.push_back(absl::StrCat("{\"min_bytes\": ", b, ", \"count\": ", n, "}"));
  }
  absl::StrAppend(&o, "  \"size_histogram\": [", absl::StrJoin(hist, ", "), "],\n");
  absl::StrAppend(&o, "  \"has_class_table\": ", st.has_class_table ? "true" : "false",
                  ",\n  \"classes\": ", FormatClassTableJson(st.classes),
                  ",\n  \"class_table_notes\": ", JsonStrings(st.class_table_notes), ",\n");
  std::vector<std::string> arenas;
  for (const auto& [id, a] : st.arenas) {
    arenas.push_back(absl::StrCat(
        "{\"arena\": ", id, ", \"allocs\": ", a.allocs, ", \"frees\": ", a.frees,
        ", \"bytes_allocated\": ", a.bytes_allocated, ", \"peak_live_bytes\": ", a.peak_live_bytes,
        ", \"destroyed\": ", a.destroyed ? "true" : "false", "}"));
  }
  absl::StrAppend(&o, "  \"arenas\": [\n    ", absl::StrJoin(arenas, ",\n    "), "\n  ]\n}\n");
  return o;
}

}  // namespace alloctrace
