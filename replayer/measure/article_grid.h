// The article grid's entry into the replay's set (--policies=default,
// measure.h): the article's pool policies of each storage kind that may
// serve the trace either all enter the race, or, without the race, the
// fastest of each kind in a short screen joins the set. Those the default
// set leaves out are counted by reason in one note of the trace.
//
// Thread-safety: single-threaded; the screen forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_MEASURE_ARTICLE_GRID_H_
#define ALLOCTRACE_REPLAYER_MEASURE_ARTICLE_GRID_H_

#include <functional>
#include <memory>
#include <vector>

#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/measure/entries.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/measure/measured_trace.h"
#include "alloctrace/replayer/measure/rounds.h"
#include "alloctrace/replayer/measure/runs.h"

namespace alloctrace::measure_internal {

// A runner of `entries` for the screen's runs (the replay's: ReplayRunner).
using RunnerFor = std::function<std::unique_ptr<ContenderRunner>(std::vector<Entry>& entries)>;

// Adds the article grid to `entries`: with s.rounds.race, every article
// policy that may serve `program`; without it, the fastest of each
// storage kind in a screen of s.screen_runs shuffled rounds (by
// `ranking`, run by `runner_for`; the order drawn from s.rounds.seed),
// and a policy that fails in the screen as failed (never hidden). What
// the default set left out goes into trace->left_out_notes.
void EnterArticleGrid(std::vector<Entry>& entries, const PolicyInfos& policies,
                      const ReplayProgram& program, const MeasureSettings& s,
                      const Ranking& ranking, const RunnerFor& runner_for, TraceFacts* trace);

}  // namespace alloctrace::measure_internal

#endif  // ALLOCTRACE_REPLAYER_MEASURE_ARTICLE_GRID_H_
