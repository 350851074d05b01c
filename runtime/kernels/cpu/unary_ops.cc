// neg, exp, expm1, log1p, sin, cos, erf, tanh, sigmoid, abs, log, sqrt, rsqrt, relu, sign, floor, ceil, trunc, round:
// the shared out= kernels of each family.
#include <cmath>

#include "generated/kernels/abs.h"
#include "generated/kernels/ceil.h"
#include "generated/kernels/floor.h"
#include "generated/kernels/round.h"
#include "generated/kernels/rsqrt.h"
#include "generated/kernels/trunc.h"
#include "generated/kernels/cos.h"
#include "generated/kernels/erf.h"
#include "generated/kernels/exp.h"
#include "generated/kernels/expm1.h"
#include "generated/kernels/log1p.h"
#include "generated/kernels/sin.h"
#include "generated/kernels/log.h"
#include "generated/kernels/neg.h"
#include "generated/kernels/relu.h"
#include "generated/kernels/sigmoid.h"
#include "generated/kernels/sign.h"
#include "generated/kernels/sqrt.h"
#include "generated/kernels/tanh.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_meta.h"

namespace kiln {
namespace cpu {
namespace {

// Floating-point ops: integer inputs compute in the default float dtype (exp(int64) -> float32).
template <typename F>
TensorBase float_unary(const char* name, const TensorBase& self, const TensorBase& out, F f) {
  TensorIterator it(IteratorConfig::unary_float(name, self, out));
  KILN_DISPATCH_FLOATING_TYPES(it.compute_dtype(), name, [&] { unary_kernel<scalar_t, scalar_t>(it, f); });
  return it.output();
}

// Ops defined on every numeric dtype, keeping it (abs(int) is int).
template <typename F>
TensorBase numeric_unary(const char* name, const TensorBase& self, const TensorBase& out, F f) {
  TensorIterator it(IteratorConfig::unary(name, self, out));
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), name, [&] { unary_kernel<scalar_t, scalar_t>(it, f); });
  return it.output();
}

}  // namespace

TensorBase neg_out(const TensorBase& self, const TensorBase& out) {
  TensorIterator it = neg_meta(self, out);
  KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "neg", [&] {
    unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return -x; });
  });
  return it.output();
}

TensorBase exp_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("exp", self, out, [](auto x) { return std::exp(x); });
}

TensorBase expm1_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("expm1", self, out, [](auto x) { return std::expm1(x); });
}

TensorBase log1p_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("log1p", self, out, [](auto x) { return std::log1p(x); });
}

TensorBase sin_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("sin", self, out, [](auto x) { return std::sin(x); });
}

TensorBase cos_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("cos", self, out, [](auto x) { return std::cos(x); });
}

TensorBase erf_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("erf", self, out, [](auto x) { return std::erf(x); });
}

TensorBase tanh_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("tanh", self, out, [](auto x) { return std::tanh(x); });
}

TensorBase sigmoid_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("sigmoid", self, out, [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); });
}

TensorBase abs_out(const TensorBase& self, const TensorBase& out) {
  return numeric_unary("abs", self, out, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::fabs(x);  // abs(-0.0) is +0.0
    } else {
      return x < 0 ? -x : x;
    }
  });
}

TensorBase log_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("log", self, out, [](auto x) { return std::log(x); });
}

TensorBase sqrt_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("sqrt", self, out, [](auto x) { return std::sqrt(x); });
}

TensorBase rsqrt_out(const TensorBase& self, const TensorBase& out) {
  return float_unary("rsqrt", self, out, [](auto x) { return decltype(x)(1) / std::sqrt(x); });
}

TensorBase relu_out(const TensorBase& self, const TensorBase& out) {
  // NaN stays NaN, as in PyTorch.
  return numeric_unary("relu", self, out, [](auto x) { return x < 0 ? decltype(x)(0) : x; });
}

TensorBase sign_out(const TensorBase& self, const TensorBase& out) {
  TensorIterator it(IteratorConfig::unary("sign", self, out));
  KILN_DISPATCH_ALL_TYPES(it.compute_dtype(), "sign", [&] {  // sign of a bool is itself, as in torch
    unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return scalar_t((x > 0) - (x < 0)); });
  });
  return it.output();
}

// Rounding: integers are already whole (kept as they are); round() is half-to-even.
template <typename F>
TensorBase rounding(const char* name, const TensorBase& self, const TensorBase& out, F f) {
  return numeric_unary(name, self, out, [f](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) return decltype(x)(f(x));
    else return x;
  });
}

TensorBase floor_out(const TensorBase& self, const TensorBase& out) {
  return rounding("floor", self, out, [](auto x) { return std::floor(x); });
}

TensorBase ceil_out(const TensorBase& self, const TensorBase& out) {
  return rounding("ceil", self, out, [](auto x) { return std::ceil(x); });
}

TensorBase trunc_out(const TensorBase& self, const TensorBase& out) {
  return rounding("trunc", self, out, [](auto x) { return std::trunc(x); });
}

TensorBase round_out(const TensorBase& self, const TensorBase& out) {
  return rounding("round", self, out, [](auto x) { return std::nearbyint(x); });
}

}  // namespace cpu
}  // namespace kiln
