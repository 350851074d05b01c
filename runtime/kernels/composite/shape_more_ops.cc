// split and chunk (through split_with_sizes, runtime/kernels/split_views.cc), flip (index_select
// with reversed indices), roll (cat of two narrows per dim) and repeat (expand + copy). Written over differentiable ops: autograd and view
// semantics (shared storage, in-place writes through a view) come from the ops they call.
#include <string>

#include "generated/api/arange.h"
#include "generated/api/cat.h"
#include "generated/api/clone.h"
#include "generated/api/index_select.h"
#include "generated/api/narrow.h"
#include "generated/api/reshape.h"
#include "generated/api/select.h"
#include "generated/api/split_with_sizes.h"
#include "generated/api/view.h"
#include "generated/kernels/composite/chunk.h"
#include "generated/kernels/composite/flip.h"
#include "generated/kernels/composite/repeat.h"
#include "generated/kernels/composite/roll.h"
#include "generated/kernels/composite/split.h"
#include "runtime/core/allocation_limit.h"
#include "runtime/kernels/view_utils.h"

namespace kiln {
namespace composite_implicit {
namespace {

std::string list_str(IntArrayRef values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

Tensor roll_one(const Tensor& self, int64_t shift, int64_t dim) {
  const int64_t d = wrap_existing_dim(dim, self.dim(), "roll");
  const int64_t size = self.sizes()[d];
  int64_t start = (size - shift % size) % size;
  if (start < 0) start += size;
  return kiln::cat({kiln::narrow(self, d, start, size - start), kiln::narrow(self, d, 0, start)}, d);
}

// The list of `n` views an op returns: a zero-size tensor can have a dim of any size, and chunk
// any number of chunks, so the list alone can be huge. Checked like a tensor allocation.
void check_outputs(int64_t n, const char* op_name) {
  check_cpu_allocation(static_cast<size_t>(n) * (sizeof(Tensor) + sizeof(TensorImpl)), op_name);
}

}  // namespace

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  KILN_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  KILN_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  const int64_t d = wrap_dim(dim, self.dim(), "split");
  const int64_t dim_size = self.sizes()[d];
  KILN_CHECK(split_size > 0 || dim_size == 0,
             "split_size can only be 0 if dimension size is 0, but got dimension size of ", dim_size);
  int64_t num_splits = 1;
  if (split_size != 0) num_splits = std::max<int64_t>((dim_size + split_size - 1) / split_size, 1);
  check_outputs(num_splits, "split");
  std::vector<int64_t> sizes(num_splits, split_size);
  sizes.back() = dim_size - split_size * (num_splits - 1);
  return kiln::split_with_sizes(self, sizes, d);
}

std::vector<Tensor> split_sizes(const Tensor& self, IntArrayRef split_size, int64_t dim) {
  return kiln::split_with_sizes(self, split_size, dim);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  KILN_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  KILN_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t d = wrap_dim(dim, self.dim(), "chunk");
  const int64_t dim_size = self.sizes()[d];
  const int64_t split_size = dim_size == 0 ? 0 : (dim_size - 1) / chunks + 1;  // ceil, without overflow
  if (split_size == 0 && dim_size == 0) {
    check_outputs(chunks, "chunk");
    std::vector<int64_t> sizes(chunks, 0);
    return kiln::split_with_sizes(self, sizes, d);
  }
  return split(self, split_size, d);
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  const int64_t n = self.dim();
  std::vector<bool> seen(std::max<int64_t>(n, 1), false);
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, n, "flip");
    KILN_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
  }
  Tensor result = self;
  bool copied = false;
  for (int64_t d = 0; d < n; ++d) {
    if (!seen[d] || self.sizes()[d] == 0) continue;
    const int64_t size = self.sizes()[d];
    result = kiln::index_select(result, d, kiln::arange(size - 1, -1, -1, ScalarType::Int64));
    copied = true;
  }
  return copied ? result : kiln::clone(self);
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  KILN_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    if (self.numel() == 0) return kiln::clone(self);
    return roll_one(self.reshape({-1}), shifts[0], 0).view(self.sizes());
  }
  KILN_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
             ", dims:", dims.size());
  if (self.numel() == 0) return kiln::clone(self);  // torch returns before it reads any dim
  for (int64_t dim : dims) wrap_existing_dim(dim, self.dim(), "roll");
  Tensor result = self;
  for (size_t i = 0; i < dims.size(); ++i) result = roll_one(result, shifts[i], dims[i]);
  return result;
}

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  const int64_t n = self.dim(), r = static_cast<int64_t>(repeats.size());
  KILN_CHECK(r >= n, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  std::vector<int64_t> padded(r - n, 1), target;
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  for (int64_t i = 0; i < r; ++i) target.push_back(repeats[i] * padded[i]);
  for (int64_t i = 0; i < r; ++i)
    KILN_CHECK(repeats[i] >= 0, "Trying to create tensor with negative dimension ", target[i], ": ",
               list_str(target));
  // (p0, p1, ...) -> (1, p0, 1, p1, ...) expanded to (r0, p0, r1, p1, ...), copied, merged pairwise.
  std::vector<int64_t> interleaved, expanded;
  for (int64_t i = 0; i < r; ++i) {
    interleaved.push_back(1);
    interleaved.push_back(padded[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(padded[i]);
  }
  return kiln::clone(self.reshape(interleaved).expand(expanded)).reshape(target);
}

}  // namespace composite_implicit
}  // namespace kiln
