// HTML building blocks for self-contained reports: escaping, a page with
// inline CSS and tables.
//
// Trust rule: every function here takes untrusted text (anything from a
// trace or a command line: workload, program, labels, policy names) as
// `absl::string_view text`-style parameters and escapes it; parameters named
// `*_html` take markup produced by this package's builders and are inserted
// as is. A page loads nothing from outside itself: no script, no stylesheet,
// font or image by URL, and its Content-Security-Policy forbids all of them,
// so even markup that slipped through escaping could not run a script or
// reach the network.
//
// Thread-compatible; no I/O.
#ifndef ALLOCTRACE_CHARTS_HTML_H_
#define ALLOCTRACE_CHARTS_HTML_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace alloctrace::charts {

// Escapes `s` for an HTML text node or a double- or single-quoted attribute
// value: & < > " ' become entities. Bytes that are not valid UTF-8 and
// control characters other than tab, newline and carriage return become
// U+FFFD, so any byte string yields a well-formed document.
std::string Escape(absl::string_view s);

// At most `max_chars` code points of `s` (UTF-8), with "…" as the last one
// when it was cut. Not escaped.
std::string Truncate(absl::string_view s, size_t max_chars);

// `<tag attrs>escaped text</tag>`. `attrs_html` is trusted markup.
std::string Element(absl::string_view tag, absl::string_view attrs_html, absl::string_view text);

// A table: header cells and body cells are text (escaped), unless added
// with the *Html variants.
class HtmlTable {
 public:
  // `numeric[i]` right-aligns column i (tabular figures).
  HtmlTable(std::vector<std::string> headers, std::vector<bool> numeric = {});
  void AddRow(const std::vector<std::string>& cells, absl::string_view row_class = "");
  void AddRowHtml(const std::vector<std::string>& cells_html, absl::string_view row_class = "");
  size_t rows() const { return rows_; }
  std::string Render(absl::string_view attrs_html = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> numeric_;
  std::string body_;
  size_t rows_ = 0;
};

// One self-contained HTML5 document: inline CSS (screen and print), a
// heading, then the parts in order.
class HtmlPage {
 public:
  explicit HtmlPage(absl::string_view title);
  // A line under the heading (text, escaped).
  void AddSubtitle(absl::string_view text);
  // Trusted markup from this package's builders.
  void AddHtml(std::string html);
  // <section id=...><h2>heading</h2>body</section>; id and heading escaped.
  void AddSection(absl::string_view id, absl::string_view heading, std::string body_html);
  std::string Render() const;

 private:
  std::string title_;
  std::vector<std::string> subtitles_;
  std::string body_;
};

}  // namespace alloctrace::charts

#endif  // ALLOCTRACE_CHARTS_HTML_H_
