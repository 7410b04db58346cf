#include "alloctrace/replayer/engine/mix_allocator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "alloctrace/base/check.h"
#include "alloctrace/replayer/engine/runnable_policies.h"
#include "alloctrace/replayer/engine/thread_replay.h"
#include "alloctrace/replayer/engine/thread_window_server.h"
#include "alloctrace/replayer/engine/window_loop.h"
#include "alloctrace/replayer/engine/window_server.h"

namespace alloctrace {
namespace {

const MixPlan* g_plan = nullptr;

}  // namespace

absl::StatusOr<MixPlan> MakeMixPlan(const MixSpec& spec, const ReplayView& program,
                                    const std::map<std::string, MakeErasedFn>& makers) {
  MixPlan plan;
  std::map<std::string, uint8_t> slot_of_policy;
  auto slot = [&](const std::string& policy) -> absl::StatusOr<uint8_t> {
    auto it = slot_of_policy.find(policy);
    if (it != slot_of_policy.end()) return it->second;
    auto maker = makers.find(policy);
    if (maker == makers.end() || maker->second == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("mix names unknown policy ", policy));
    }
    plan.makers.push_back(maker->second);
    const uint8_t s = static_cast<uint8_t>(plan.makers.size() - 1);
    slot_of_policy[policy] = s;
    return s;
  };
  // Slot 0 is the rest's: arena 0 and every class not assigned.
  if (absl::StatusOr<uint8_t> s = slot(spec.rest); !s.ok()) return s.status();
  std::map<uint32_t, uint8_t> slot_of_class;
  for (const auto& [id, policy] : spec.by_class) {
    absl::StatusOr<uint8_t> s = slot(policy);
    if (!s.ok()) return s.status();
    slot_of_class[id] = *s;
  }
  plan.slot_of_arena.assign(program.arena_limit, 0);
  if (program.arena_classes != nullptr) {
    for (uint32_t a = 1; a < program.arena_limit; ++a) {
      auto it = slot_of_class.find(program.arena_classes[a]);
      if (it != slot_of_class.end()) plan.slot_of_arena[a] = it->second;
    }
  }
  return plan;
}

allocators::AllocatorInfo MixAllocator::Info() {
  return allocators::AllocatorInfo{"mix", allocators::Family::kOurs,
                                   "a policy per class of containers"};
}

void MixAllocator::UsePlan(const MixPlan* plan) { g_plan = plan; }

MixAllocator::MixAllocator() {
  ALLOCTRACE_CHECK(g_plan != nullptr && !g_plan->makers.empty(),
                   "a MixAllocator needs a plan (MixAllocator::UsePlan)");
  for (MakeErasedFn make : g_plan->makers) slots_.push_back(make());
  slot_of_arena_ = g_plan->slot_of_arena.data();
  num_arenas_ = g_plan->slot_of_arena.size();
}

RunnablePolicy MixRunnablePolicy() {
  return RunnablePolicy{MixAllocator::Info(),
                        &ReplayWith<MixAllocator>,
                        &ReplayPerThreadWith<MixAllocator>,
                        &ReplayWindowsWith<MixAllocator>,
                        nullptr,
                        &ServeWindowsWith<MixAllocator>,
                        &ServeThreadWindowsWith<MixAllocator>};
}

}  // namespace alloctrace
