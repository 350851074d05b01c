#include "runtime/jit/formula.h"

#include <cstring>

namespace kiln {
namespace jit {

const PointwiseFormula* find_formula(const char* op) {
  for (int i = 0; i < kNumPointwiseFormulas; ++i)
    if (std::strcmp(kPointwiseFormulas[i].overload, op) == 0) return &kPointwiseFormulas[i];
  for (int i = 0; i < kNumPointwiseFormulas; ++i)
    if (std::strcmp(kPointwiseFormulas[i].op, op) == 0) return &kPointwiseFormulas[i];
  return nullptr;
}

const PointwiseFormula* find_derivative(const char* op, const char* input) {
  for (int i = 0; i < kNumPointwiseDerivatives; ++i)
    if (std::strcmp(kPointwiseDerivatives[i].op, op) == 0 && std::strcmp(kPointwiseDerivatives[i].overload, input) == 0)
      return &kPointwiseDerivatives[i];
  return nullptr;
}

}  // namespace jit
}  // namespace kiln
