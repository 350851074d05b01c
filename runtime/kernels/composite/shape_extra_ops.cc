// meshgrid (expanded views), fliplr/flipud/rot90 (flip and transpose), tile (repeat) and
// repeat_interleave (index_select with each index repeated): autograd from the ops they call.
#include <string>

#include "generated/api/clone.h"
#include "generated/api/contiguous.h"
#include "generated/api/cumsum.h"
#include "generated/api/expand.h"
#include "generated/api/flatten.h"
#include "generated/api/flip.h"
#include "generated/api/index_put.h"
#include "generated/api/index_select.h"
#include "generated/api/min.h"
#include "generated/api/narrow.h"
#include "generated/api/ones.h"
#include "generated/api/repeat.h"
#include "generated/api/reshape.h"
#include "generated/api/select.h"
#include "generated/api/sum.h"
#include "generated/api/to.h"
#include "generated/api/transpose.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/zeros.h"
#include "generated/kernels/composite/fliplr.h"
#include "generated/kernels/composite/flipud.h"
#include "generated/kernels/composite/meshgrid.h"
#include "generated/kernels/composite/repeat_interleave.h"
#include "generated/kernels/composite/rot90.h"
#include "generated/kernels/composite/tile.h"

namespace kiln {
namespace composite_implicit {

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  KILN_CHECK(!tensors.empty(), "torch.meshgrid: Expected at least one tensor");
  KILN_CHECK(indexing == "ij" || indexing == "xy",
             "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  for (const Tensor& t : tensors) {
    KILN_CHECK(t.dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a ", t.dim(),
               "D tensor");
    KILN_CHECK(t.dtype() == tensors[0].dtype(),
               "torch.meshgrid: Expected all tensors in the tensor list to have the same dtype");
  }
  // 'xy' is 'ij' with the first two inputs (and outputs) swapped.
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  std::vector<Tensor> inputs = tensors;
  if (swap) std::swap(inputs[0], inputs[1]);
  const int64_t n = static_cast<int64_t>(inputs.size());
  DimVector shape;
  for (const Tensor& t : inputs) shape.push_back(t.numel());
  std::vector<Tensor> grids;
  for (int64_t i = 0; i < n; ++i) {
    DimVector view(n, 1);
    view[i] = -1;
    grids.push_back(kiln::reshape(inputs[i], view).expand(shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

Tensor fliplr(const Tensor& self) {
  KILN_CHECK(self.dim() >= 2, "Input must be >= 2-d.");
  return kiln::flip(self, {1});
}

Tensor flipud(const Tensor& self) {
  KILN_CHECK(self.dim() >= 1, "Input must be >= 1-d.");
  return kiln::flip(self, {0});
}

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  const int64_t nd = self.dim();
  KILN_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  KILN_CHECK(nd >= 2, "expected total dims >= 2, but got total dims = ", nd);
  KILN_CHECK(dims[0] < nd && dims[0] >= -nd, "Rotation dim0 out of range, dim0 = ", dims[0]);
  KILN_CHECK(dims[1] < nd && dims[1] >= -nd, "Rotation dim1 out of range, dim1 = ", dims[1]);
  const int64_t d0 = dims[0] < 0 ? dims[0] + nd : dims[0], d1 = dims[1] < 0 ? dims[1] + nd : dims[1];
  KILN_CHECK(d0 != d1, "expected rotation dims to be different, but got dim0 = ", d0, " and dim1 = ", d1);
  switch (((k % 4) + 4) % 4) {
    case 1: return kiln::transpose(kiln::flip(self, {d1}), d0, d1);
    case 2: return kiln::flip(self, {d0, d1});
    case 3: return kiln::transpose(kiln::flip(self, {d0}), d0, d1);
    default: return kiln::contiguous(self).clone();
  }
}

Tensor tile(const Tensor& self, IntArrayRef dims) {
  DimVector reps(dims.begin(), dims.end());
  // Fewer reps than dims: the leading dims repeat once.
  while (static_cast<int64_t>(reps.size()) < self.dim()) reps.insert(reps.begin(), 1);
  return kiln::repeat(self, reps);
}

// Index i repeated repeats[i] times: ones marked at the running totals, summed again.
Tensor repeat_interleave(const Tensor& repeats, const std::optional<int64_t>& output_size) {
  KILN_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  KILN_CHECK(repeats.dtype() == ScalarType::Int64 || repeats.dtype() == ScalarType::Int32,
             "repeat_interleave: repeats has to be Long or Int tensor");
  const Tensor counts = repeats.to(ScalarType::Int64);
  if (counts.numel() > 0) KILN_CHECK(kiln::min(counts).item<int64_t>() >= 0, "repeats can not be negative");
  const Tensor ends = kiln::cumsum(counts, 0);
  const int64_t total = counts.numel() ? kiln::select(ends, 0, -1).item<int64_t>() : 0;
  KILN_CHECK(!output_size || *output_size == total, "repeat_interleave: output_size ", output_size.value_or(0),
             " does not match the sum of repeats ", total);
  Tensor marks = kiln::zeros({total + 1}, ScalarType::Int64);
  marks.index_put_({ends}, kiln::ones({1}, ScalarType::Int64).expand(ends.sizes()), /*accumulate=*/true);
  return kiln::narrow(kiln::cumsum(marks, 0), 0, 0, total).to(repeats.dtype());
}

Tensor repeat_interleave_self_tensor(const Tensor& self, const Tensor& repeats, const std::optional<int64_t>& dim,
                                     const std::optional<int64_t>& output_size) {
  // dim=None repeats the flattened tensor; a dim must exist (a 0-dim tensor has none: IndexError).
  const Tensor input = dim ? self : kiln::reshape(self, {-1});
  const int64_t d = dim ? wrap_existing_dim(*dim, input.dim(), "repeat_interleave") : 0;
  const int64_t size = input.sizes()[d];
  KILN_CHECK(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  Tensor per_index = repeats;
  if (repeats.dim() == 0 || (repeats.numel() == 1 && size != 1)) {
    per_index = kiln::reshape(repeats, {1}).expand({size});
  }
  KILN_CHECK(per_index.sizes()[0] == size, "repeats must have the same size as input along dim, but got repeats.size(0) = ",
             per_index.sizes()[0], " and input.size(", d, ") = ", size);
  return kiln::index_select(input, d, repeat_interleave(kiln::contiguous(per_index), output_size));
}

Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, const std::optional<int64_t>& dim,
                                  const std::optional<int64_t>& output_size) {
  // dim=None repeats the flattened tensor; a dim must exist (a 0-dim tensor has none: IndexError).
  const Tensor input = dim ? self : kiln::reshape(self, {-1});
  const int64_t d = dim ? wrap_existing_dim(*dim, input.dim(), "repeat_interleave") : 0;
  // After the dim, and only where there is something to repeat: torch expands the count over the dim
  // and checks the (empty) counts
  KILN_CHECK(repeats >= 0 || input.sizes()[d] == 0, "repeats can not be negative");
  if (repeats < 0) repeats = 0;
  const int64_t total = input.sizes()[d] * repeats;
  KILN_CHECK(!output_size || *output_size == total, "repeat_interleave: output_size ", output_size.value_or(0),
             " does not match the sum of repeats ", total);
  // Each slice along d, expanded `repeats` times next to itself, then the two dims merged.
  DimVector sizes(input.sizes().begin(), input.sizes().end());
  sizes.insert(sizes.begin() + d + 1, repeats);
  // A copy always (repeats=1 would otherwise be a view of self), as torch.
  return kiln::clone(kiln::contiguous(kiln::flatten(kiln::unsqueeze(input, d + 1).expand(sizes), d, d + 1)));
}

}  // namespace composite_implicit
}  // namespace kiln
