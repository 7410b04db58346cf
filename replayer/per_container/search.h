// The per-container search (replayer --per_container): which policy each
// class of containers should use, found by replaying mixes (a policy per
// class, engine/mix_allocator.h) on the same paired rounds, race and
// statistics as the single verdict (measure/measure.h, verdict/summary.h).
//
// The search:
//  1. Start from the single verdict's pick: a pool on every class (the
//     heap, glibc malloc, for the rest), or, if it picked a malloc, every
//     class on that malloc (the heap).
//  2. For each class carrying at least SearchSettings::min_share of the
//     memory ops, largest first: race its candidates (the heap, and the
//     pools of kOurPoolsInOrder the safety rule allows for it, classes.h),
//     the other classes held. The class moves only to a policy the race
//     shows faster than the one it holds (verdict/per_container_verdict.h:
//     DecideReplayClassRace). Classes below the share stay as they are,
//     and are listed.
//  3. Repeat the sweep while a class changed, at most max_sweeps times.
//  4. Race the final mix against the best single choice and std (every
//     class on the heap), all three as mixes, glibc malloc the reference
//     (ReadFinalRace: the mix is the answer only if shown faster).
// Every contender of every race is a mix, the single choices too, so all
// pay the mix's dispatch alike. Ranked by the cold pass (the default), a
// race's runs make that pass only.
//
// Cost: each race gets an equal part of the single verdict's measuring
// time (at least SearchSettings::min_race_seconds): a sweep and the final
// race cost about the single verdict's time, so the per-container command
// costs about twice the single verdict when no class changes and up to
// about three times with a second sweep.
//
// Thread-safety: single-threaded; forks and waits for children.
#ifndef ALLOCTRACE_REPLAYER_PER_CONTAINER_SEARCH_H_
#define ALLOCTRACE_REPLAYER_PER_CONTAINER_SEARCH_H_

#include <string>
#include <vector>

#include "alloctrace/replayer/engine/replay_program.h"
#include "alloctrace/replayer/engine/thread_schedule.h"
#include "alloctrace/replayer/measure/measure.h"
#include "alloctrace/replayer/verdict/per_container_verdict.h"
#include "alloctrace/replayer/verdict/summary.h"

namespace alloctrace {

struct SearchSettings {
  double min_share = 0.05;  // classes below it are held
  int max_sweeps = 2;
  double min_race_seconds = 4;  // a race's total budget at least
  double single_seconds = 0;    // the single verdict's measuring time
};

// The per-container verdict of `shared`, from the single verdict `single`
// (its pick: the search's start). `s` and `ctx` are the single verdict's
// settings (each race's budget is set here); `self` is re-executed for
// each run.
PerContainerVerdict SearchPerContainer(const SharedProgram& shared, const TraceReport& single,
                                       const PolicyInfos& infos, const std::string& self,
                                       const MeasureSettings& s, const ReportContext& ctx,
                                       const SearchSettings& search);

}  // namespace alloctrace

#endif  // ALLOCTRACE_REPLAYER_PER_CONTAINER_SEARCH_H_
