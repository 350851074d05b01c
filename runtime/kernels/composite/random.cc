// rand, randn, randint, normal(mean, std, size) and the _like forms: empty + an in-place random fill.
#include "generated/api/empty.h"
#include "generated/api/empty_like.h"
#include "generated/api/normal.h"
#include "generated/api/random.h"
#include "generated/api/uniform.h"
#include "generated/kernels/composite/normal.h"
#include "generated/kernels/composite/rand.h"
#include "generated/kernels/composite/rand_like.h"
#include "generated/kernels/composite/randint.h"
#include "generated/kernels/composite/randn.h"
#include "generated/kernels/composite/randn_like.h"

namespace kiln {
namespace composite_implicit {

Tensor rand(IntArrayRef size, Generator* generator, const std::optional<ScalarType>& dtype,
            const std::optional<Device>& device, bool /*requires_grad*/) {
  Tensor t = kiln::empty(size, dtype, device);
  kiln::uniform_(t, 0, 1, generator);
  return t;
}

Tensor randn(IntArrayRef size, Generator* generator, const std::optional<ScalarType>& dtype,
             const std::optional<Device>& device, bool /*requires_grad*/) {
  Tensor t = kiln::empty(size, dtype, device);
  kiln::normal_(t, 0, 1, generator);
  return t;
}

Tensor normal_float_float(double mean, double std, IntArrayRef size, Generator* generator,
                          const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                          bool /*requires_grad*/) {
  Tensor t = kiln::empty(size, dtype, device);
  kiln::normal_(t, mean, std, generator);
  return t;
}

Tensor randint_low(int64_t low, int64_t high, IntArrayRef size, Generator* generator,
                   const std::optional<ScalarType>& dtype, const std::optional<Device>& device, bool /*requires_grad*/) {
  Tensor t = kiln::empty(size, dtype.value_or(ScalarType::Int64), device);
  kiln::random_(t, low, high, generator);
  return t;
}

Tensor randint(int64_t high, IntArrayRef size, Generator* generator, const std::optional<ScalarType>& dtype,
               const std::optional<Device>& device, bool requires_grad) {
  return randint_low(0, high, size, generator, dtype, device, requires_grad);
}

Tensor rand_like(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                 bool /*requires_grad*/) {
  Tensor t = kiln::empty_like(self, dtype, device);
  kiln::uniform_(t, 0, 1);
  return t;
}

Tensor randn_like(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                  bool /*requires_grad*/) {
  Tensor t = kiln::empty_like(self, dtype, device);
  kiln::normal_(t, 0, 1);
  return t;
}

}  // namespace composite_implicit
}  // namespace kiln
