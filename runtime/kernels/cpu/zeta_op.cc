// torch.special.zeta(x, q), the Hurwitz zeta function, elementwise over the promoted float dtype
// (integers compute in the default float dtype), in double and rounded once (torch computes float32
// in float); no derivative, as torch's.
#include "generated/kernels/_special_zeta.h"
#include "runtime/kernels/cpu/hurwitz_zeta.h"
#include "runtime/kernels/cpu/loops.h"

namespace kiln {
namespace cpu {

TensorBase _special_zeta_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary_float("special_zeta", self, other, out));
  KILN_DISPATCH_FLOATING_TYPES(it.compute_dtype(), "special_zeta", [&] {
    binary_kernel<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t q) {
      return static_cast<scalar_t>(hurwitz_zeta(static_cast<double>(x), static_cast<double>(q)));
    });
  });
  return it.output();
}

}  // namespace cpu
}  // namespace kiln
