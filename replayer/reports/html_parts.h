// What the HTML report's files share (html_page.cc, html_charts.cc): small
// readings of the view (HtmlTrace) and the charts each section draws.
// Internal to the reports package.
//
// Thread-safety: pure functions.
#ifndef ALLOCTRACE_REPLAYER_REPORTS_HTML_PARTS_H_
#define ALLOCTRACE_REPLAYER_REPORTS_HTML_PARTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "alloctrace/charts/svg.h"
#include "alloctrace/replayer/reports/report_html.h"

namespace alloctrace::html_internal {

// A policy that ranks: ok and not the harness floor (bump).
bool Contender(const HtmlPolicy& p);
// ns/op axes spend their width on the main group of policies (those far
// slower are drawn past a break, their value written) and turn logarithmic
// when that group still spans more than charts::kWideRatio.
charts::Axis SpeedAxis(std::string label, bool frame);
const HtmlPolicy* Find(const HtmlTrace& t, const std::string& name);
bool Contains(const std::vector<std::string>& names, const std::string& name);
// `names` less `drop`.
std::vector<std::string> Without(const std::vector<std::string>& names,
                                 const std::vector<std::string>& drop);
// The 1-based rank of each contender, as in the table's first column.
std::map<std::string, int> Ranks(const HtmlTrace& t);
// Names, escaped and joined; past `max` of them, how many more.
std::string Names(const std::vector<std::string>& names, size_t max);
std::string Interval(const HtmlEstimate& e, charts::Unit unit);
// The x (op index) of each RSS reading: the replay loop reads RSS after
// each of `readings` equal segments of the ops.
std::vector<double> CourseX(size_t readings, uint64_t ops);

// The chart sections (html_charts.cc), each with its element id.
std::string ProfileChart(const HtmlTrace& t, const std::string& id);
std::string SpeedChart(const HtmlTrace& t, const std::string& id);
std::string ScatterChart(const HtmlTrace& t, const std::string& id);
std::string EffectsHtml(const HtmlTrace& t, const std::string& id);
// html_per_container.cc: the verdict per container.
std::string PerContainerHtml(const PerContainerVerdict& v, const std::string& id);

}  // namespace alloctrace::html_internal

#endif  // ALLOCTRACE_REPLAYER_REPORTS_HTML_PARTS_H_
