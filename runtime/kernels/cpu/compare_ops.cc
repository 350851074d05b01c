// eq, ne, lt, le, gt, ge: compare in the promoted dtype, write bool.
#include "generated/kernels/eq.h"
#include "generated/kernels/ge.h"
#include "generated/kernels/gt.h"
#include "generated/kernels/le.h"
#include "generated/kernels/lt.h"
#include "generated/kernels/ne.h"
#include "runtime/kernels/cpu/loops.h"

namespace kiln {
namespace cpu {
namespace {

template <typename Cmp>
TensorBase compare(const char* name, const TensorBase& self, const TensorBase& other, const TensorBase& out, Cmp cmp) {
  TensorIterator it(IteratorConfig::comparison(name, self, other, out));
  KILN_DISPATCH_ALL_TYPES(it.compute_dtype(), name, [&] {
    binary_kernel<bool, scalar_t>(it, [cmp](scalar_t a, scalar_t b) { return cmp(a, b); });
  });
  return it.output();
}

}  // namespace

TensorBase eq_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return compare("eq", self, other, out, [](auto a, auto b) { return a == b; });
}
TensorBase ne_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return compare("ne", self, other, out, [](auto a, auto b) { return a != b; });
}
TensorBase lt_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return compare("lt", self, other, out, [](auto a, auto b) { return a < b; });
}
TensorBase le_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return compare("le", self, other, out, [](auto a, auto b) { return a <= b; });
}
TensorBase gt_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return compare("gt", self, other, out, [](auto a, auto b) { return a > b; });
}
TensorBase ge_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  return compare("ge", self, other, out, [](auto a, auto b) { return a >= b; });
}

}  // namespace cpu
}  // namespace kiln
