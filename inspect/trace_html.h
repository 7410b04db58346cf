// The HTML page `inspect --html` writes for one trace: its header, counts,
// live bytes and live objects over the trace, the size histogram and each
// arena's lifetime, as one self-contained file (inline CSS and SVG; nothing
// loaded from elsewhere). Every string from the trace (workload, program,
// platform, labels) and the path is escaped: a trace is untrusted input.
#ifndef ALLOCTRACE_INSPECT_TRACE_HTML_H_
#define ALLOCTRACE_INSPECT_TRACE_HTML_H_

#include <string>

#include "alloctrace/inspect/trace_stats.h"

namespace alloctrace {

// `path` is shown as the page's title, as the user named the trace.
std::string FormatTraceStatsHtml(const TraceStats& stats, const std::string& path);

}  // namespace alloctrace

#endif  // ALLOCTRACE_INSPECT_TRACE_HTML_H_
