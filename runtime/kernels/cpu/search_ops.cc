// searchsorted (binary search in the last dim of a sorted sequence, optionally through a sorter
// permutation) and isin (membership through a sorted copy of test_elements), both comparing in
// the promoted dtype of their two inputs, as torch.
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "generated/kernels/isin.h"
#include "generated/kernels/searchsorted.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace cpu {
namespace {

template <typename T>
using compare_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// torch's argument rules for searchsorted (its messages, with the op named).
void check_searchsorted(const TensorBase& seq, const TensorBase& values, bool right,
                        const std::optional<std::string>& side, const TensorBase& sorter) {
  if (side) {
    KILN_CHECK(*side == "left" || *side == "right",
               "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    KILN_CHECK(!right || *side == "right", "torch.searchsorted(): side and right can't be set to opposites, got side of ",
               *side, " while right was True");
  }
  KILN_CHECK(seq.dim() > 0, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  if (seq.dim() != 1) {
    KILN_CHECK(values.dim() > 0, "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
               "dimension is 1, but we got boundaries tensor dim(", seq.dim(), ") and input value's dim(0)");
    const IntArrayRef a = seq.sizes(), b = values.sizes();
    KILN_CHECK(a.size() == b.size() && std::equal(a.begin(), a.end() - 1, b.begin()),
               "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
               "tensor and input value tensor must match, but we got boundaries tensor ", shape_str(a),
               " and input value tensor ", shape_str(b));
  }
  if (sorter.defined()) {
    KILN_CHECK(sorter.dtype() == ScalarType::Int64, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
               scalar_type_name(sorter.dtype()));
    KILN_CHECK(sorter.sizes() == seq.sizes(), "torch.searchsorted(): boundary and sorter must have the same size, but got "
               "boundary tensor ", shape_str(seq.sizes()), " and got sorter tensor ", shape_str(sorter.sizes()));
  }
}

// First position in row[0, n) (read through `order` when given) whose value is >= v (> v when
// `right`), with torch's comparisons (a NaN value goes past every element).
template <typename C, typename T>
int64_t bound(const T* row, const int64_t* order, int64_t n, C v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const C m = static_cast<C>(row[order ? order[mid] : mid]);
    if (right ? !(m > v) : !(m >= v)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

TensorBase searchsorted_out(const TensorBase& sorted_sequence, const TensorBase& self, bool out_int32, bool right,
                            const std::optional<std::string>& side, const TensorBase& sorter, const TensorBase& out) {
  const char* op = "searchsorted";
  const ScalarType out_dtype = out_int32 ? ScalarType::Int32 : ScalarType::Int64;
  // An out= of another dtype raises in result_into_out (torch raises too).
  check_searchsorted(sorted_sequence, self, right, side, sorter);
  check_out_is_not_an_input(out, {&sorted_sequence, &self}, op);
  const bool upper = right || (side && *side == "right");
  const ScalarType common = promote_types(sorted_sequence.dtype(), self.dtype());
  const TensorBase seq = cast_to(contiguous_cpu(sorted_sequence), common);
  const TensorBase vals = cast_to(contiguous_cpu(self), common);
  const TensorBase order = sorter.defined() ? contiguous_cpu(sorter) : TensorBase();
  const int64_t n = seq.sizes().back();
  const int64_t* op_order = order.defined() ? static_cast<const int64_t*>(order.data_ptr()) : nullptr;
  if (op_order) {
    for (int64_t k = 0; k < order.numel(); ++k) {
      KILN_CHECK_INDEX(op_order[k] >= 0 && op_order[k] < n, "torch.searchsorted(): sorter index ", op_order[k],
                       " is out of range for a last dimension of size ", n);
    }
  }
  // One row of the sequence for every `per_row` values (all of them when the sequence is 1-D).
  const int64_t per_row = seq.dim() == 1 ? std::max<int64_t>(vals.numel(), 1) : (self.dim() ? self.sizes().back() : 1);
  TensorBase result = empty_cpu(self.sizes(), ScalarType::Int64);
  int64_t* rp = static_cast<int64_t*>(result.data_ptr());
  KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(common, op, [&] {
    using C = compare_t<scalar_t>;
    const scalar_t* sp = static_cast<const scalar_t*>(seq.data_ptr());
    const scalar_t* vp = static_cast<const scalar_t*>(vals.data_ptr());
    for (int64_t k = 0; k < vals.numel(); ++k) {
      const int64_t row = per_row ? k / per_row : 0;
      rp[k] = bound(sp + row * n, op_order ? op_order + row * n : nullptr, n, static_cast<C>(vp[k]), upper);
    }
  });
  return result_into_out(cast_to(result, out_dtype), out, op);
}

TensorBase isin_out(const TensorBase& elements, const TensorBase& test_elements, bool assume_unique, bool invert,
                    const TensorBase& out) {
  (void)assume_unique;  // a hint only: the answer is the same
  const char* op = "isin";
  KILN_CHECK(elements.dtype() != ScalarType::Bool && test_elements.dtype() != ScalarType::Bool,
             "isin(): Unsupported input type encountered for isin(): Bool");
  check_out_is_not_an_input(out, {&elements, &test_elements}, op);
  const ScalarType common = result_type({elements, test_elements});
  const TensorBase x = cast_to(contiguous_cpu(elements), common);
  const TensorBase tests = cast_to(contiguous_cpu(test_elements), common);
  TensorBase result = empty_cpu(elements.sizes(), ScalarType::Bool);
  bool* rp = static_cast<bool*>(result.data_ptr());
  KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(common, op, [&] {
    using C = compare_t<scalar_t>;
    const scalar_t* tp = static_cast<const scalar_t*>(tests.data_ptr());
    std::vector<C> sorted;
    sorted.reserve(static_cast<size_t>(tests.numel()));
    for (int64_t k = 0; k < tests.numel(); ++k) {
      if (!is_nan(tp[k])) sorted.push_back(static_cast<C>(tp[k]));  // NaN equals nothing
    }
    std::sort(sorted.begin(), sorted.end());
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    for (int64_t k = 0; k < x.numel(); ++k) {
      const C v = static_cast<C>(xp[k]);
      rp[k] = (!is_nan(v) && std::binary_search(sorted.begin(), sorted.end(), v)) != invert;
    }
  });
  return result_into_out(result, out, op);
}

}  // namespace cpu
}  // namespace kiln
