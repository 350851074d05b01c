// argsort: the indices of sort.
#include "generated/api/sort.h"
#include "generated/kernels/composite/argsort.h"

namespace kiln {
namespace composite_implicit {

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  return std::get<1>(kiln::sort(self, dim, descending, stable));
}

}  // namespace composite_implicit
}  // namespace kiln
