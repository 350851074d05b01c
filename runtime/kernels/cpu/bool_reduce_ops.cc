// all / any (bool results, uint8 for a uint8 input as torch; any dtype is read as "nonzero").
// Contiguous lines of float32, float64, int32 and int64 are scanned by the vector loops, stopping
// at the answer.
#include "generated/kernels/all.h"
#include "generated/kernels/any.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/cpu/vector_reductions.h"

namespace kiln {
namespace cpu {
namespace {

// all/any along `dim` (nullopt: everything) of `self` read as bools.
// all/any of each contiguous line of `self` (of a dtype with vector loops) without converting it
// to bool first: the first zero (all) or nonzero (any) element decides. False where that does not apply.
template <typename T>
bool vector_bool_reduce(const TensorBase& self, const DimSplit& split, bool is_all, bool* o) {
  if constexpr (vec::has_extremes<T>) {
    if (!self.is_contiguous() || split.inner != 1) return false;
    const T* p = static_cast<const T*>(self.data_ptr());
    const int64_t n = split.n;
    for_each_line(split, [&](int64_t line, int64_t start) {
      const bool found = vec::first_zero_or_not(p + start, n, /*zero=*/is_all) < n;
      o[line] = is_all ? !found : found;
    });
    return true;
  }
  return false;
}

TensorBase bool_reduce(const TensorBase& self, std::optional<int64_t> dim, bool keepdim, bool is_all,
                       const char* name) {
  // One dim: its lines; no dim: the flattened tensor as one line.
  DimSplit split = DimSplit::rows(1, self.numel());
  DimVector out_shape;
  if (dim) {
    split = DimSplit::around(self.sizes(), *dim, name);
    out_shape = split.reduced_shape(self.sizes(), keepdim);
  }
  TensorBase out = empty_cpu(out_shape, ScalarType::Bool);
  bool handled = false;
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), name, [&] {
    handled = vector_bool_reduce<scalar_t>(self, split, is_all, static_cast<bool*>(out.data_ptr()));
  });
  if (handled) return out;
  TensorBase x = contiguous_cpu(cast_to(self, ScalarType::Bool));
  const bool* p = static_cast<const bool*>(x.data_ptr());
  bool* o = static_cast<bool*>(out.data_ptr());
  const int64_t n = split.n, inner = split.inner;
  for_each_line(split, [&](int64_t line, int64_t start) {
    bool acc = is_all;  // all of nothing is true, any of nothing is false
    for (int64_t k = 0; k < n && acc == is_all; ++k) acc = p[start + k * inner];
    o[line] = acc;
  });
  return out;
}

// torch keeps uint8 for all/any of a uint8 tensor (from the days masks were uint8), 0 or 1.
TensorBase bool_reduce_result(const TensorBase& self, std::optional<int64_t> dim, bool keepdim, bool is_all,
                              const char* name) {
  TensorBase out = bool_reduce(self, dim, keepdim, is_all, name);
  return self.dtype() == ScalarType::UInt8 ? cast_to(out, ScalarType::UInt8) : out;
}

}  // namespace

TensorBase all(const TensorBase& self) { return bool_reduce_result(self, std::nullopt, false, true, "all"); }
TensorBase all_dim(const TensorBase& self, int64_t dim, bool keepdim) {
  return bool_reduce_result(self, dim, keepdim, true, "all");
}
TensorBase any(const TensorBase& self) { return bool_reduce_result(self, std::nullopt, false, false, "any"); }
TensorBase any_dim(const TensorBase& self, int64_t dim, bool keepdim) {
  return bool_reduce_result(self, dim, keepdim, false, "any");
}

}  // namespace cpu
}  // namespace kiln
