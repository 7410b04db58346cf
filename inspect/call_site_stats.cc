#include "alloctrace/inspect/call_site_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "alloctrace/format/trace_reader.h"
#include "alloctrace/inspect/trace_stats.h"

namespace alloctrace {
namespace {

// A demangled name without its template arguments and parameters:
// "ns::Foo<std::allocator<int> >::Bar(int)" -> "ns::Foo::Bar".
std::string BareName(const std::string& name) {
  std::string out;
  int angle = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '(' && angle == 0 && !absl::EndsWith(out, "operator")) break;
    if (c == '<' && !absl::EndsWith(out, "operator")) {
      ++angle;
    } else if (c == '>' && angle > 0) {
      --angle;
    } else if (angle == 0) {
      out.push_back(c);
    }
  }
  // A template function's return type comes first ("long& std::vector::
  // emplace_back"): the name is the last word, or from "operator" on.
  const size_t op = out.find("operator");
  if (op != std::string::npos) {
    const size_t space = out.rfind(' ', op);
    return space == std::string::npos ? out : out.substr(space + 1);
  }
  const size_t space = out.rfind(' ');
  return space == std::string::npos ? out : out.substr(space + 1);
}

bool IsAllocationWrapper(const FrameName& f) {
  if (!f.named) return false;
  // Inlined calls are named without their namespace: a function from the
  // C++ standard library's headers is one of its wrappers.
  if (absl::StrContains(f.file, "/include/c++/")) return true;
  const std::string n = BareName(f.function);
  if (absl::StartsWith(n, "std::") || absl::StartsWith(n, "__gnu_cxx::") ||
      absl::StartsWith(n, "operator new")) {
    return true;
  }
  return absl::StrContains(absl::AsciiStrToLower(n), "alloc");
}

std::string ModuleName(const CallSiteTable& table, uint32_t module) {
  const ModuleDef* m = table.module(module);
  return m == nullptr ? "" : FileNameOf(m->path);
}

// Lifetimes in buckets of a quarter power of two: the median to within 19%.
constexpr int kLifetimeBuckets = 4 * 65;
int LifetimeBucket(uint64_t ops) {
  return static_cast<int>(4 * std::log2(static_cast<double>(ops) + 1));
}
uint64_t BucketFloor(int bucket) {
  return static_cast<uint64_t>(std::exp2(bucket / 4.0) - 1 + 0.5);
}

// A group as it is counted.
struct Counting {
  SiteGroup g;
  uint64_t live_bytes = 0;
  uint64_t live_blocks = 0;
  uint64_t freed = 0;
  std::vector<uint64_t> lifetimes = std::vector<uint64_t>(kLifetimeBuckets, 0);
  std::map<uint64_t, uint64_t> sizes;                // bytes -> allocations
  absl::flat_hash_map<uint32_t, uint64_t> by_stack;  // stack id -> allocations
};

uint64_t MedianOf(const std::map<uint64_t, uint64_t>& counts, uint64_t total) {
  uint64_t seen = 0;
  for (const auto& [value, n] : counts) {
    seen += n;
    if (2 * seen >= total) return value;
  }
  return 0;
}

uint64_t MedianLifetime(const std::vector<uint64_t>& buckets, uint64_t total) {
  uint64_t seen = 0;
  for (int b = 0; b < kLifetimeBuckets; ++b) {
    seen += buckets[b];
    if (total > 0 && 2 * seen >= total) return BucketFloor(b);
  }
  return 0;
}

// One stack's frames, each pc expanded into its inlined functions.
std::vector<FrameName> ChainOf(const StackDef& s, const Symbols& symbols) {
  std::vector<FrameName> chain;
  for (size_t i = 0; i < s.pcs.size(); ++i) {
    auto it = symbols.frames.find({s.modules[i], s.pcs[i]});
    if (it != symbols.frames.end()) chain.insert(chain.end(), it->second.begin(), it->second.end());
  }
  return chain;
}

std::string FrameText(const FrameName& f) {
  return f.location.empty() ? f.function : absl::StrCat(f.function, " (", f.location, ")");
}

}  // namespace

size_t AllocatingFrame(const std::vector<FrameName>& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    if (!IsAllocationWrapper(chain[i])) return i;
  }
  return chain.empty() ? 0 : chain.size() - 1;
}

namespace {

// ComputeCallSites in its steps, sharing what they build.
class SiteCount {
 public:
  SiteCount(const std::string& path, const std::string& addr2line)
      : path_(path), addr2line_(addr2line) {}

  // Pass 1: the stack table, named; notes on its state.
  absl::Status ReadTable();
  // Groups the stacks by allocating function (group 0: no site).
  void GroupStacks();
  // Pass 2: every allocation and free counted in its group.
  absl::Status Count();
  // The groups' figures, sorted by memory ops, and the stacks' map to them.
  CallSiteReport Finish();

 private:
  void Alloc(uint32_t object, uint64_t bytes, uint32_t site);
  void Free(uint32_t object);

  const std::string path_;
  const std::string addr2line_;
  CallSiteReport report_;
  CallSiteTable table_;
  Symbols symbols_;
  std::vector<Counting> groups_;
  std::vector<uint32_t> group_of_stack_;
  std::vector<std::vector<std::string>> stack_text_;
  std::vector<uint32_t> obj_group_;
  std::vector<uint64_t> obj_bytes_, obj_born_;
  uint64_t op_ = 0;
};

absl::Status SiteCount::ReadTable() {
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path_);
  if (!reader.ok()) return reader.status();
  absl::Status s = (*reader)->ForEachEvent([](const std::vector<Event>&) {},
                                           [](const Event&) { return absl::OkStatus(); });
  if (!s.ok()) return s;
  table_ = (*reader)->call_sites();
  if (!(*reader)->call_sites_error().empty()) {
    report_.notes.push_back(absl::StrCat("call sites damaged: ", (*reader)->call_sites_error(),
                                         "; allocations from that chunk on are counted without "
                                         "a site"));
  }
  const auto& labels = (*reader)->header().labels();
  const int depth_asked =
      labels.contains("call_site_depth") ? std::atoi(labels.at("call_site_depth").c_str()) : 0;
  // Recorded with call sites: asked for in the header, or a table there
  // (or one that was damaged, its error a note above).
  report_.has_sites = depth_asked > 0 || !table_.empty() || !(*reader)->call_sites_error().empty();
  report_.stacks = table_.stacks().size();
  symbols_ = Symbolize(table_, addr2line_);
  report_.notes.insert(report_.notes.end(), symbols_.notes.begin(), symbols_.notes.end());
  uint64_t frames = 0;
  for (const StackDef& st : table_.stacks()) frames += st.pcs.size();
  if (depth_asked >= 4 && !table_.empty() && 2 * frames <= 3 * table_.stacks().size()) {
    report_.notes.push_back(absl::StrCat(
        "stacks are ",
        absl::StrFormat("%.1f", static_cast<double>(frames) / table_.stacks().size()),
        " frames deep on average (", depth_asked,
        " asked): the code above the allocating call has no frame pointers, so its callers "
        "are not known (built with -fno-omit-frame-pointer they are)"));
  }
  return absl::OkStatus();
}

void SiteCount::GroupStacks() {
  groups_.resize(1);
  groups_[0].g.function = "(no call site)";
  absl::flat_hash_map<std::string, uint32_t> group_of_key;
  group_of_stack_.assign(table_.stacks().size() + 1, 0);
  stack_text_.assign(table_.stacks().size() + 1, {});
  for (const StackDef& s : table_.stacks()) {
    report_.max_depth = std::max<uint64_t>(report_.max_depth, s.pcs.size());
    const std::vector<FrameName> chain = ChainOf(s, symbols_);
    if (chain.empty()) continue;
    const size_t at = AllocatingFrame(chain);
    // The module of the allocating function: that of the pc it came from.
    size_t pc_index = 0;
    for (size_t seen = 0; pc_index < s.pcs.size(); ++pc_index) {
      auto it = symbols_.frames.find({s.modules[pc_index], s.pcs[pc_index]});
      seen += it == symbols_.frames.end() ? 0 : it->second.size();
      if (seen > at) break;
    }
    const std::string module =
        ModuleName(table_, pc_index < s.modules.size() ? s.modules[pc_index] : 0);
    const std::string key = absl::StrCat(chain[at].function, "\t", module);
    auto [it, inserted] = group_of_key.try_emplace(key, static_cast<uint32_t>(groups_.size()));
    if (inserted) {
      groups_.emplace_back();
      groups_.back().g.function = chain[at].function;
      groups_.back().g.module = module;
    }
    group_of_stack_[s.id] = it->second;
    for (size_t i = at; i < chain.size(); ++i) stack_text_[s.id].push_back(FrameText(chain[i]));
  }
}

void SiteCount::Alloc(uint32_t object, uint64_t bytes, uint32_t site) {
  const uint32_t g = site < group_of_stack_.size() ? group_of_stack_[site] : 0;
  if (object >= obj_group_.size()) {
    obj_group_.resize(size_t{object} + 1);
    obj_bytes_.resize(size_t{object} + 1);
    obj_born_.resize(size_t{object} + 1);
  }
  obj_group_[object] = g;
  obj_bytes_[object] = bytes;
  obj_born_[object] = op_;
  Counting& c = groups_[g];
  ++c.g.allocs;
  ++c.g.memory_ops;
  c.g.bytes += bytes;
  c.live_bytes += bytes;
  ++c.live_blocks;
  c.g.peak_live_bytes = std::max(c.g.peak_live_bytes, c.live_bytes);
  ++c.sizes[bytes];
  if (site != 0) ++c.by_stack[site];
  ++report_.allocations;
  report_.allocations_without_site += site == 0;
}

void SiteCount::Free(uint32_t object) {
  if (object >= obj_group_.size()) return;
  Counting& c = groups_[obj_group_[object]];
  c.live_bytes -= obj_bytes_[object];
  --c.live_blocks;
  ++c.freed;
  ++c.lifetimes[std::min(LifetimeBucket(op_ - obj_born_[object]), kLifetimeBuckets - 1)];
}

absl::Status SiteCount::Count() {
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path_);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  const std::vector<uint64_t>* sites = nullptr;
  size_t next_site = 0;
  auto take_site = [&]() -> uint32_t {
    if (sites == nullptr || next_site >= sites->size()) return 0;
    return static_cast<uint32_t>((*sites)[next_site++]);
  };
  absl::Status s = reader.ForEachEvent(
      [&](const std::vector<Event>&) {
        sites = &reader.chunk_sites();
        next_site = 0;
      },
      [&](const Event& e) {
        switch (e.kind) {
          case OpKind::kAlloc:
            Alloc(e.object, reader.shapes()[e.shape].bytes(), take_site());
            break;
          case OpKind::kFree:
            Free(e.object);
            if (e.object < obj_group_.size()) ++groups_[obj_group_[e.object]].g.memory_ops;
            break;
          case OpKind::kRealloc:  // one memory op, counted in the new block's group
            Free(e.old_object);
            Alloc(e.object, reader.shapes()[e.shape].bytes(), take_site());
            break;
          default:
            return absl::OkStatus();
        }
        ++op_;
        return absl::OkStatus();
      });
  report_.memory_ops = op_;
  return s;
}

CallSiteReport SiteCount::Finish() {
  // Each group's figures, then the groups by memory ops (rank: counting
  // index -> place in the report; groups that made no allocation drop out).
  std::vector<std::pair<uint32_t, SiteGroup>> made;
  for (size_t i = 0; i < groups_.size(); ++i) {
    Counting& c = groups_[i];
    if (c.g.allocs == 0) continue;
    c.g.share = op_ == 0 ? 0 : static_cast<double>(c.g.memory_ops) / static_cast<double>(op_);
    c.g.median_block = MedianOf(c.sizes, c.g.allocs);
    c.g.median_lifetime_ops = MedianLifetime(c.lifetimes, c.freed);
    c.g.live_at_end = static_cast<double>(c.live_blocks) / static_cast<double>(c.g.allocs);
    c.g.stacks = c.by_stack.size();
    uint32_t top = 0;
    uint64_t top_n = 0;
    for (const auto& [stack, n] : c.by_stack) {
      if (n > top_n || (n == top_n && stack < top)) top = stack, top_n = n;
    }
    if (top != 0) {
      c.g.top_stack = stack_text_[top];
      const std::vector<FrameName> chain = ChainOf(*table_.stack(top), symbols_);
      if (!chain.empty()) c.g.location = chain[AllocatingFrame(chain)].location;
    }
    made.emplace_back(static_cast<uint32_t>(i), std::move(c.g));
  }
  std::sort(made.begin(), made.end(), [](const auto& a, const auto& b) {
    const SiteGroup& x = a.second;
    const SiteGroup& y = b.second;
    return x.memory_ops != y.memory_ops ? x.memory_ops > y.memory_ops : x.function < y.function;
  });
  std::vector<uint32_t> rank(groups_.size(), 0);
  for (uint32_t r = 0; r < made.size(); ++r) {
    rank[made[r].first] = r;
    report_.groups.push_back(std::move(made[r].second));
  }
  // A stack whose group made no allocation maps to the group without a site.
  const uint32_t no_site = rank[0];
  report_.group_of_stack.assign(group_of_stack_.size(), no_site);
  for (size_t id = 1; id < group_of_stack_.size(); ++id) {
    const uint32_t g = group_of_stack_[id];
    if (groups_[g].g.allocs > 0 || g == 0) report_.group_of_stack[id] = rank[g];
  }
  return std::move(report_);
}

}  // namespace

absl::StatusOr<CallSiteReport> ComputeCallSites(const std::string& path,
                                                const std::string& addr2line) {
  SiteCount count(path, addr2line);
  if (absl::Status s = count.ReadTable(); !s.ok()) return s;
  count.GroupStacks();
  if (absl::Status s = count.Count(); !s.ok()) return s;
  return count.Finish();
}

std::string FormatCallSitesText(const CallSiteReport& r, size_t limit) {
  if (!r.has_sites) {
    return "no call sites: the trace was recorded without them (capture --call_sites=N "
           "records them)\n";
  }
  std::string o = absl::StrFormat(
      "call sites: %d stacks (up to %d frames) in %d allocating functions; %d of %d "
      "allocations without a site\n",
      r.stacks, r.max_depth, r.groups.size(), r.allocations_without_site, r.allocations);
  for (const std::string& note : r.notes) absl::StrAppend(&o, "  ", note, "\n");
  absl::StrAppendFormat(&o, "\n%-4s %9s %6s %10s %10s %10s %8s %12s %7s  %s\n", "#", "mem ops",
                        "share", "allocs", "bytes", "peak live", "median", "lifetime", "at end",
                        "allocating function");
  for (size_t i = 0; i < r.groups.size() && i < limit; ++i) {
    const SiteGroup& g = r.groups[i];
    const std::string lifetime = g.median_lifetime_ops == 0 && g.live_at_end == 1
                                     ? "-"
                                     : absl::StrCat("~", g.median_lifetime_ops);
    std::string where = g.location.empty() ? g.module : absl::StrCat(g.location, ", ", g.module);
    absl::StrAppendFormat(&o, "%-4d %9d %5.1f%% %10d %10s %10s %8s %12s %6.0f%%  %s%s\n", i + 1,
                          g.memory_ops, 100 * g.share, g.allocs, HumanBytes(g.bytes),
                          HumanBytes(g.peak_live_bytes), HumanBytes(g.median_block), lifetime,
                          100 * g.live_at_end, g.function,
                          where.empty() ? "" : absl::StrCat("  [", where, "]"));
    for (size_t f = 1; f < g.top_stack.size() && f < 4; ++f) {
      absl::StrAppend(&o, std::string(62, ' '), "<- ", g.top_stack[f], "\n");
    }
  }
  if (r.groups.size() > limit) {
    absl::StrAppendFormat(&o, "(%d more; --sites=N shows N)\n", r.groups.size() - limit);
  }
  absl::StrAppend(&o,
                  "\nlifetime: median ops of the whole trace between a block's allocation and "
                  "its free; at end: share of its blocks never freed\n");
  return o;
}

}  // namespace alloctrace
