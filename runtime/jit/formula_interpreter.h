// Evaluates a pointwise formula tree on one element, in the compute type T, with the intrinsics
// the generated functors use (runtime/kernels/pointwise_math.h): the reference the generated
// kernels are tested against (it must agree with the scalar kernels to the bit), and the
// semantics the JIT code generators implement.
#pragma once

#include <type_traits>

#include "runtime/jit/formula.h"
#include "runtime/kernels/pointwise_math.h"

namespace kiln {
namespace jit {

// The most nodes a tree may have (codegen/pointwise.py MAX_NODES refuses bigger ones).
constexpr int kMaxFormulaNodes = 128;

// One intrinsic (or // and %) on one (a) or two (a, b) values (fma, of three: evaluate below). The
// floating-only ones are never reached for integer T: the code generator refuses them there.
template <typename T>
T apply_intrinsic(FormulaOp op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case FormulaOp::Exp: return pm::exp(a);
      case FormulaOp::Expm1: return pm::expm1(a);
      case FormulaOp::Log: return pm::log(a);
      case FormulaOp::Log1p: return pm::log1p(a);
      case FormulaOp::Sin: return pm::sin(a);
      case FormulaOp::Cos: return pm::cos(a);
      case FormulaOp::Tanh: return pm::tanh(a);
      case FormulaOp::Erf: return pm::erf(a);
      case FormulaOp::Sqrt: return pm::sqrt(a);
      case FormulaOp::Atan2: return pm::atan2(a, b);
      case FormulaOp::Log2: return pm::log2(a);
      case FormulaOp::Log10: return pm::log10(a);
      case FormulaOp::Exp2: return pm::exp2(a);
      case FormulaOp::Asin: return pm::asin(a);
      case FormulaOp::Acos: return pm::acos(a);
      case FormulaOp::Atan: return pm::atan(a);
      case FormulaOp::Sinh: return pm::sinh(a);
      case FormulaOp::Cosh: return pm::cosh(a);
      case FormulaOp::Tan: return pm::tan(a);
      case FormulaOp::Asinh: return pm::asinh(a);
      case FormulaOp::Acosh: return pm::acosh(a);
      case FormulaOp::Atanh: return pm::atanh(a);
      case FormulaOp::Erfc: return pm::erfc(a);
      case FormulaOp::Erfinv: return pm::erfinv(a);
      case FormulaOp::Hypot: return pm::hypot(a, b);
      case FormulaOp::Copysign: return pm::copysign(a, b);
      case FormulaOp::Nextafter: return pm::nextafter(a, b);
      case FormulaOp::Lgamma: return pm::lgamma(a);
      case FormulaOp::Digamma: return pm::digamma(a);
      case FormulaOp::Trigamma: return pm::trigamma(a);
      default: break;
    }
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {  // integers only
    switch (op) {
      case FormulaOp::Gcd: return pm::gcd(a, b);
      case FormulaOp::Lcm: return pm::lcm(a, b);
      default: break;
    }
  }
  switch (op) {
    case FormulaOp::Abs: return pm::abs(a);
    case FormulaOp::Floor: return pm::floor(a);
    case FormulaOp::Ceil: return pm::ceil(a);
    case FormulaOp::Trunc: return pm::trunc(a);
    case FormulaOp::Round: return pm::round(a);
    case FormulaOp::Minimum: return pm::minimum(a, b);
    case FormulaOp::Maximum: return pm::maximum(a, b);
    case FormulaOp::Sign: return pm::sign(a);
    case FormulaOp::Pow: return pm::pow(a, b);
    case FormulaOp::Pow_scalar: return pm::pow_scalar(a, b);
    case FormulaOp::Fmod: return pm::fmod(a, b);
    case FormulaOp::Floordiv: return pm::floor_divide(a, b);
    case FormulaOp::Mod: return pm::remainder(a, b);
    case FormulaOp::Isnan: return T(pm::isnan(a));
    case FormulaOp::Isinf: return T(pm::isinf(a));
    case FormulaOp::Isfinite: return T(pm::isfinite(a));
    default: return a;
  }
}

// A bitwise operator, of integer and bool T only (the code generator refuses them elsewhere).
template <typename T>
T apply_bitwise(FormulaOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case FormulaOp::Bitand: return T(a & b);
      case FormulaOp::Bitor: return T(a | b);
      case FormulaOp::Bitxor: return T(a ^ b);
      case FormulaOp::Bitnot: return pm::bit_not(a);
      case FormulaOp::Lshift: return pm::left_shift(a, b);
      case FormulaOp::Rshift: return pm::right_shift(a, b);
      default: break;
    }
  }
  return a;
}

// The formula's value for tensor arguments `args` (f.nargs of them) and Scalar arguments
// `scalars` (f.nscalars, already in T). Comparisons and logic give T(1) or T(0); a bool-valued
// formula's result is `!= 0`.
template <typename T>
T evaluate(const PointwiseFormula& f, const T* args, const T* scalars) {
  T v[kMaxFormulaNodes];
  for (int i = 0; i < f.nnodes && i < kMaxFormulaNodes; ++i) {
    const FormulaNode& n = f.nodes[i];
    const T a = n.a >= 0 ? v[n.a] : T(0), b = n.b >= 0 ? v[n.b] : T(0), c = n.c >= 0 ? v[n.c] : T(0);
    switch (n.op) {
      case FormulaOp::Arg: v[i] = args[n.arg]; break;
      case FormulaOp::Scalar: v[i] = scalars[n.arg]; break;
      case FormulaOp::Const: v[i] = T(n.value); break;
      case FormulaOp::Neg: v[i] = T(-a); break;
      case FormulaOp::Not: v[i] = T(!a); break;
      case FormulaOp::And: v[i] = T(a && b); break;
      case FormulaOp::Or: v[i] = T(a || b); break;
      case FormulaOp::Select: v[i] = a ? b : c; break;
      case FormulaOp::Cast: v[i] = a; break;  // the value before conversion: the caller converts it
      case FormulaOp::Add: v[i] = T(a + b); break;
      case FormulaOp::Sub: v[i] = T(a - b); break;
      case FormulaOp::Mul: v[i] = T(a * b); break;
      case FormulaOp::Div: v[i] = a / b; break;  // floating only (the code generator checks)
      case FormulaOp::Lt: v[i] = T(a < b); break;
      case FormulaOp::Le: v[i] = T(a <= b); break;
      case FormulaOp::Gt: v[i] = T(a > b); break;
      case FormulaOp::Ge: v[i] = T(a >= b); break;
      case FormulaOp::Eq: v[i] = T(a == b); break;
      case FormulaOp::Ne: v[i] = T(a != b); break;
      case FormulaOp::Bitand:
      case FormulaOp::Bitor:
      case FormulaOp::Bitxor:
      case FormulaOp::Lshift:
      case FormulaOp::Rshift:
      case FormulaOp::Bitnot: v[i] = apply_bitwise(n.op, a, b); break;
      case FormulaOp::Fma:  // floating only (the code generator checks)
        if constexpr (std::is_floating_point_v<T>) {
          v[i] = pm::fma(a, b, c);
        } else {
          v[i] = T(a * b + c);
        }
        break;
      default: v[i] = apply_intrinsic(n.op, a, b); break;
    }
  }
  return v[f.nnodes - 1];
}

}  // namespace jit
}  // namespace kiln
