// neg, abs, relu, sign, floor, ceil, trunc, round: the shared out= kernels of each family. (The
// floating-point unary ops are written as schema formulas; their kernels are generated/cpu/.)
#include <cmath>

#include "generated/kernels/abs.h"
#include "generated/kernels/ceil.h"
#include "generated/kernels/floor.h"
#include "generated/kernels/round.h"
#include "generated/kernels/trunc.h"
#include "generated/kernels/neg.h"
#include "generated/kernels/relu.h"
#include "generated/kernels/sign.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_meta.h"

namespace kiln {
namespace cpu {
namespace {

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

TensorBase abs_out(const TensorBase& self, const TensorBase& out) {
  return numeric_unary("abs", self, out, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::fabs(x);  // abs(-0.0) is +0.0
    } else {
      return x < 0 ? -x : x;
    }
  });
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
