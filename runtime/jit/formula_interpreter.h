// Evaluates a pointwise formula tree on one element, in the compute type T, with the intrinsics
// the generated functors use (runtime/kernels/pointwise_math.h): the reference the generated
// kernels are tested against (it must agree with them to the bit), and the semantics the JIT
// code generators implement.
#pragma once

#include <type_traits>

#include "runtime/jit/formula.h"
#include "runtime/kernels/pointwise_math.h"

namespace kiln {
namespace jit {

constexpr int kMaxFormulaNodes = 64;

// An intrinsic of a floating compute type (the code generator refuses them on integers).
template <typename T>
T apply_intrinsic(FormulaOp op, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case FormulaOp::Exp: return pm::exp(x);
      case FormulaOp::Expm1: return pm::expm1(x);
      case FormulaOp::Log: return pm::log(x);
      case FormulaOp::Log1p: return pm::log1p(x);
      case FormulaOp::Sin: return pm::sin(x);
      case FormulaOp::Cos: return pm::cos(x);
      case FormulaOp::Tanh: return pm::tanh(x);
      case FormulaOp::Erf: return pm::erf(x);
      case FormulaOp::Sqrt: return pm::sqrt(x);
      default: break;
    }
  }
  return x;
}

// The formula's value for arguments `args` (f.nargs of them). Comparisons and logic give T(1) or
// T(0); a bool-valued formula's result is `!= 0`.
template <typename T>
T evaluate(const PointwiseFormula& f, const T* args) {
  T v[kMaxFormulaNodes];
  for (int i = 0; i < f.nnodes && i < kMaxFormulaNodes; ++i) {
    const FormulaNode& n = f.nodes[i];
    const T a = n.a >= 0 ? v[n.a] : T(0), b = n.b >= 0 ? v[n.b] : T(0), c = n.c >= 0 ? v[n.c] : T(0);
    switch (n.op) {
      case FormulaOp::Arg: v[i] = args[n.arg]; break;
      case FormulaOp::Const: v[i] = T(n.value); break;
      case FormulaOp::Neg: v[i] = T(-a); break;
      case FormulaOp::Not: v[i] = T(!a); break;
      case FormulaOp::And: v[i] = T(a && b); break;
      case FormulaOp::Or: v[i] = T(a || b); break;
      case FormulaOp::Select: v[i] = a ? b : c; break;
      case FormulaOp::Add: v[i] = a + b; break;
      case FormulaOp::Sub: v[i] = a - b; break;
      case FormulaOp::Mul: v[i] = a * b; break;
      case FormulaOp::Div: v[i] = a / b; break;  // floating only (the code generator checks)
      case FormulaOp::Lt: v[i] = T(a < b); break;
      case FormulaOp::Le: v[i] = T(a <= b); break;
      case FormulaOp::Gt: v[i] = T(a > b); break;
      case FormulaOp::Ge: v[i] = T(a >= b); break;
      case FormulaOp::Eq: v[i] = T(a == b); break;
      case FormulaOp::Ne: v[i] = T(a != b); break;
      default: v[i] = apply_intrinsic(n.op, a); break;
    }
  }
  return v[f.nnodes - 1];
}

}  // namespace jit
}  // namespace kiln
