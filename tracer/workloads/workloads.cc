#include "alloctrace/tracer/workloads/workloads.h"

#include <memory>

#include "alloctrace/tracer/trace_allocator.h"
#include "alloctrace/tracer/workloads/workload_table.h"

namespace alloctrace::workloads {

const std::vector<WorkloadInfo>& AllWorkloads() {
  static const std::vector<WorkloadInfo>* const kAll = [] {
    auto* all = new std::vector<WorkloadInfo>;
    auto add = [all](const std::vector<WorkloadDef>& traced,
                     const std::vector<WorkloadDef>& plain) {
      for (size_t i = 0; i < traced.size(); ++i) {
        const WorkloadDef& def = traced[i];
        all->push_back({def.name, def.description, def.source, def.params, def.seeded, def.run,
                        plain[i].run, def.multi_threaded});
      }
    };
    add(WorkloadDefs<TraceAllocator>(), WorkloadDefs<std::allocator>());
    // TraceAllocator and std::allocator are both safe to share between threads.
    add(MultiThreadedWorkloadDefs<TraceAllocator>(), MultiThreadedWorkloadDefs<std::allocator>());
    return all;
  }();
  return *kAll;
}

const WorkloadInfo* FindWorkload(std::string_view name) {
  for (const WorkloadInfo& info : AllWorkloads()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace alloctrace::workloads
