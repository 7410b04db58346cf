// A valid trace whose every string is hostile markup, for tests of the HTML
// reports: its workload, program, platform and labels hold <script>
// elements, attribute break-outs and <img onerror> handlers. The events
// are ordinary: a churn of small blocks over the global heap and two
// arenas (one destroyed, one live at the end). Test-only.
#ifndef ALLOCTRACE_FORMAT_HOSTILE_TRACE_H_
#define ALLOCTRACE_FORMAT_HOSTILE_TRACE_H_

#include <string>

#include "absl/status/status.h"

namespace alloctrace {

// The strings, so tests can look for them escaped.
inline constexpr char kHostileScript[] = "<script>alert(1)</script>";
inline constexpr char kHostileImg[] = "\"><img src=x onerror=alert(1)>";
inline constexpr char kHostileTitle[] = "</title><script>document.title='PWNED'</script>";

absl::Status WriteHostileTrace(const std::string& path);

}  // namespace alloctrace

#endif  // ALLOCTRACE_FORMAT_HOSTILE_TRACE_H_
