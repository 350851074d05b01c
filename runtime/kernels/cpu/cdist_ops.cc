// cdist: p-norm distances between the rows of x1 [B, P, M] and x2 [B, R, M] (batch dims already
// broadcast by the composite), and its gradient for x1, as torch's CPU kernels define it (zero
// where a distance is zero; p = inf: sign(diff) where |diff| is the distance). The forward sums in
// the input's type as torch does; the gradient sums in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "generated/kernels/_cdist_backward.h"
#include "generated/kernels/_cdist_forward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

template <typename T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

struct Dims {
  int64_t batch, p, r, m;
};

Dims check_cdist(const TensorBase& x1, const TensorBase& x2, double p, const char* op) {
  KILN_CHECK(is_floating_type(x1.dtype()), op, ": only supports floating-point dtypes, X1 got: ", scalar_type_name(x1.dtype()));
  // As torch: inputs with nothing to read give x1's dtype, whatever x2's
  KILN_CHECK(x1.dtype() == x2.dtype() || x1.numel() == 0 || x2.numel() == 0, op, ": X1 and X2 must have the same dtype, got ", scalar_type_name(x1.dtype()),
             " and ", scalar_type_name(x2.dtype()));
  KILN_CHECK(p >= 0, op, ": only supports non-negative p values, got ", p);
  KILN_CHECK(x1.dim() >= 2 && x1.dim() == x2.dim(), op, ": expects X1 and X2 with the same batch dims");
  const IntArrayRef a = x1.sizes(), b = x2.sizes();
  KILN_CHECK(std::equal(a.begin(), a.end() - 2, b.begin()) && a.back() == b.back(), op,
             ": X1 and X2 must have the same batch dims and number of columns");
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < a.size(); ++d) batch *= a[d];
  return {batch, a[a.size() - 2], b[b.size() - 2], a.back()};
}

double sign(double v) { return (0 < v) - (v < 0); }

template <typename T>
void distances(const T* x1, const T* x2, T* out, const Dims& d, double p, bool use_mm) {
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < d.batch; ++b) {
    const T* a = x1 + b * d.p * d.m;
    const T* c = x2 + b * d.r * d.m;
    for (int64_t i = 0; i < d.p; ++i) {
      for (int64_t j = 0; j < d.r; ++j) {
        const T* u = a + i * d.m;
        const T* v = c + j * d.m;
        compute_t<T> acc = 0;  // in the input's type (float32 for float16 too), as torch sums
        if (use_mm) {  // torch's "mm" form, |u|^2 + |v|^2 - 2 u.v in T, clamped at 1e-30
          compute_t<T> uu = 0, vv = 0, uv = 0;
          for (int64_t k = 0; k < d.m; ++k) {
            uu += static_cast<compute_t<T>>(u[k]) * static_cast<compute_t<T>>(u[k]);
            vv += static_cast<compute_t<T>>(v[k]) * static_cast<compute_t<T>>(v[k]);
            uv += static_cast<compute_t<T>>(u[k]) * static_cast<compute_t<T>>(v[k]);
          }
          acc = std::sqrt(std::max<compute_t<T>>(uu + vv - 2 * uv, static_cast<compute_t<T>>(1e-30)));
        } else {
          for (int64_t k = 0; k < d.m; ++k) {
            // |u - v| in the input's type, as torch (p = inf's gradient compares it with the result)
            const compute_t<T> diff = std::abs(static_cast<compute_t<T>>(u[k]) - static_cast<compute_t<T>>(v[k]));
            if (p == 0) {
              acc += diff != 0;
            } else if (p == 1) {
              acc += diff;
            } else if (p == 2) {
              acc += diff * diff;
            } else if (p == inf) {
              acc = std::isnan(diff) ? diff : std::max(acc, diff);
            } else {
              acc += std::pow(diff, static_cast<compute_t<T>>(p));
            }
          }
          if (p == 2) acc = std::sqrt(acc);
          if (p != 0 && p != 1 && p != 2 && p != inf) acc = std::pow(acc, static_cast<compute_t<T>>(1.0 / p));
        }
        out[(b * d.p + i) * d.r + j] = static_cast<T>(acc);
      }
    }
  }
}

// d dist / d u_k for one pair: diff = u_k - v_k.
double pair_grad(double diff, double dist, double p) {
  if (p == 1) return sign(diff);
  if (std::isinf(p)) return sign(diff) * (std::abs(diff) == dist);
  if (dist == 0) return 0;
  if (p == 2) return diff / dist;
  if (p < 2) return (p < 1 && diff == 0) ? 0 : sign(diff) * std::pow(std::abs(diff), p - 1) / std::pow(dist, p - 1);
  return diff * std::pow(std::abs(diff), p - 2) / std::pow(dist, p - 1);
}

}  // namespace

TensorBase cdist_forward(const TensorBase& x1, const TensorBase& x2, double p, const std::optional<int64_t>& compute_mode) {
  const Dims d = check_cdist(x1, x2, p, "_cdist_forward");
  const int64_t mode = compute_mode.value_or(0);
  KILN_CHECK(mode >= 0 && mode <= 2, "_cdist_forward: possible modes: 0, 1, 2, but was: ", mode);
  DimVector shape(x1.sizes().begin(), x1.sizes().end());
  shape.back() = d.r;
  TensorBase result = empty_cpu(shape, x1.dtype());
  const bool use_mm = p == 2 && (mode == 1 || (mode == 0 && (d.p > 25 || d.r > 25)));
  const TensorBase a = contiguous_cpu(x1), b = contiguous_cpu(x2);
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(x1.dtype(), "_cdist_forward", [&] {
    distances(static_cast<const scalar_t*>(a.data_ptr()), static_cast<const scalar_t*>(b.data_ptr()),
              static_cast<scalar_t*>(result.data_ptr()), d, p, use_mm);
  });
  return result;
}

TensorBase cdist_backward(const TensorBase& grad, const TensorBase& x1, const TensorBase& x2, double p,
                          const TensorBase& cdist) {
  const Dims d = check_cdist(x1, x2, p, "_cdist_backward");
  TensorBase result = zeros_cpu(x1.sizes(), x1.dtype());
  if (p == 0 || result.numel() == 0 || d.r == 0) return result;
  const TensorBase g = contiguous_cpu(grad), dist = contiguous_cpu(cdist), a = contiguous_cpu(x1), b = contiguous_cpu(x2);
  KILN_CHECK(g.numel() == d.batch * d.p * d.r && dist.numel() == g.numel(), "_cdist_backward: grad and cdist must have "
             "shape [*, P, R]");
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(x1.dtype(), "_cdist_backward", [&] {
    using C = compute_t<scalar_t>;
    const scalar_t* gp = static_cast<const scalar_t*>(g.data_ptr());
    const scalar_t* dp = static_cast<const scalar_t*>(dist.data_ptr());
    const scalar_t* ap = static_cast<const scalar_t*>(a.data_ptr());
    const scalar_t* bp = static_cast<const scalar_t*>(b.data_ptr());
    scalar_t* out = static_cast<scalar_t*>(result.data_ptr());
    for (int64_t bi = 0; bi < d.batch; ++bi) {
      for (int64_t i = 0; i < d.p; ++i) {
        const scalar_t* u = ap + (bi * d.p + i) * d.m;
        for (int64_t k = 0; k < d.m; ++k) {
          double acc = 0;
          for (int64_t j = 0; j < d.r; ++j) {
            const int64_t at = (bi * d.p + i) * d.r + j;
            const double diff = static_cast<double>(static_cast<C>(u[k]) - static_cast<C>(bp[(bi * d.r + j) * d.m + k]));
            acc += static_cast<double>(static_cast<C>(gp[at])) * pair_grad(diff, static_cast<double>(static_cast<C>(dp[at])), p);
          }
          out[(bi * d.p + i) * d.m + k] = static_cast<scalar_t>(static_cast<C>(acc));
        }
      }
    }
  });
  return result;
}

}  // namespace cpu
}  // namespace kiln
