#include "alloctrace/charts/html.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace alloctrace::charts {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and code points past U+10FFFF are invalid).
size_t Utf8Length(absl::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

constexpr char kCss[] = R"css(
:root{--fg:#1a1a1a;--muted:#555;--rule:#ccc;--band:#eef3f8;--bad:#a40000}
*{box-sizing:border-box}
body{font-family:"DejaVu Sans",system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
color:var(--fg);background:#fff;margin:0 auto;padding:16px 24px 40px;max-width:1320px;font-size:14px;line-height:1.4}
h1{font-size:22px;margin:4px 0 2px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid var(--rule);padding-bottom:3px}
h3{font-size:15px;margin:18px 0 4px}
p.sub{color:var(--muted);margin:2px 0;overflow-wrap:anywhere}
.verdict{border:2px solid #0072b2;background:#f2f8fc;padding:8px 12px;margin:12px 0;border-radius:4px}
.verdict p{margin:4px 0}
details>summary{cursor:pointer;color:#0072b2;font-size:13px;margin:4px 0}
.verdict details p{color:var(--muted);font-size:12.5px}.note{color:var(--muted);font-size:12.5px}.bad{color:var(--bad)}
figure.chart{margin:10px 0 18px;break-inside:avoid;page-break-inside:avoid}
figure.chart figcaption{font-weight:bold;font-size:13.5px;margin-bottom:2px}
figure.chart svg{display:block;max-width:100%;height:auto;font-family:inherit}
figure.chart text{font-size:11px;fill:#222}
figure.chart text.small{font-size:9px}
figure.chart .axis-label{font-size:12px;fill:#333}
figure.chart text.status{fill:#a40000;font-style:italic}
figure.chart .grid{stroke:#e8e8e8;stroke-width:1}
figure.chart .axis{stroke:#777;stroke-width:1}
figure.chart .band{fill:#dbe8f5}
figure.chart .pareto-label{font-size:10.5px;fill:#7a2f00}
figure.chart .cell-value,figure.chart .bar-value{font-size:10px}
.multiples{display:grid;gap:8px 20px;grid-template-columns:repeat(auto-fill,minmax(var(--panel,420px),1fr))}
.multiples figure.chart{margin:4px 0}
table{border-collapse:collapse;font-size:12.5px;margin:8px 0}
th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f4f4f4;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.tied td{background:var(--band)}tr.failed td{color:var(--bad)}
.scroll{overflow-x:auto;max-width:100%}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;margin:6px 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
code{font-family:"DejaVu Sans Mono",monospace;font-size:12.5px;overflow-wrap:anywhere}
@media print{body{max-width:none;padding:0;font-size:10pt}h2{break-after:avoid}
th{position:static}.scroll{overflow:visible}section{break-before:auto}
a{color:inherit;text-decoration:none}}
)css";

}  // namespace

std::string Escape(absl::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&#39;";
        ++i;
        continue;
      default:
        break;
    }
    const auto u = static_cast<uint8_t>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += kReplacement;
      ++i;
      continue;
    }
    if (u == 0x7F) {
      out += kReplacement;
      ++i;
      continue;
    }
    const size_t n = Utf8Length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string Truncate(absl::string_view s, size_t max_chars) {
  if (max_chars == 0) return "";
  // Offsets of the first max_chars code points (invalid bytes count as one).
  size_t chars = 0, i = 0, cut = absl::string_view::npos;
  while (i < s.size()) {
    if (chars == max_chars - 1) cut = i;
    const size_t n = Utf8Length(s, i);
    i += n == 0 ? 1 : n;
    ++chars;
    if (chars > max_chars) return absl::StrCat(s.substr(0, cut), "\xE2\x80\xA6");
  }
  return std::string(s);
}

std::string Element(absl::string_view tag, absl::string_view attrs_html, absl::string_view text) {
  return absl::StrCat("<", tag, attrs_html.empty() ? "" : " ", attrs_html, ">", Escape(text), "</",
                      tag, ">");
}

HtmlTable::HtmlTable(std::vector<std::string> headers, std::vector<bool> numeric)
    : headers_(std::move(headers)), numeric_(std::move(numeric)) {
  numeric_.resize(headers_.size(), false);
}

void HtmlTable::AddRow(const std::vector<std::string>& cells, absl::string_view row_class) {
  std::vector<std::string> escaped;
  escaped.reserve(cells.size());
  for (const std::string& c : cells) escaped.push_back(Escape(c));
  AddRowHtml(escaped, row_class);
}

void HtmlTable::AddRowHtml(const std::vector<std::string>& cells_html,
                           absl::string_view row_class) {
  absl::StrAppend(&body_, "<tr", row_class.empty() ? "" : " class=\"", Escape(row_class),
                  row_class.empty() ? "" : "\"", ">");
  for (size_t i = 0; i < cells_html.size(); ++i) {
    const bool num = i < numeric_.size() && numeric_[i];
    absl::StrAppend(&body_, num ? "<td class=\"num\">" : "<td>", cells_html[i], "</td>");
  }
  absl::StrAppend(&body_, "</tr>\n");
  ++rows_;
}

std::string HtmlTable::Render(absl::string_view attrs_html) const {
  std::string o = absl::StrCat("<div class=\"scroll\"><table", attrs_html.empty() ? "" : " ",
                               attrs_html, "><thead><tr>");
  for (size_t i = 0; i < headers_.size(); ++i) {
    absl::StrAppend(&o, numeric_[i] ? "<th class=\"num\">" : "<th>", Escape(headers_[i]), "</th>");
  }
  absl::StrAppend(&o, "</tr></thead>\n<tbody>\n", body_, "</tbody></table></div>\n");
  return o;
}

HtmlPage::HtmlPage(absl::string_view title) : title_(title) {}

void HtmlPage::AddSubtitle(absl::string_view text) { subtitles_.emplace_back(text); }

void HtmlPage::AddHtml(std::string html) { absl::StrAppend(&body_, html, "\n"); }

void HtmlPage::AddSection(absl::string_view id, absl::string_view heading, std::string body_html) {
  absl::StrAppend(&body_, "<section id=\"", Escape(id), "\">\n<h2>", Escape(heading), "</h2>\n",
                  body_html, "</section>\n");
}

std::string HtmlPage::Render() const {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Nothing may load or run: no scripts, no fetches, no images, fonts
      // or frames; only this file's own <style>.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"referrer\" content=\"no-referrer\">\n";
  absl::StrAppend(&o, "<title>", Escape(title_), "</title>\n<style>", kCss, "</style>\n",
                  "</head>\n<body>\n<header>\n<h1>", Escape(title_), "</h1>\n");
  for (const std::string& s : subtitles_)
    absl::StrAppend(&o, "<p class=\"sub\">", Escape(s), "</p>\n");
  absl::StrAppend(&o, "</header>\n<main>\n", body_, "</main>\n</body>\n</html>\n");
  return o;
}

}  // namespace alloctrace::charts
