// t, reshape, flatten, unflatten, movedim, narrow, stack, matmul: compositions of views, copies, cat and mm/bmm.
#include "generated/api/bmm.h"
#include "generated/api/cat.h"
#include "generated/api/dot.h"
#include "generated/api/contiguous.h"
#include "generated/api/mm.h"
#include "generated/api/mul.h"
#include "generated/api/mv.h"
#include "generated/api/permute.h"
#include "generated/api/reshape.h"
#include "generated/api/slice.h"
#include "generated/api/squeeze.h"
#include "generated/api/sum.h"
#include "generated/api/transpose.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/view.h"
#include "generated/kernels/composite/flatten.h"
#include "generated/kernels/composite/matmul.h"
#include "generated/kernels/composite/movedim.h"
#include "generated/kernels/composite/narrow.h"
#include "generated/kernels/composite/reshape.h"
#include "generated/kernels/composite/stack.h"
#include "generated/kernels/composite/t.h"
#include "generated/kernels/composite/unflatten.h"
#include "runtime/kernels/shape_rules.h"
#include "runtime/kernels/view_utils.h"

namespace kiln {
namespace composite_implicit {

Tensor t(const Tensor& self) {
  KILN_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.dim() < 2 ? self : kiln::transpose(self, 0, 1);
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  // A view when the strides allow one, else a copy (as torch.reshape).
  if (can_view(self, shape)) return self.view(shape);
  return self.contiguous().view(shape);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  if (self.dim() == 0) {  // torch still checks both dims (against [-1, 0])
    wrap_dim(start_dim, 0, "flatten");
    wrap_dim(end_dim, 0, "flatten");
    return self.reshape({1});
  }
  const int64_t s = wrap_dim(start_dim, self.dim(), "flatten"), e = wrap_dim(end_dim, self.dim(), "flatten");
  KILN_CHECK(s <= e, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) return self;  // torch's: the tensor itself, not a view (nn.Flatten of a 2-d batch)
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + s);
  int64_t n = 1;
  for (int64_t d = s; d <= e; ++d) n *= self.sizes()[d];
  shape.push_back(n);
  shape.insert(shape.end(), self.sizes().begin() + e + 1, self.sizes().end());
  return self.reshape(shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  KILN_CHECK_INDEX(self.dim() > 0, "unflatten(): Dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, self.dim(), "unflatten");
  KILN_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      KILN_CHECK(inferred < 0, "unflatten: only one dimension can be inferred");
      inferred = static_cast<int64_t>(i);
    } else {
      KILN_CHECK(sizes[i] >= 0, "unflatten: invalid size ", sizes[i], " in sizes");
      known *= sizes[i];
    }
  }
  std::vector<int64_t> dims(sizes.begin(), sizes.end());
  const int64_t n = self.sizes()[d];
  if (inferred >= 0 && known != 0 && n % known == 0) dims[inferred] = n / known;
  KILN_CHECK((inferred >= 0 ? dims[inferred] >= 0 : true) && (inferred >= 0 ? known * dims[inferred] : known) == n,
             "unflatten: Provided sizes ", shape_str(sizes), " don't multiply up to the size of dim ", dim, " (",
             n, ") in the input tensor");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + d);
  shape.insert(shape.end(), dims.begin(), dims.end());
  shape.insert(shape.end(), self.sizes().begin() + d + 1, self.sizes().end());
  return self.view(shape);
}

Tensor movedim(const Tensor& self, int64_t source, int64_t destination) {
  const int64_t n = self.dim();
  const int64_t src = wrap_dim(source, n, "movedim"), dst = wrap_dim(destination, n, "movedim");
  std::vector<int64_t> order;
  for (int64_t d = 0; d < n; ++d)
    if (d != src) order.push_back(d);
  if (n > 0) order.insert(order.begin() + dst, src);
  return kiln::permute(self, order);
}

// Each source dim goes to its destination; the other dims keep their order in the free places.
Tensor movedim_intlist(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  const int64_t n = self.dim();
  KILN_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (",
             shape_str(source), " dims) should contain the same number of dims as destination (",
             shape_str(destination), " dims)");
  std::vector<int64_t> order(static_cast<size_t>(n), -1);
  std::vector<bool> moved(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t src = wrap_dim(source[i], n, "movedim"), dst = wrap_dim(destination[i], n, "movedim");
    KILN_CHECK(n > 0 || (src == 0 && dst == 0), "movedim: invalid dims for a 0-dim tensor");
    if (n == 0) continue;
    KILN_CHECK(!moved[src], "movedim: repeated dim in `source` (", shape_str(source), ")");
    KILN_CHECK(order[dst] == -1, "movedim: repeated dim in `destination` (", shape_str(destination), ")");
    moved[src] = true;
    order[dst] = src;
  }
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (moved[next]) ++next;
    o = next++;
  }
  return kiln::permute(self, order);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  KILN_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, self.dim(), "narrow");
  const int64_t size = self.sizes()[d];
  KILN_CHECK_INDEX(start >= -size && start <= size, "start out of range (expected to be in range of [", -size, ", ",
                   size, "], but got ", start, ")");
  if (start < 0) start += size;
  KILN_CHECK(length >= 0, "narrow(): length must be non-negative.");
  KILN_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size,
             ").");
  return kiln::slice(self, d, start, start + length);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  KILN_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    KILN_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack expects each tensor to be equal size, but got ",
               shape_str(tensors[0].sizes()), " at entry 0 and ", shape_str(tensors[i].sizes()), " at entry ", i);
    parts.push_back(kiln::unsqueeze(tensors[i], d));
  }
  return kiln::cat(parts, d);
}

namespace {
// matmul's vector cases that torch runs as dot / mv: float32/float64 CPU operands of one dtype.
bool blas_vector_case(const Tensor& a, const Tensor& b) {
  const ScalarType dt = a.dtype();
  return (dt == ScalarType::Float32 || dt == ScalarType::Float64) && b.dtype() == dt && a.is_cpu() && b.is_cpu();
}
}  // namespace

Tensor matmul(const Tensor& self, const Tensor& other) {
  const int64_t a = self.dim(), b = other.dim();
  KILN_CHECK(a > 0 && b > 0, "matmul(): both arguments to matmul need to be at least 1D, but they are ", a, "D and ",
             b, "D");
  if (a == 1 && b == 1) {
    KILN_CHECK(self.sizes()[0] == other.sizes()[0], "matmul(): inconsistent tensor size, expected tensor [",
               self.sizes()[0], "] and src [", other.sizes()[0], "] to have the same number of elements");
    // float32/float64 on the CPU: torch's matmul is dot (BLAS's dot, not gemm).
    if (blas_vector_case(self, other)) return kiln::dot(self, other);
    // A dot product through mm: same dtype rules (no promotion) and result dtype as the 2-D case.
    return kiln::squeeze(kiln::squeeze(kiln::mm(kiln::unsqueeze(self, 0), kiln::unsqueeze(other, 1)), 1), 0);
  }
  if (a == 2 && b == 2) return kiln::mm(self, other);
  if (a == 1 && b == 2) return kiln::squeeze(kiln::mm(kiln::unsqueeze(self, 0), other), 0);
  if (a == 2 && b == 1 && blas_vector_case(self, other)) return kiln::mv(self, other);  // torch: mv (gemv)
  if (a == 2 && b == 1) return kiln::squeeze(kiln::mm(self, kiln::unsqueeze(other, 1)), 1);
  // (..., n, k) @ (k, m): fold the batch dims into rows.
  if (b == 2) {
    std::vector<int64_t> out_shape(self.sizes().begin(), self.sizes().end() - 1);
    int64_t rows = 1;  // explicit: -1 cannot be inferred when k is 0
    for (int64_t s : out_shape) rows *= s;
    out_shape.push_back(other.sizes()[1]);
    return kiln::mm(self.reshape({rows, self.sizes()[a - 1]}), other).view(out_shape);
  }
  // Batched: broadcast the batch dims, fold them into one, and use bmm.
  const Tensor lhs = a == 1 ? kiln::unsqueeze(self, 0) : self;    // (k) -> (1, k)
  const Tensor rhs = b == 1 ? kiln::unsqueeze(other, 1) : other;  // (k) -> (k, 1)
  const int64_t n = lhs.sizes()[lhs.dim() - 2], k = lhs.sizes()[lhs.dim() - 1];
  const int64_t k2 = rhs.sizes()[rhs.dim() - 2], m = rhs.sizes()[rhs.dim() - 1];
  KILN_CHECK(k == k2, "matmul(): shapes cannot be multiplied (", shape_str(self.sizes()), " and ",
             shape_str(other.sizes()), ")");
  DimVector batch = broadcast_shapes(IntArrayRef(lhs.sizes().begin(), lhs.dim() - 2),
                                     IntArrayRef(rhs.sizes().begin(), rhs.dim() - 2), "matmul");
  int64_t batch_numel = 1;
  for (int64_t s : batch) batch_numel *= s;
  auto with = [&](int64_t r, int64_t c) {
    std::vector<int64_t> shape(batch.begin(), batch.end());
    shape.push_back(r);
    shape.push_back(c);
    return shape;
  };
  const Tensor l3 = kiln::reshape(lhs.expand(with(n, k)), {batch_numel, n, k});
  const Tensor r3 = kiln::reshape(rhs.expand(with(k, m)), {batch_numel, k, m});  // explicit sizes: k may be 0
  Tensor out = kiln::bmm(l3, r3).view(with(n, m));
  if (a == 1) out = kiln::squeeze(out, -2);
  if (b == 1) out = kiln::squeeze(out, -1);
  return out;
}

}  // namespace composite_implicit
}  // namespace kiln
