#include "alloctrace/inspect/arena_usage.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "alloctrace/format/trace_reader.h"

namespace alloctrace {

std::string Grouped(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

// "1, 2 and 3", with "and N more" past the listed ones.
std::string ThreadList(const SharedArena& a) {
  std::vector<std::string> names;
  for (uint32_t t : a.threads) names.push_back(absl::StrCat(t));
  const uint64_t more = a.thread_count - a.threads.size();
  if (more > 0) names.push_back(absl::StrCat(more, " more"));
  if (names.size() == 1) return names[0];
  const std::string last = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " and ", last);
}

}  // namespace

void ArenaUsage::NoteThread(Arena& a, uint32_t arena, uint32_t thread) {
  const uint32_t previous = a.last_thread;
  a.last_thread = thread;
  if (previous == kNone) return;  // the arena's first event
  if (a.shared == kNone) {
    a.shared = static_cast<uint32_t>(shared_.size());
    Sharing& s = shared_.emplace_back();
    s.arena = arena;
    s.listed = {previous};
    s.seen.insert(previous);
  }
  Sharing& s = shared_[a.shared];
  if (s.seen.insert(thread).second && s.listed.size() < ArenaUsageSummary::kMaxListedThreads) {
    s.listed.push_back(thread);
  }
}

ArenaUsageSummary ArenaUsage::Summarize(const TraceReader& reader) const {
  ArenaUsageSummary out;
  out.shared_count = shared_.size();
  for (const Sharing& s : shared_) {
    if (out.shared.size() == ArenaUsageSummary::kMaxListedArenas) break;
    SharedArena a;
    a.arena = reader.arena_id(s.arena);
    for (uint32_t t : s.listed) a.threads.push_back(reader.thread_id(t));
    a.thread_count = s.seen.size();
    out.shared.push_back(std::move(a));
  }
  for (const Arena& a : arenas_) {
    if (a.peak == 0) continue;
    ++out.arenas_used;
    if (a.peak == 1) ++out.arenas_single_block;
  }
  return out;
}

std::string ArenaUsageSummary::SharingWords() const {
  if (shared.empty()) return "";
  const SharedArena& first = shared.front();
  std::string words =
      absl::StrCat("arena ", first.arena, " is used by threads ", ThreadList(first));
  if (shared_count > 1) {
    absl::StrAppend(&words, " (and ", shared_count - 1, " more arena", shared_count > 2 ? "s" : "",
                    " by several threads)");
  }
  return words;
}

std::string ArenaUsageSummary::ShapeWords() const {
  // "Most": more than half of the arenas, and more than a handful.
  if (arenas_used < 10 || arenas_single_block * 2 <= arenas_used) return "";
  return absl::StrCat(Grouped(arenas_single_block), " of ", Grouped(arenas_used),
                      " arenas never hold more than 1 block: a pool per container pays a "
                      "pool per arena here (per string, if each string has its own "
                      "allocator); compare the per-container and shared holdings");
}

}  // namespace alloctrace
