// Scalar overloads of the comparisons: the number becomes a wrapped 0-dim tensor.
#include "generated/api/eq.h"
#include "generated/api/ge.h"
#include "generated/api/gt.h"
#include "generated/api/le.h"
#include "generated/api/lt.h"
#include "generated/api/ne.h"
#include "generated/kernels/composite/eq.h"
#include "generated/kernels/composite/ge.h"
#include "generated/kernels/composite/gt.h"
#include "generated/kernels/composite/le.h"
#include "generated/kernels/composite/lt.h"
#include "generated/kernels/composite/ne.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {

Tensor eq_scalar(const Tensor& self, const Scalar& other) { return kiln::eq(self, Tensor(wrap_scalar(other))); }
Tensor ne_scalar(const Tensor& self, const Scalar& other) { return kiln::ne(self, Tensor(wrap_scalar(other))); }
Tensor lt_scalar(const Tensor& self, const Scalar& other) { return kiln::lt(self, Tensor(wrap_scalar(other))); }
Tensor le_scalar(const Tensor& self, const Scalar& other) { return kiln::le(self, Tensor(wrap_scalar(other))); }
Tensor gt_scalar(const Tensor& self, const Scalar& other) { return kiln::gt(self, Tensor(wrap_scalar(other))); }
Tensor ge_scalar(const Tensor& self, const Scalar& other) { return kiln::ge(self, Tensor(wrap_scalar(other))); }

}  // namespace composite_implicit
}  // namespace kiln
