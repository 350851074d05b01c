// A pointwise formula evaluated over tensors by the interpreter (formula_interpreter.h), element
// by element, with the same broadcasting, promotion and out= rules as the op's generated kernel:
// the reference that kernel is tested against (kiln._C._evaluate_formula).
#pragma once

#include <optional>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor_base.h"
#include "runtime/jit/formula.h"

namespace kiln {
namespace jit {

// A cast formula (f.cast_to) converts to `dtype` (None: the input's), through kiln::convert.
TensorBase evaluate_formula(const PointwiseFormula& f, const std::vector<TensorBase>& inputs,
                            const std::vector<Scalar>& scalars, std::optional<ScalarType> dtype = std::nullopt);
// A derivative row (kPointwiseDerivatives) over grad, result and the op's tensors, of one shape,
// computing in grad's dtype.
TensorBase evaluate_derivative(const PointwiseFormula& d, const std::vector<TensorBase>& inputs,
                               const std::vector<Scalar>& scalars);

}  // namespace jit
}  // namespace kiln
