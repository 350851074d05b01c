// im2col / col2im (F.unfold / F.fold): the sliding blocks of a (N, C, H, W) image as columns
// (N, C kh kw, L), L = the number of block positions, and the sum of such columns back into an
// image (overlapping blocks add up). Each is the other's backward. Checks and messages are
// torch's (aten/src/ATen/native/im2col_shape_check.h); a 3-D / 2-D input is one unbatched item.
#include <algorithm>

#include "generated/kernels/col2im.h"
#include "generated/kernels/im2col.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

struct Geometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

std::pair<int64_t, int64_t> two(IntArrayRef v, const char* what, const char* op) {
  KILN_CHECK(v.size() == 1 || v.size() == 2, op, "(): ", what, " must be one int or two ints, got ", shape_str(v));
  return {v[0], v[v.size() - 1]};
}

Geometry geometry(const char* op, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                  IntArrayRef stride) {
  Geometry g;
  std::tie(g.kh, g.kw) = two(kernel_size, "kernel_size", op);
  std::tie(g.dh, g.dw) = two(dilation, "dilation", op);
  std::tie(g.ph, g.pw) = two(padding, "padding", op);
  std::tie(g.sh, g.sw) = two(stride, "stride", op);
  for (int64_t v : {g.kh, g.kw, g.dh, g.dw, g.ph, g.pw, g.sh, g.sw})
    KILN_CHECK(v <= (int64_t{1} << 30) && v >= -(int64_t{1} << 30), op,
               "(): invalid kernel_size, dilation, padding or stride (too large): ", v);
  KILN_CHECK(g.kh > 0 && g.kw > 0, op, "(): kernel size should be greater than zero, but got kernel_height: ", g.kh,
             " kernel_width: ", g.kw);
  KILN_CHECK(g.dh > 0 && g.dw > 0, op, "(): dilation should be greater than zero, but got dilation_height: ", g.dh,
             " dilation_width: ", g.dw);
  KILN_CHECK(g.ph >= 0 && g.pw >= 0, op, "(): padding should be non-negative, but got pad_height: ", g.ph,
             " pad_width: ", g.pw);
  KILN_CHECK(g.sh > 0 && g.sw > 0, op, "(): stride should be greater than zero, but got stride_height: ", g.sh,
             " stride_width: ", g.sw);
  return g;
}

// torch's div_rtn: the division rounds toward -inf, so a kernel wider than the padded input gives
// 0 blocks (an error), not the 1 that truncation would.
int64_t blocks(int64_t size, int64_t pad, int64_t dil, int64_t k, int64_t stride) {
  const int64_t span = size + 2 * pad - (dil * (k - 1) + 1);
  int64_t q = span / stride;
  if ((span % stride != 0) && ((span < 0) != (stride < 0))) --q;
  return q + 1;
}

// One item: image (C, H, W) <-> columns (C kh kw, bh bw). Forward copies, backward adds.
template <typename T, bool kToColumns>
void walk(T* image, T* cols, int64_t channels, int64_t H, int64_t W, int64_t bh, int64_t bw, const Geometry& g) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = cols + ((c * g.kh + i) * g.kw + j) * bh * bw;
        for (int64_t y = 0; y < bh; ++y) {
          const int64_t h = y * g.sh - g.ph + i * g.dh;
          for (int64_t x = 0; x < bw; ++x) {
            const int64_t w = x * g.sw - g.pw + j * g.dw;
            const bool inside = h >= 0 && h < H && w >= 0 && w < W;
            if (kToColumns) {
              row[y * bw + x] = inside ? image[(c * H + h) * W + w] : T(0);
            } else if (inside) {
              image[(c * H + h) * W + w] += row[y * bw + x];
            }
          }
        }
      }
    }
  }
}

}  // namespace

TensorBase im2col(const TensorBase& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                  IntArrayRef stride) {
  const Geometry g = geometry("im2col", kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  bool ok = nd == 3 || nd == 4;
  for (int64_t d = nd - 3; ok && d < nd; ++d) ok = self.sizes()[d] != 0;
  KILN_CHECK(ok, "im2col(): Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got: ",
             shape_str(self.sizes()));
  KILN_CHECK(is_floating_type(self.dtype()), "im2col(): \"im2col\" not implemented for '", scalar_type_name(self.dtype()),
             "'");
  if (self.dtype() == ScalarType::Float16 || self.dtype() == ScalarType::BFloat16)
    return cast_to(im2col(cast_to(self, ScalarType::Float32), kernel_size, dilation, padding, stride), self.dtype());
  const bool batched = nd == 4;
  const int64_t N = batched ? self.sizes()[0] : 1, C = self.sizes()[nd - 3], H = self.sizes()[nd - 2],
                W = self.sizes()[nd - 1];
  const int64_t bh = blocks(H, g.ph, g.dh, g.kh, g.sh), bw = blocks(W, g.pw, g.dw, g.kw, g.sw);
  int64_t planes = 0;
  KILN_CHECK(!__builtin_mul_overflow(C, g.kh * g.kw, &planes), "im2col(): invalid sizes: C * kh * kw overflows");
  KILN_CHECK(bh >= 1 && bw >= 1, "im2col(): Given input with spatial size (", H, ", ", W, "), kernel_size=(", g.kh,
             ", ", g.kw, "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw,
             "), calculated shape of the array of sliding blocks as (", bh, ", ", bw,
             "), but its components must be at least one.");
  DimVector shape;
  if (batched) shape.push_back(N);
  shape.push_back(C * g.kh * g.kw);
  shape.push_back(bh * bw);
  TensorBase result = empty_cpu(shape, self.dtype());
  if (result.numel() == 0) return result;
  TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "im2col", [&] {
    scalar_t* in = static_cast<scalar_t*>(x.data_ptr());
    scalar_t* out = static_cast<scalar_t*>(result.data_ptr());
    for (int64_t n = 0; n < N; ++n)
      walk<scalar_t, true>(in + n * C * H * W, out + n * C * g.kh * g.kw * bh * bw, C, H, W, bh, bw, g);
  });
  return result;
}

TensorBase col2im(const TensorBase& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
                  IntArrayRef padding, IntArrayRef stride) {
  int64_t H, W;
  std::tie(H, W) = two(output_size, "output_size", "col2im");
  const Geometry g = geometry("col2im", kernel_size, dilation, padding, stride);
  KILN_CHECK(H <= (int64_t{1} << 40) && W <= (int64_t{1} << 40), "col2im(): invalid output_size (too large): (", H,
             ", ", W, ")");
  KILN_CHECK(H >= 1 && W >= 1, "col2im(): Expected output spatial size to be positive, but got: output_size=(", H,
             ", ", W, ")");
  const int64_t nd = self.dim();
  bool ok = nd == 2 || nd == 3;
  for (int64_t d = nd - 2; ok && d < nd; ++d) ok = self.sizes()[d] != 0;
  KILN_CHECK(ok, "col2im(): Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
             "dimensions for input, but got: ", shape_str(self.sizes()));
  KILN_CHECK(is_floating_type(self.dtype()), "col2im(): \"col2im\" not implemented for '", scalar_type_name(self.dtype()),
             "'");
  if (self.dtype() == ScalarType::Float16 || self.dtype() == ScalarType::BFloat16)
    return cast_to(col2im(cast_to(self, ScalarType::Float32), output_size, kernel_size, dilation, padding, stride),
                   self.dtype());
  const bool batched = nd == 3;
  const int64_t N = batched ? self.sizes()[0] : 1, planes = self.sizes()[nd - 2], L = self.sizes()[nd - 1];
  KILN_CHECK(planes % (g.kh * g.kw) == 0, "col2im(): Expected size of input's dimension 1 to be divisible by the "
             "product of kernel_size, but got input.size(1)=", planes, " and kernel_size=(", g.kh, ", ", g.kw, ")");
  const int64_t bh = blocks(H, g.ph, g.dh, g.kh, g.sh), bw = blocks(W, g.pw, g.dw, g.kw, g.sw);
  KILN_CHECK(bh >= 1 && bw >= 1, "col2im(): Given output_size=(", H, ", ", W, "), kernel_size=(", g.kh, ", ", g.kw,
             "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw, "), stride=(", g.sh, ", ", g.sw,
             "), calculated shape of the array of sliding blocks as (", bh, ", ", bw,
             "), which is too small (non-positive)");
  KILN_CHECK(L == bh * bw, "col2im(): Given output_size=(", H, ", ", W, "), kernel_size=(", g.kh, ", ", g.kw,
             "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw, "), stride=(", g.sh, ", ", g.sw,
             "), expected size of input's dimension 2 to match the calculated number of sliding blocks ", bh, " * ",
             bw, " = ", bh * bw, ", but got input.size(2)=", L, ".");
  const int64_t C = planes / (g.kh * g.kw);
  DimVector shape;
  if (batched) shape.push_back(N);
  shape.push_back(C);
  shape.push_back(H);
  shape.push_back(W);
  TensorBase result = zeros_cpu(shape, self.dtype());
  if (result.numel() == 0) return result;
  TensorBase x = contiguous_cpu(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "col2im", [&] {
    scalar_t* cols = static_cast<scalar_t*>(x.data_ptr());
    scalar_t* out = static_cast<scalar_t*>(result.data_ptr());
    for (int64_t n = 0; n < N; ++n)
      walk<scalar_t, false>(out + n * C * H * W, cols + n * planes * L, C, H, W, bh, bw, g);
  });
  return result;
}

}  // namespace cpu
}  // namespace kiln
