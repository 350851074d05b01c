// The Scalar overloads of searchsorted, bucketize and isin (the number becomes a 0-dim tensor),
// and bucketize: searchsorted with a 1-D boundaries tensor and the arguments swapped.
#include "generated/api/isin.h"
#include "generated/api/searchsorted.h"
#include "generated/kernels/composite/bucketize.h"
#include "generated/kernels/composite/isin.h"
#include "generated/kernels/composite/searchsorted.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {

Tensor searchsorted_scalar(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                           const std::optional<std::string>& side, const Tensor& sorter) {
  return kiln::searchsorted(sorted_sequence, Tensor(wrap_scalar(self)), out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  KILN_CHECK(boundaries.dim() == 1, "bucketize(): boundaries tensor must be 1 dimension, but got dim(",
             boundaries.dim(), ")");
  return kiln::searchsorted(boundaries, self, out_int32, right, std::nullopt, Tensor());
}

Tensor bucketize_scalar(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(Tensor(wrap_scalar(self)), boundaries, out_int32, right);
}

Tensor isin_tensor_scalar(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  return kiln::isin(elements, Tensor(wrap_scalar(test_element)), assume_unique, invert);
}

Tensor isin_scalar_tensor(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  return kiln::isin(Tensor(wrap_scalar(element)), test_elements, assume_unique, invert);
}

}  // namespace composite_implicit
}  // namespace kiln
