// Luca Bolognese, "Writing functional code in C++ III: Performance of
// different allocation schemes" (2012): records kept in a vector by value,
// or through std::shared_ptr made with new or with make_shared.
#ifndef ALLOCTRACE_TRACER_WORKLOADS_RECORD_WORKLOADS_H_
#define ALLOCTRACE_TRACER_WORKLOADS_RECORD_WORKLOADS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "tracer/workloads/workload_params.h"
#include "tracer/workloads/workload_support.h"

namespace alloctrace::workloads {

enum class RecordStorage { kByValue, kSharedFromNew, kMakeShared };

// The article's record with bigBlock = 48: 64 bytes.
struct Record {
  int id;
  char k1[2];
  char k2[2];
  char k3[2];
  char k4[2];
  char k5[2];
  char k6[2];
  char mem[48];
};
static_assert(sizeof(Record) == 64);

// Parameters: records, rounds. Each round fills a fresh vector (its own
// arena) by push_back and destroys it.
template <template <typename> class Alloc, RecordStorage kStorage>
void RunRecords(const WorkloadParams& params, uint64_t /*seed*/) {
  const int64_t records = params.Get("records");
  const int64_t rounds = params.Get("rounds");
  for (int64_t round = 0; round < rounds; ++round) {
    if constexpr (kStorage == RecordStorage::kByValue) {
      std::vector<Record, Alloc<Record>> v;
      for (int64_t i = 0; i < records; ++i) {
        Record r{};
        r.id = static_cast<int>(i);
        v.push_back(r);
      }
    } else {
      using Ptr = std::shared_ptr<Record>;
      std::vector<Ptr, Alloc<Ptr>> v;
      for (int64_t i = 0; i < records; ++i) {
        Ptr r = kStorage == RecordStorage::kSharedFromNew
                    ? SharedFromNew<Alloc, Record>()
                    : std::allocate_shared<Record>(GlobalHeapAllocator<Alloc, Record>());
        r->id = static_cast<int>(i);
        v.push_back(std::move(r));
      }
    }
  }
}

}  // namespace alloctrace::workloads

#endif  // ALLOCTRACE_TRACER_WORKLOADS_RECORD_WORKLOADS_H_
