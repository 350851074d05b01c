// median, nanmedian (with their own derivatives, as torch's) and nansum, nanmean (written with
// other ops, so their gradients come from those ops).
//
// median picks the element at position (n - 1) / 2 of the row sorted stably: torch's kernel runs
// nth_element with a comparator that breaks ties by index, which selects exactly that element, so
// values and indices match torch's. A row holding a NaN gives NaN and its first NaN's index;
// nanmedian takes the position (n - nans - 1) / 2 among the non-NaN values (NaNs sort last), and
// index 0 of an all-NaN row.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "generated/api/add.h"
#include "generated/api/clamp_min.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/full.h"
#include "generated/api/gather.h"
#include "generated/api/gt.h"
#include "generated/api/isnan.h"
#include "generated/api/logical_not.h"
#include "generated/api/neg.h"
#include "generated/api/reshape.h"
#include "generated/api/sort.h"
#include "generated/api/squeeze.h"
#include "generated/api/sum.h"
#include "generated/api/where.h"
#include "generated/api/zeros.h"
#include "generated/kernels/composite/nanmean.h"
#include "generated/kernels/composite/nansum.h"
#include "generated/kernels/median.h"
#include "generated/kernels/nanmedian.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_explicit {
namespace {

void check_median_dtype(const Tensor& self, const char* kernel) {
  KILN_CHECK(self.scalar_type() != ScalarType::Bool, "\"", kernel, "\" not implemented for 'bool'");
}

// torch checks the reduced dim's size (IndexError) before its kernel's dtype.
void check_median_dim(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "median");
  KILN_CHECK_INDEX(self.dim() == 0 || self.size(d) > 0, "median(): Expected reduction dim ", d,
                   " to have non-zero size.");
}

// The index torch's nanmedian reports for a row of `size` NaNs: where std::nth_element(first,
// first, last) leaves an element when no element orders before another.
int64_t all_equivalent_nth(int64_t size) {
  std::vector<int64_t> idx(static_cast<size_t>(size));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  std::nth_element(idx.begin(), idx.begin(), idx.end(), [](int64_t, int64_t) { return false; });
  return idx[0];
}

std::tuple<TensorBase, TensorBase> median_with_indices(const Tensor& self_in, int64_t dim, bool keepdim,
                                                       bool ignore_nan, const char* op) {
  const bool zero_dim = self_in.dim() == 0;
  const int64_t d = wrap_dim(dim, self_in.dim(), op);
  const Tensor self = zero_dim ? kiln::reshape(self_in, {1}) : self_in;
  const int64_t size = self.sizes()[d];
  KILN_CHECK_INDEX(size > 0, "median(): Expected reduction dim ", d, " to have non-zero size.");
  std::vector<int64_t> kept(self.sizes().begin(), self.sizes().end());
  kept[d] = 1;
  Tensor pos;
  if (self.is_floating_point()) {
    const Tensor nans = kiln::sum(kiln::isnan(self), std::vector<int64_t>{d}, /*keepdim=*/true);
    if (ignore_nan) {
      // (size - nans - 1) / 2, 0 for an all-NaN row (C++'s truncation of -1 / 2, as torch).
      pos = kiln::div(kiln::clamp_min(kiln::add(kiln::neg(nans), size - 1), Scalar(int64_t{0})), Scalar(int64_t{2}),
                      std::string("floor"));
    } else {
      // The first NaN sits at size - nans in the stable sort (NaNs last, in their order).
      pos = kiln::where(kiln::gt(nans, Scalar(int64_t{0})), kiln::add(kiln::neg(nans), size),
                        kiln::full({}, Scalar((size - 1) / 2), ScalarType::Int64));
    }
  } else {
    pos = kiln::full(kept, Scalar((size - 1) / 2), ScalarType::Int64);
  }
  const auto sorted = kiln::sort(self, d, /*descending=*/false, /*stable=*/true);
  Tensor values = kiln::gather(std::get<0>(sorted), d, pos);
  Tensor indices = kiln::gather(std::get<1>(sorted), d, pos);
  if (ignore_nan && self.is_floating_point()) {
    // In an all-NaN row every element compares equivalent under torch's comparator, so its index
    // is wherever nth_element leaves the first position: the same for every such row of a size.
    const Tensor all_nan = kiln::eq(kiln::sum(kiln::isnan(self), std::vector<int64_t>{d}, true), Scalar(size));
    indices = kiln::where(all_nan, kiln::full({}, Scalar(all_equivalent_nth(size)), ScalarType::Int64), indices);
  }
  if (zero_dim) {
    values = kiln::reshape(values, {});
    indices = kiln::reshape(indices, {});
  } else if (!keepdim) {
    values = kiln::squeeze(values, d);
    indices = kiln::squeeze(indices, d);
  }
  return {values, indices};
}

TensorBase median_all(const Tensor& self, bool ignore_nan, const char* op) {
  if (self.numel() == 0) {
    // torch's NaN, converted to an integer dtype as its kernel does.
    if (self.is_floating_point()) return kiln::full({}, Scalar(std::numeric_limits<double>::quiet_NaN()), self.scalar_type());
    // NaN converts to int32's and int64's lowest value, and to 0 in the narrower types (convert.h).
    int64_t nan_as_int = 0;
    KILN_DISPATCH_INTEGRAL_TYPES(self.scalar_type(), "median", [&] {
      nan_as_int = static_cast<int64_t>(convert<scalar_t>(std::numeric_limits<double>::quiet_NaN()));
    });
    return kiln::full({}, Scalar(nan_as_int), self.scalar_type());
  }
  return std::get<0>(median_with_indices(kiln::reshape(self, {-1}), 0, false, ignore_nan, op));
}

}  // namespace

TensorBase median(const TensorBase& self_) {
  const Tensor self(self_);
  if (self.numel() > 0) check_median_dtype(self, "median_cpu");  // an empty self gives NaN without its kernel
  return median_all(self, /*ignore_nan=*/false, "median");
}

std::tuple<TensorBase, TensorBase> median_dim(const TensorBase& self_, int64_t dim, bool keepdim) {
  const Tensor self(self_);
  check_median_dim(self, dim);
  check_median_dtype(self, "median_out");
  return median_with_indices(self, dim, keepdim, /*ignore_nan=*/false, "median");
}

TensorBase nanmedian(const TensorBase& self_) {
  const Tensor self(self_);
  if (self.numel() > 0) check_median_dtype(self, "nanmedian_cpu");  // an empty self gives NaN without its kernel
  return median_all(self, /*ignore_nan=*/true, "nanmedian");
}

std::tuple<TensorBase, TensorBase> nanmedian_dim(const TensorBase& self_, int64_t dim, bool keepdim) {
  const Tensor self(self_);
  check_median_dim(self, dim);
  check_median_dtype(self, "nanmedian_out");
  return median_with_indices(self, dim, keepdim, /*ignore_nan=*/true, "nanmedian");
}

}  // namespace composite_explicit

namespace composite_implicit {

Tensor nansum(const Tensor& self, const std::optional<IntArrayRef>& dim, bool keepdim,
              const std::optional<ScalarType>& dtype) {
  const Tensor x =
      self.is_floating_point() ? kiln::where(kiln::isnan(self), kiln::zeros({}, self.scalar_type()), self) : self;
  Tensor result = kiln::sum(x, dim, keepdim, dtype);  // checks the dims first, as torch
  // torch sums a floating input in dtype= with a floating-only kernel (not run for an empty input).
  KILN_CHECK(!self.is_floating_point() || !dtype || is_floating_type(*dtype) || self.numel() == 0,
             "\"nansum_cpu\" not implemented for '",
             dtype ? scalar_type_name(*dtype) : "", "'");
  return result;
}

Tensor nanmean(const Tensor& self, const std::optional<IntArrayRef>& dim, bool keepdim,
               const std::optional<ScalarType>& dtype) {
  KILN_CHECK(self.is_floating_point(), "nanmean(): expected input to have floating point dtype but got ",
             scalar_type_name(self.scalar_type()));
  const Tensor count = kiln::sum(kiln::logical_not(kiln::isnan(self)), dim, keepdim);
  return kiln::div(nansum(self, dim, keepdim, dtype), count);
}

}  // namespace composite_implicit
}  // namespace kiln
