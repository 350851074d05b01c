// The CPU in the device registry (runtime/core/device_backend.h): host memory from the caching
// allocator, bytes moved with memcpy, elements cast and filled by the CPU kernels. Registered
// when the library loads.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "generated/kernels/fill.h"
#include "runtime/core/device_backend.h"
#include "runtime/kernels/cpu/element_convert.h"
#include "runtime/kernels/cpu/fill_run.h"
#include "runtime/kernels/cpu/parallel_loop.h"
#include "runtime/kernels/cpu/row_walk.h"

namespace kiln {
namespace cpu {
namespace {

// dst[i][j] = src[i][j] for a contiguous dst and a src that is a contiguous matrix transposed (strides
// (1, rows)), in square tiles: element by element, every read of the src would be a cache miss (a
// Linear weight's gradient, mm(x.t(), grad).t(), into AccumulateGrad's contiguous copy). torch's
// copy_ takes the same path (copy_same_type_transpose_, 60 x 60 blocks, from 3600 elements). Within
// a tile, 8 x 8 blocks go through a local buffer, read and written a row of 8 at a time: a tile's 64
// source rows are `rows` elements apart, and with a power-of-two row length they all fall into one
// L1 set, which holds 8 lines (x.t().contiguous() of a 256 x 1024 float matrix ran 4x torch's time).
template <typename T>
void transpose_tiles(const T* src, T* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 64, kBlock = 8;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(i0 + kTile, rows), j1 = std::min(j0 + kTile, cols);
      for (int64_t i = i0; i < i1; i += kBlock)
        for (int64_t j = j0; j < j1; j += kBlock) {
          if (i + kBlock <= i1 && j + kBlock <= j1) {
            T block[kBlock][kBlock];
            for (int64_t k = 0; k < kBlock; ++k)
              for (int64_t l = 0; l < kBlock; ++l) block[l][k] = src[(j + k) * rows + i + l];
            for (int64_t l = 0; l < kBlock; ++l)
              for (int64_t k = 0; k < kBlock; ++k) dst[(i + l) * cols + j + k] = block[l][k];
          } else {  // a partial block at the matrix's edge
            for (int64_t ii = i; ii < std::min(i + kBlock, i1); ++ii)
              for (int64_t jj = j; jj < std::min(j + kBlock, j1); ++jj) dst[ii * cols + jj] = src[jj * rows + ii];
          }
        }
    }
}

bool copy_transposed(const TensorBase& dst, const TensorBase& src) {
  if (dst.dim() != 2 || src.dtype() != dst.dtype() || dst.numel() < 3600 || !dst.is_contiguous()) return false;
  const int64_t rows = dst.sizes()[0], cols = dst.sizes()[1];
  if (src.sizes() != dst.sizes() || src.strides()[0] != 1 || src.strides()[1] != rows) return false;
  // both span rows * cols elements from their data pointer: overlapping ones (x.copy_(x.t())) go the
  // element-wise way
  const auto* d = static_cast<const char*>(dst.data_ptr());
  const auto* s = static_cast<const char*>(src.data_ptr());
  const int64_t bytes = dst.numel() * dst.element_size();
  if (d < s + bytes && s < d + bytes) return false;
  switch (dst.element_size()) {  // the bytes move as they are, whatever the dtype
    case 1: transpose_tiles(static_cast<const uint8_t*>(src.data_ptr()), static_cast<uint8_t*>(dst.data_ptr()), rows, cols); return true;
    case 2: transpose_tiles(static_cast<const uint16_t*>(src.data_ptr()), static_cast<uint16_t*>(dst.data_ptr()), rows, cols); return true;
    case 4: transpose_tiles(static_cast<const uint32_t*>(src.data_ptr()), static_cast<uint32_t*>(dst.data_ptr()), rows, cols); return true;
    case 8: transpose_tiles(static_cast<const uint64_t*>(src.data_ptr()), static_cast<uint64_t*>(dst.data_ptr()), rows, cols); return true;
    default: return false;
  }
}

// A run of elements of one dtype moved as T-sized bit patterns (no conversion): the loop a
// same-dtype copy runs per row, without convert_elements' two dtype switches and a memmove call on
// every row (a 28-element row of a sliced image spent more in those than in copying).
template <typename T>
void copy_same_type_run(char* const* data, const int64_t* strides, int64_t n) {
  T* dst = reinterpret_cast<T*>(data[0]);
  const T* src = reinterpret_cast<const T*>(data[1]);
  const int64_t size = static_cast<int64_t>(sizeof(T));
  if (strides[0] == size && strides[1] == size) {
    std::memcpy(dst, src, static_cast<size_t>(n * size));  // libc's, with the CPU's widest moves
  } else if (strides[0] == size && strides[1] == 0) {
    fill_serial(dst, n, *src);
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<T*>(data[0] + i * strides[0]) = *reinterpret_cast<const T*>(data[1] + i * strides[1]);
  }
}

class CpuBackend final : public DeviceBackend {
 public:
  Allocator* allocator() override { return cpu_allocator(); }

  void copy_bytes(void* dst, const void* src, size_t nbytes, CopyDirection) override {
    if (nbytes) std::memcpy(dst, src, nbytes);
  }

  void zero_bytes(void* dst, size_t nbytes) override {
    if (nbytes) std::memset(dst, 0, nbytes);
  }

  void copy_elements(const TensorBase& dst, const TensorBase& src, const char* op_name) override {
    if (copy_transposed(dst, src)) return;
    TensorIterator it(IteratorConfig::copy(op_name, dst, src));
    const ScalarType from = src.dtype(), to = dst.dtype();
    if (from == to) {
      const auto copy_as = [&it](auto bits) {
        using T = decltype(bits);
        for_each_row(it, [](char* const* data, const int64_t* strides, int64_t n) { copy_same_type_run<T>(data, strides, n); });
      };
      switch (element_size(to)) {
        case 1: return copy_as(uint8_t{});
        case 2: return copy_as(uint16_t{});
        case 4: return copy_as(uint32_t{});
        case 8: return copy_as(uint64_t{});
        default: break;
      }
    }
    for_each(it, [from, to](char** data, const int64_t* strides, int64_t n) {
      convert_elements(from, data[1], strides[1], to, data[0], strides[0], n);
    });
  }

  void fill(const TensorBase& dst, const Scalar& value) override { fill_(dst, value); }
};

CpuBackend g_cpu_backend;

struct Registrar {
  Registrar() { register_device_backend(DeviceType::CPU, &g_cpu_backend); }
} g_registrar;

}  // namespace
}  // namespace cpu
}  // namespace kiln
