// Reports and, for tests, overrides the target Highway's dynamic dispatch picks for the vector
// kernels. Every kernel's HWY_DYNAMIC_DISPATCH calls the best target of its own HWY_TARGETS that
// hwy::SupportedTargets() allows; with the same target list (vector_targets.h) that is the best
// of the mask below, so this file needs Highway's target bookkeeping only, not its vector headers.
#include "runtime/kernels/cpu/vector_dispatch.h"

#include "runtime/kernels/cpu/vector_targets.h"
#include "runtime/kernels/pointwise_math.h"
#include <hwy/targets.h>

namespace kiln {
namespace cpu {
namespace {

// The compiled targets this CPU supports, read once, before any use_vector_target() narrows
// what hwy::SupportedTargets() reports.
int64_t cpu_targets() {
  static const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return targets;
}

int64_t best(int64_t targets) { return targets & -targets; }  // lower bits are better targets

}  // namespace

std::string vector_target() { return hwy::TargetName(best(hwy::SupportedTargets() & HWY_TARGETS)); }

std::vector<std::string> vector_targets_available() {
  std::vector<std::string> names;
  for (int64_t targets = cpu_targets(); targets != 0; targets &= targets - 1) names.push_back(hwy::TargetName(best(targets)));
  return names;
}

bool use_vector_target(const std::string& target) {
  int64_t chosen = 0;  // 0: Highway's own choice
  if (!target.empty()) {
    for (int64_t targets = cpu_targets(); targets != 0; targets &= targets - 1) {
      if (target == hwy::TargetName(best(targets))) chosen = best(targets);
    }
    if (chosen == 0) return false;
  }
  // Highway's hook for running its own tests on every target: SupportedTargets() then reports
  // only `chosen`, and updating the chosen target redirects every kernel's dispatch table.
  hwy::SetSupportedTargetsForTest(chosen);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return true;
}

bool torch_fuses_multiply_add() { return pm::torch_kernels_use_fma(); }

}  // namespace cpu
}  // namespace kiln
