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
  if (m == nullptr) return "";
  const size_t slash = m->path.rfind('/');
  return slash == std::string::npos ? m->path : m->path.substr(slash + 1);
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

absl::StatusOr<CallSiteReport> ComputeCallSites(const std::string& path,
                                                const std::string& addr2line) {
  CallSiteReport report;
  // Pass 1: the stack table.
  CallSiteTable table;
  int depth_asked = 0;
  {
    absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
    if (!reader.ok()) return reader.status();
    absl::Status s = (*reader)->ForEachEvent([](const std::vector<Event>&) {},
                                             [](const Event&) { return absl::OkStatus(); });
    if (!s.ok()) return s;
    table = (*reader)->call_sites();
    if (!(*reader)->call_sites_error().empty()) {
      report.notes.push_back(absl::StrCat("call sites damaged: ", (*reader)->call_sites_error(),
                                          "; allocations from that chunk on are counted without "
                                          "a site"));
    }
    depth_asked = (*reader)->header().labels().contains("call_site_depth")
                      ? std::atoi((*reader)->header().labels().at("call_site_depth").c_str())
                      : 0;
  }
  report.has_sites = !table.empty();
  report.stacks = table.stacks().size();
  const Symbols symbols = Symbolize(table, addr2line);
  report.notes.insert(report.notes.end(), symbols.notes.begin(), symbols.notes.end());
  uint64_t frames = 0;
  for (const StackDef& s : table.stacks()) frames += s.pcs.size();
  if (depth_asked >= 4 && !table.empty() && 2 * frames <= 3 * table.stacks().size()) {
    report.notes.push_back(absl::StrCat(
        "stacks are ", absl::StrFormat("%.1f", static_cast<double>(frames) / table.stacks().size()),
        " frames deep on average (", depth_asked,
        " asked): the code above the allocating call has no frame pointers, so its callers "
        "are not known (built with -fno-omit-frame-pointer they are)"));
  }

  // Groups by allocating function; group 0 holds allocations without a site.
  std::vector<Counting> groups(1);
  groups[0].g.function = "(no call site)";
  absl::flat_hash_map<std::string, uint32_t> group_of_key;
  std::vector<uint32_t> group_of_stack(table.stacks().size() + 1, 0);
  std::vector<std::vector<std::string>> stack_text(table.stacks().size() + 1);
  for (const StackDef& s : table.stacks()) {
    report.max_depth = std::max<uint64_t>(report.max_depth, s.pcs.size());
    const std::vector<FrameName> chain = ChainOf(s, symbols);
    if (chain.empty()) continue;
    const size_t at = AllocatingFrame(chain);
    // The module of the allocating function: that of the pc it came from.
    size_t pc_index = 0;
    for (size_t seen = 0; pc_index < s.pcs.size(); ++pc_index) {
      auto it = symbols.frames.find({s.modules[pc_index], s.pcs[pc_index]});
      seen += it == symbols.frames.end() ? 0 : it->second.size();
      if (seen > at) break;
    }
    const std::string module =
        ModuleName(table, pc_index < s.modules.size() ? s.modules[pc_index] : 0);
    const std::string key = absl::StrCat(chain[at].function, "\t", module);
    auto [it, inserted] = group_of_key.try_emplace(key, static_cast<uint32_t>(groups.size()));
    if (inserted) {
      groups.emplace_back();
      groups.back().g.function = chain[at].function;
      groups.back().g.module = module;
    }
    group_of_stack[s.id] = it->second;
    for (size_t i = at; i < chain.size(); ++i) stack_text[s.id].push_back(FrameText(chain[i]));
    if (stack_text[s.id].empty()) stack_text[s.id].push_back(FrameText(chain.back()));
  }

  // Pass 2: count by group.
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  std::vector<uint32_t> obj_group;
  std::vector<uint64_t> obj_bytes, obj_born;
  const std::vector<uint64_t>* sites = nullptr;
  size_t next_site = 0;
  uint64_t op = 0;
  auto take_site = [&]() -> uint32_t {
    if (sites == nullptr || sites->empty() || next_site >= sites->size()) return 0;
    return static_cast<uint32_t>((*sites)[next_site++]);
  };
  auto alloc = [&](uint32_t object, uint64_t bytes, uint32_t site) {
    const uint32_t g = site < group_of_stack.size() ? group_of_stack[site] : 0;
    if (object >= obj_group.size()) {
      obj_group.resize(size_t{object} + 1);
      obj_bytes.resize(size_t{object} + 1);
      obj_born.resize(size_t{object} + 1);
    }
    obj_group[object] = g;
    obj_bytes[object] = bytes;
    obj_born[object] = op;
    Counting& c = groups[g];
    ++c.g.allocs;
    c.g.bytes += bytes;
    c.live_bytes += bytes;
    ++c.live_blocks;
    c.g.peak_live_bytes = std::max(c.g.peak_live_bytes, c.live_bytes);
    ++c.sizes[bytes];
    if (site != 0) ++c.by_stack[site];
    ++report.allocations;
    report.allocations_without_site += site == 0;
  };
  auto free = [&](uint32_t object) {
    if (object >= obj_group.size()) return;
    Counting& c = groups[obj_group[object]];
    c.live_bytes -= obj_bytes[object];
    --c.live_blocks;
    ++c.freed;
    ++c.lifetimes[std::min(LifetimeBucket(op - obj_born[object]), kLifetimeBuckets - 1)];
  };
  absl::Status s = reader.ForEachEvent(
      [&](const std::vector<Event>&) {
        sites = &reader.chunk_sites();
        next_site = 0;
      },
      [&](const Event& e) {
        switch (e.kind) {
          case OpKind::kAlloc:
            alloc(e.object, reader.shapes()[e.shape].bytes(), take_site());
            break;
          case OpKind::kFree:
            free(e.object);
            ++groups[obj_group[e.object]].g.memory_ops;
            break;
          case OpKind::kRealloc:
            free(e.old_object);
            alloc(e.object, reader.shapes()[e.shape].bytes(), take_site());
            break;
          default:
            return absl::OkStatus();
        }
        if (e.kind != OpKind::kFree) ++groups[obj_group[e.object]].g.memory_ops;
        ++op;
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  report.memory_ops = op;

  std::vector<uint32_t> kept;  // counting index -> index in report.groups
  for (size_t i = 0; i < groups.size(); ++i) {
    Counting& c = groups[i];
    kept.push_back(static_cast<uint32_t>(report.groups.size()));
    if (c.g.allocs == 0) continue;
    c.g.share = op == 0 ? 0 : static_cast<double>(c.g.memory_ops) / static_cast<double>(op);
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
      c.g.top_stack = stack_text[top];
      const std::vector<FrameName> chain = ChainOf(*table.stack(top), symbols);
      if (!chain.empty()) c.g.location = chain[AllocatingFrame(chain)].location;
    }
    report.groups.push_back(std::move(c.g));
  }
  std::vector<uint32_t> order(report.groups.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const SiteGroup& x = report.groups[a];
    const SiteGroup& y = report.groups[b];
    return x.memory_ops != y.memory_ops ? x.memory_ops > y.memory_ops : x.function < y.function;
  });
  std::vector<uint32_t> rank(order.size());
  std::vector<SiteGroup> sorted;
  for (uint32_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = r;
    sorted.push_back(std::move(report.groups[order[r]]));
  }
  report.groups = std::move(sorted);
  // A stack whose group made no allocation maps to the group without a site.
  const uint32_t no_site = groups[0].g.allocs > 0 ? rank[kept[0]] : 0;
  report.group_of_stack.assign(group_of_stack.size(), no_site);
  for (size_t id = 1; id < group_of_stack.size(); ++id) {
    const uint32_t g = group_of_stack[id];
    if (groups[g].g.allocs > 0) report.group_of_stack[id] = rank[kept[g]];
  }
  return report;
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
