// Pointwise formulas as data: each schema `pointwise:` formula as an expression tree, in the
// table generated/jit/pointwise_formulas.cc. The generated CPU kernels are rendered from the same
// trees (codegen/pointwise.py); the interpreter (formula_interpreter.h) and the JIT code
// generators read them here.
#pragma once

#include <cstdint>

#include "generated/jit/formula_ops.h"

namespace kiln {
namespace jit {

// One node; children are earlier nodes of the same formula (postorder: the root is the last).
struct FormulaNode {
  FormulaOp op;
  int16_t a, b, c;  // child node indices (-1: none)
  int16_t arg;      // Arg: which of the op's tensor arguments; Scalar: which Scalar argument
  double value;     // Const: the literal
};

enum class FormulaDtypes : int8_t { floating, numeric, all, integral };

struct PointwiseFormula {
  const char* op;       // the op's name (kiln.<op>)
  const char* overload; // its schema name ("add.Tensor")
  const char* functor;  // the name of its functor and generated files ("add", "pow_tensor_scalar")
  const char* text;     // the formula as the schema writes it
  const char* const* args;     // tensor arguments
  int nargs;
  const char* const* scalars;  // Scalar arguments (alpha, ...)
  int nscalars;
  const FormulaNode* nodes;
  int nnodes;
  FormulaDtypes dtypes;
  bool int_to_float;    // integer inputs compute in the default float dtype
  bool returns_bool;
  bool scalars_promote; // the Scalar arguments take part in type promotion (clamp, pow's exponent)
  // A cast formula (its root a Cast node): the ScalarType argument naming the result dtype; its
  // argument computes in the input's dtype. nullptr for every other formula.
  const char* cast_to;
};

extern const PointwiseFormula kPointwiseFormulas[];
extern const int kNumPointwiseFormulas;
// The derivatives of those ops, one per input (`overload` names the input; the arguments are
// grad, result, then the op's tensors).
extern const PointwiseFormula kPointwiseDerivatives[];
extern const int kNumPointwiseDerivatives;

// The formula of `op`: an overload's name ("pow.Tensor_Scalar"), or an op's name (its first
// formula); nullptr if none.
const PointwiseFormula* find_formula(const char* op);
// The derivative of overload `op` ("sigmoid", "pow.Tensor_Scalar") for `input`, or nullptr.
const PointwiseFormula* find_derivative(const char* op, const char* input);

}  // namespace jit
}  // namespace kiln
