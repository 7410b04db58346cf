#include "alloctrace/inspect/trace_html.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "alloctrace/charts/html.h"
#include "alloctrace/charts/svg.h"
#include "alloctrace/inspect/class_stats.h"

namespace alloctrace {
namespace {

using charts::Escape;
using charts::FormatValue;
using charts::Unit;

std::string Row(absl::string_view key, absl::string_view value) {
  return absl::StrCat("<dt>", Escape(key), "</dt><dd>", Escape(value), "</dd>");
}

std::string Bytes(uint64_t b) {
  return absl::StrCat(FormatValue(static_cast<double>(b), Unit::kBytes), " (", b, " bytes)");
}

// The figures, as inspect prints them.
void AddSummary(const TraceStats& st, charts::HtmlPage* page) {
  const proto::Header& h = st.header;
  std::string facts = "<dl class=\"kv\" id=\"facts\">";
  absl::StrAppend(&facts, Row("workload", h.workload()), Row("program", h.program()),
                  Row("platform", h.platform()));
  std::map<std::string, std::string> labels(h.labels().begin(), h.labels().end());
  for (const auto& [k, v] : labels) absl::StrAppend(&facts, Row("label " + k, v));
  absl::StrAppend(
      &facts, Row("complete", st.has_footer ? "yes (footer present)" : "no: " + st.cut_short),
      Row("checksums", ChecksumWords(st)),
      Row("file", absl::StrCat(Bytes(st.file_bytes), " in ", st.chunks, " chunks, ",
                               absl::StrFormat("%.2f", st.bytes_per_event()), " bytes/event")),
      Row("events", absl::StrCat(st.events, " (alloc ", st.allocs, ", free ", st.frees,
                                 ", realloc ", st.reallocs, ", arena create ", st.arenas_created,
                                 ", destroy ", st.arenas_destroyed, ")")),
      Row("threads", absl::StrCat(st.threads)), Row("distinct shapes", absl::StrCat(st.shapes)),
      Row("bytes allocated", Bytes(st.bytes_allocated)),
      Row("peak live",
          absl::StrCat(Bytes(st.peak_live_bytes), ", ", st.peak_live_objects, " objects")),
      Row("live at end",
          absl::StrCat(st.live_objects_at_end, " objects, ", Bytes(st.live_bytes_at_end))));
  absl::StrAppend(&facts, "</dl>");
  page->AddSection("summary", "Summary", facts);
}

// Live bytes and objects over the trace, from (0, 0).
void AddProfile(const TraceStats& st, charts::HtmlPage* page) {
  charts::Series bytes{"live bytes (requested)", {0}, {0}, true};
  charts::Series objects{"live objects", {0}, {0}, true};
  for (const LivePoint& p : st.live_course) {
    bytes.x.push_back(static_cast<double>(p.end_event));
    bytes.y.push_back(static_cast<double>(p.live_bytes));
    objects.x.push_back(static_cast<double>(p.end_event));
    objects.y.push_back(static_cast<double>(p.live_objects));
  }
  const std::string resolution =
      st.live_course.empty() || st.events <= st.live_course.size()
          ? "Every event is a point."
          : absl::StrCat(
                "Each point is the most over about ",
                FormatValue(static_cast<double>(st.events) / st.live_course.size(), Unit::kCount),
                " events.");
  charts::LineChart live_bytes;
  live_bytes.id = "live-bytes";
  live_bytes.title = "Live bytes over the trace";
  live_bytes.x = {"event index", Unit::kCount, true, /*tight=*/true};
  live_bytes.y = {"live bytes (as requested)", Unit::kBytes};
  live_bytes.series = {bytes};
  live_bytes.height = 280;
  live_bytes.note = resolution;
  charts::LineChart live_objects = live_bytes;
  live_objects.id = "live-objects";
  live_objects.title = "Live objects over the trace";
  live_objects.y = {"live objects", Unit::kCount};
  live_objects.series = {objects};
  page->AddSection(
      "profile", "Memory profile",
      absl::StrCat(charts::RenderLineChart(live_bytes), charts::RenderLineChart(live_objects)));
}

// Requests by size.
void AddSizes(const TraceStats& st, charts::HtmlPage* page) {
  charts::BarChart sizes;
  sizes.id = "size-histogram";
  sizes.title = "Requests by size";
  sizes.x_label =
      "requested size (power-of-two buckets: from the size shown to just under twice it)";
  sizes.y = {"allocations", Unit::kCount};
  for (const auto& [b, n] : st.size_histogram) {
    sizes.bars.push_back(
        {FormatValue(static_cast<double>(b), Unit::kBytes), static_cast<double>(n),
         b == 0 ? "zero-byte requests" : absl::StrCat(b, " to ", 2 * b - 1, " bytes")});
  }
  page->AddSection("sizes", "Allocation sizes", charts::RenderBarChart(sizes));
}

// Classes of containers: one row each, or the one unnamed class's line.
void AddClasses(const TraceStats& st, charts::HtmlPage* page) {
  if (st.has_class_table) {
    charts::HtmlTable classes(ClassHeaders(),
                              {true, false, true, true, true, false, true, false, false, false});
    for (const ClassSummary& c : st.classes) classes.AddRow(ClassRow(c));
    page->AddSection("classes", absl::StrCat("Classes (", st.classes.size(), ")"),
                     absl::StrCat(classes.Render("id=\"class-table\""),
                                  "<p class=\"note\">Blocks: min/median/max bytes. Built once: at "
                                  "most 10% of an arena's frees come before its last "
                                  "allocation.</p>"));
  } else {
    page->AddSection(
        "classes", "Classes",
        absl::StrCat("<p>", Escape(FormatClassTable(st.classes, false, st.captured())), "</p>"));
  }
}

// Arenas: each one's lifetime, and the table.
void AddArenas(const TraceStats& st, charts::HtmlPage* page) {
  charts::SpanChart life;
  life.id = "arena-lifetimes";
  life.title = "Arena lifetimes";
  life.x = {"event index", Unit::kCount, true, /*tight=*/true};
  life.note =
      "From each arena's creation (or first use) to its destruction; an arrow: still "
      "alive at the end of the trace. Arena 0 (grey) is the global heap.";
  charts::HtmlTable table({"arena", "first event", "last event", "allocs", "frees",
                           "bytes allocated", "peak live bytes", "state"},
                          {false, true, true, true, true, true, true, false});
  size_t shown = 0;
  for (const auto& [id, a] : st.arenas) {
    const bool global = id == 0;
    const std::string state = global ? "global" : (a.destroyed ? "destroyed" : "live at end");
    life.spans.push_back(
        {absl::StrCat(global ? "global (0)" : "arena ", global ? "" : absl::StrCat(id)),
         static_cast<double>(a.first_event),
         static_cast<double>(a.destroyed ? a.last_event : st.events), !a.destroyed && !global,
         global,
         absl::StrCat(a.allocs, " allocs, ", a.frees, " frees, peak ",
                      FormatValue(static_cast<double>(a.peak_live_bytes), Unit::kBytes), " live")});
    if (++shown <= 200) {
      table.AddRow({absl::StrCat(id), absl::StrCat(a.first_event), absl::StrCat(a.last_event),
                    absl::StrCat(a.allocs), absl::StrCat(a.frees), absl::StrCat(a.bytes_allocated),
                    absl::StrCat(a.peak_live_bytes), state});
    }
  }
  std::string arenas = charts::RenderSpanChart(life);
  absl::StrAppend(&arenas, table.Render("id=\"arena-table\""));
  if (st.arenas.size() > 200) {
    absl::StrAppend(&arenas, "<p class=\"note\">The first 200 of ", st.arenas.size(),
                    " arenas; inspect --json lists all.</p>");
  }
  page->AddSection("arenas", absl::StrCat("Arenas (", st.arenas.size(), ")"), arenas);
}

}  // namespace

std::string FormatTraceStatsHtml(const TraceStats& st, const std::string& path) {
  const proto::Header& h = st.header;
  charts::HtmlPage page(absl::StrCat("alloctrace trace: ", path));
  page.AddSubtitle(absl::StrCat("workload ", h.workload().empty() ? "?" : h.workload(),
                                ", program ", h.program().empty() ? "?" : h.program()));
  page.AddSubtitle(
      absl::StrCat("recorded ",
                   absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixNanos(h.start_unix_ns()),
                                    absl::UTCTimeZone()),
                   " on ", h.platform(), ", ", h.pointer_size() * 8, "-bit, pid ", h.pid()));
  if (!st.has_footer) {
    page.AddHtml(absl::StrCat("<div class=\"verdict bad\"><p>Incomplete: ", Escape(st.cut_short),
                              "; every complete chunk was read.</p></div>"));
  }

  AddSummary(st, &page);
  AddProfile(st, &page);
  AddSizes(st, &page);
  AddClasses(st, &page);
  AddArenas(st, &page);
  page.AddHtml(
      "<footer><p class=\"note\">Written by alloctrace inspect. Sizes are as requested by the "
      "program, before any allocator rounding.</p></footer>");
  return page.Render();
}

}  // namespace alloctrace
