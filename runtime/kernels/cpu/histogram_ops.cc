// bincount and histc: counting values into bins, with torch's argument rules and result dtypes
// (bincount: int64 counts, float32 sums of float32 weights, float64 sums of any other weights;
// histc: the input's dtype).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "generated/kernels/bincount.h"
#include "generated/kernels/histc.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

#define KILN_DISPATCH_INDEX_TYPES(dtype, op_name, ...) \
  KILN_DISPATCH_SWITCH(dtype, op_name, true, KILN_INTEGER_CASES(__VA_ARGS__))

template <typename T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

}  // namespace

TensorBase bincount(const TensorBase& self, const TensorBase& weights, int64_t minlength) {
  const char* op = "bincount";
  TensorBase result;
  KILN_DISPATCH_INDEX_TYPES(self.dtype(), op, [&] {
    KILN_CHECK(minlength >= 0, "bincount: minlength should be >= 0, but got ", minlength);
    if (self.dim() == 1 && self.numel() == 0) {  // torch: int64 zeros, weights or not
      result = zeros_cpu({minlength}, ScalarType::Int64);
      return;
    }
    const TensorBase x = contiguous_cpu(self);
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    const int64_t n = x.numel();
    const bool one_d = self.dim() == 1;
    KILN_CHECK(one_d && *std::min_element(xp, xp + n) >= 0,
               "bincount only supports 1-d non-negative integral inputs (self is ", self.dim(), "-d",
               one_d ? ", with a negative value)" : ")");
    KILN_CHECK(!weights.defined() || (weights.dim() == 1 && weights.sizes()[0] == n),
               "bincount: weights should be 1-d and have the same length as input");
    const int64_t top = static_cast<int64_t>(*std::max_element(xp, xp + n));
    // the largest int64 has no bin count that fits (top + 1 would wrap to a negative size)
    KILN_CHECK(top < std::numeric_limits<int64_t>::max(), "bincount: invalid input: the value ", top,
               " needs more bins than an int64 can count");
    const int64_t bins = std::max<int64_t>(top + 1, minlength);
    if (!weights.defined()) {
      result = zeros_cpu({bins}, ScalarType::Int64);
      int64_t* out = static_cast<int64_t*>(result.data_ptr());
      for (int64_t k = 0; k < n; ++k) ++out[xp[k]];
      return;
    }
    const ScalarType dtype = weights.dtype() == ScalarType::Float32 ? ScalarType::Float32 : ScalarType::Float64;
    const TensorBase w = cast_to(contiguous_cpu(weights), dtype);
    result = zeros_cpu({bins}, dtype);
    KILN_DISPATCH_FLOATING_TYPES(dtype, op, [&] {
      using w_t = scalar_t;
      const w_t* wp = static_cast<const w_t*>(w.data_ptr());
      w_t* out = static_cast<w_t*>(result.data_ptr());
      for (int64_t k = 0; k < n; ++k) out[xp[k]] += wp[k];
    });
  });
  return result;
}

TensorBase histc_out(const TensorBase& self, int64_t bins, const Scalar& min, const Scalar& max,
                     const TensorBase& out) {
  const char* op = "histc";
  TensorBase counts;
  KILN_DISPATCH_FLOATING_TYPES_AND_REDUCED(self.dtype(), op, [&] {
    using T = compute_t<scalar_t>;
    KILN_CHECK(bins > 0, "torch.histc: bins must be > 0, but got ", bins);
    check_out_is_not_an_input(out, {&self}, op);
    const TensorBase x = contiguous_cpu(self);
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    const int64_t n = x.numel();
    double lo = min.to_double(), hi = max.to_double();
    if (lo == hi && n > 0) {  // min == max: the data's own range (NaN in it makes the range NaN)
      lo = hi = static_cast<double>(static_cast<T>(xp[0]));
      for (int64_t k = 0; k < n; ++k) {
        const double v = static_cast<double>(static_cast<T>(xp[k]));
        if (std::isnan(v) || std::isnan(lo)) {
          lo = hi = v + lo;  // NaN
        } else {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    KILN_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
    KILN_CHECK(lo < hi, "torch.histc: max must be larger than min");
    // The bin of v as torch computes it, in the input's type: (v - lo) * bins / (hi - lo), the
    // last bin closed on the right.
    const T left = static_cast<T>(static_cast<scalar_t>(lo)), right = static_cast<T>(static_cast<scalar_t>(hi));
    // Through the allocator (not a std::vector), so a huge `bins` is kiln's out-of-memory error.
    const TensorBase tally = zeros_cpu({bins}, ScalarType::Int64);
    int64_t* hist = static_cast<int64_t*>(tally.data_ptr());
    for (int64_t k = 0; k < n; ++k) {
      const T v = static_cast<T>(xp[k]);
      if (!(v >= left && v <= right)) continue;  // outside, or NaN
      // In T as torch; where T overflows (a range or bin count past its largest value), in long
      // double, whose range holds any double's square.
      const T p = (v - left) * static_cast<T>(bins) / (right - left);
      const long double at =
          std::isfinite(static_cast<double>(p))
              ? static_cast<long double>(p)
              : (static_cast<long double>(v) - lo) * static_cast<long double>(bins) / (static_cast<long double>(hi) - lo);
      const int64_t pos = at >= static_cast<long double>(bins) ? bins - 1 : at > 0 ? static_cast<int64_t>(at) : 0;
      ++hist[pos];
    }
    counts = empty_cpu({bins}, self.dtype());
    scalar_t* cp = static_cast<scalar_t*>(counts.data_ptr());
    for (int64_t b = 0; b < bins; ++b) cp[b] = static_cast<scalar_t>(static_cast<T>(hist[b]));
  });
  return result_into_out(counts, out, op);
}

}  // namespace cpu
}  // namespace kiln
