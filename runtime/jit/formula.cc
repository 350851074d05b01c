#include "runtime/jit/formula.h"

#include <cstring>

namespace kiln {
namespace jit {

const PointwiseFormula* find_formula(const char* op) {
  for (int i = 0; i < kNumPointwiseFormulas; ++i)
    if (std::strcmp(kPointwiseFormulas[i].op, op) == 0) return &kPointwiseFormulas[i];
  return nullptr;
}

}  // namespace jit
}  // namespace kiln
