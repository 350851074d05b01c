// empty, fill_, arange.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <omp.h>

#include "generated/kernels/arange.h"
#include "generated/kernels/empty.h"
#include "generated/kernels/empty_strided.h"
#include "generated/kernels/eye.h"
#include "generated/kernels/fill.h"
#include "generated/kernels/linspace.h"
#include "runtime/kernels/cpu/fill_run.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/random_utils.h"
#include "runtime/kernels/scalar_convert.h"

namespace kiln {
namespace cpu {

TensorBase empty(IntArrayRef size, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                 bool /*requires_grad: applied by the generated API*/) {
  KILN_CHECK(!device || device->is_cpu(), "empty(): device ", device ? device->str() : "", " is not available");
  return empty_cpu(size, dtype.value_or(default_dtype()));
}

TensorBase empty_strided(IntArrayRef size, IntArrayRef stride, const std::optional<ScalarType>& dtype,
                         const std::optional<Device>& device, bool /*requires_grad*/) {
  KILN_CHECK(!device || device->is_cpu(), "empty_strided(): device ", device ? device->str() : "", " is not available");
  KILN_CHECK(size.size() == stride.size(), "empty_strided(): mismatch in length of strides and shape (", size.size(),
             " vs ", stride.size(), ")");
  for (int64_t s : stride) KILN_CHECK(s >= 0, "empty_strided(): negative strides are not supported");
  TensorBase t = empty_cpu({0}, dtype.value_or(default_dtype()));
  t.impl()->set_sizes_and_strides(size, stride, 0);  // grows the storage to the extent (overflow-checked)
  return t;
}


TensorBase fill_(const TensorBase& self, const Scalar& value) {
  TensorIterator it(IteratorConfig::nullary("fill_", self));
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), "fill_", [&] {
    const scalar_t v = checked_convert<scalar_t>(value, "fill_");
    if (self.is_contiguous()) {  // one run (zeros, ones, full): memset for all-zero bits, else a plain fill
      scalar_t* p = static_cast<scalar_t*>(self.data_ptr());
      const scalar_t zero{};
      if (std::memcmp(&v, &zero, sizeof(scalar_t)) == 0) {
        std::memset(p, 0, sizeof(scalar_t) * static_cast<size_t>(self.numel()));
      } else {
        fill_run(p, self.numel(), v);
      }
      return;
    }
    nullary_kernel<scalar_t>(it, [v] { return v; });
  });
  return self;
}

TensorBase eye(int64_t n, const std::optional<int64_t>& m, const std::optional<ScalarType>& dtype,
               const std::optional<Device>& device, bool /*requires_grad*/) {
  KILN_CHECK(!device || device->is_cpu(), "eye(): device ", device ? device->str() : "", " is not available");
  const int64_t cols = m.value_or(n);
  KILN_CHECK(n >= 0 && cols >= 0, "eye(): n and m must be non-negative, got n=", n, " m=", cols);
  TensorBase t = empty_cpu({n, cols}, dtype.value_or(default_dtype()));
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(t.dtype(), "eye", [&] {
    scalar_t* p = static_cast<scalar_t*>(t.data_ptr());
    for (int64_t i = 0; i < n * cols; ++i) p[i] = scalar_t(0);
    for (int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = scalar_t(1);
  });
  return t;
}

namespace {

// torch's linspace_kernel for float and double, to the bit: step = (end - start) / (steps - 1) in
// T; element i below steps / 2 is start + step * i, the others end - step * (steps - 1 - i), each
// one multiply-add, fused where torch's AVX2 kernels fuse (mul_add). at::parallel_for's chunks
// (GRAIN_SIZE 32768, one per thread) each write their run two 32-byte vectors at a time, a vector
// from its first element's value b as b + j * step (j * step rounded first: Vectorized::arange),
// then the tail element by element.
template <typename T>
void torch_linspace(T* p, T start, T end, int64_t steps) {
  constexpr int64_t kLanes = 32 / sizeof(T), kGrainSize = 32768;
  const T step = (end - start) / static_cast<T>(steps - 1);
  const int64_t halfway = steps / 2;
  auto value = [&](int64_t idx) {
    return idx < halfway ? mul_add(step, static_cast<T>(idx), start)
                         : mul_add(-step, static_cast<T>(steps - idx - 1), end);
  };
  auto run = [&](int64_t begin, int64_t end_idx) {
    int64_t i = begin;
    for (; i + 2 * kLanes <= end_idx; i += 2 * kLanes) {
      for (int64_t first = i; first < i + 2 * kLanes; first += kLanes) {
        const T base = value(first);
        p[first] = base;
        for (int64_t j = 1; j < kLanes; ++j) p[first + j] = base + static_cast<T>(j) * step;
      }
    }
    for (; i < end_idx; ++i) p[i] = value(i);
  };
  const int threads = omp_get_max_threads();
  if (steps < kGrainSize || threads <= 1) {
    run(0, steps);
    return;
  }
  const int64_t used = std::min<int64_t>(threads, (steps + kGrainSize - 1) / kGrainSize);
  const int64_t chunk = (steps + used - 1) / used;
#pragma omp parallel for num_threads(used)
  for (int64_t t = 0; t < used; ++t) {
    const int64_t b = t * chunk;
    if (b < steps) run(b, std::min(steps, b + chunk));
  }
}

// torch's linspace_kernel for Half and BFloat16: the same scheme with every value in the 16-bit
// type (c10::Half / BFloat16 arithmetic rounds after each operation): start and end rounded, step =
// (end - start) / T(steps - 1), index i as T(i); its Vectorized<T> (16 lanes) builds each vector
// from its first value b as b + T(j) * step.
template <typename T>
void torch_linspace_reduced(T* p, double start_d, double end_d, int64_t steps) {
  constexpr int64_t kLanes = 16, kGrainSize = 32768;
  auto r = [](float x) { return static_cast<float>(convert<T>(x)); };
  auto ri = [&](int64_t i) { return r(static_cast<float>(i)); };
  const float start = r(static_cast<float>(start_d)), end = r(static_cast<float>(end_d));
  const float step = r(r(end - start) / ri(steps - 1));
  const int64_t halfway = steps / 2;
  auto value = [&](int64_t idx) {
    return idx < halfway ? r(start + r(step * ri(idx))) : r(end - r(step * ri(steps - idx - 1)));
  };
  auto run = [&](int64_t begin, int64_t end_idx) {
    int64_t i = begin;
    for (; i + 2 * kLanes <= end_idx; i += 2 * kLanes) {
      for (int64_t first = i; first < i + 2 * kLanes; first += kLanes) {
        const float base = value(first);
        // BFloat16's AVX2 Vectorized::arange starts with base itself; Half's is the generic
        // base + i * step from i = 0 (so an infinite step gives NaN in its first lane too)
        p[first] = std::is_same_v<T, Half> ? convert<T>(base + r(0.0f * step)) : convert<T>(base);
        for (int64_t j = 1; j < kLanes; ++j) p[first + j] = convert<T>(base + r(ri(j) * step));
      }
    }
    for (; i < end_idx; ++i) p[i] = convert<T>(value(i));
  };
  const int threads = omp_get_max_threads();
  if (steps < kGrainSize || threads <= 1) {
    run(0, steps);
    return;
  }
  const int64_t used = std::min<int64_t>(threads, (steps + kGrainSize - 1) / kGrainSize);
  const int64_t chunk = (steps + used - 1) / used;
#pragma omp parallel for num_threads(used)
  for (int64_t t = 0; t < used; ++t) {
    const int64_t b = t * chunk;
    if (b < steps) run(b, std::min(steps, b + chunk));
  }
}

}  // namespace

TensorBase linspace(const Scalar& start, const Scalar& end, int64_t steps, const std::optional<ScalarType>& dtype,
                    const std::optional<Device>& device, bool /*requires_grad*/) {
  KILN_CHECK(!device || device->is_cpu(), "linspace(): device ", device ? device->str() : "", " is not available");
  KILN_CHECK(steps >= 0, "linspace(): number of steps must be non-negative");
  TensorBase t = empty_cpu({steps}, dtype.value_or(default_dtype()));
  if (is_integral_type(t.dtype(), /*include_bool=*/false)) {
    check_scalar_fits(start, t.dtype(), "linspace");
    check_scalar_fits(end, t.dtype(), "linspace");
  }
  if (steps > 1 && (t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64)) {
    if (t.dtype() == ScalarType::Float32) {
      torch_linspace(static_cast<float*>(t.data_ptr()), start.to<float>(), end.to<float>(), steps);
    } else {
      torch_linspace(static_cast<double*>(t.data_ptr()), start.to_double(), end.to_double(), steps);
    }
    return t;
  }
  if (steps > 1 && t.dtype() == ScalarType::Float16) {
    torch_linspace_reduced(static_cast<Half*>(t.data_ptr()), start.to_double(), end.to_double(), steps);
    return t;
  }
  if (steps > 1 && t.dtype() == ScalarType::BFloat16) {
    torch_linspace_reduced(static_cast<BFloat16*>(t.data_ptr()), start.to_double(), end.to_double(), steps);
    return t;
  }
  KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(t.dtype(), "linspace", [&] {
    // An integer result takes its bounds in its own dtype first, as torch (uint8 -10 is 246).
    const double a = is_floating_v<scalar_t> ? start.to_double() : static_cast<double>(start.to<scalar_t>());
    const double b = is_floating_v<scalar_t> ? end.to_double() : static_cast<double>(end.to<scalar_t>());
    const double step = steps > 1 ? (b - a) / static_cast<double>(steps - 1) : 0.0;
    scalar_t* p = static_cast<scalar_t*>(t.data_ptr());
    // Symmetric from both ends, as PyTorch, so the last value is exactly `end`.
    for (int64_t i = 0; i < steps; ++i)
      p[i] = convert<scalar_t>(i < (steps + 1) / 2 ? a + step * i : b - step * (steps - 1 - i));
  });
  return t;
}

TensorBase arange_out(const Scalar& start_in, const Scalar& end_in, const Scalar& step_in, const TensorBase& out) {
  // An integer result takes integer start and step first, as torch ("step must be nonzero" for a
  // step of -0.25); its length comes from the integer bounds for int64 (arange(2.25) is [0, 1]) but
  // from the float bounds for other dtypes (arange(0, 3.5, dtype=int32) has 4 elements), as torch.
  const bool integral = is_integral_type(out.dtype(), /*include_bool=*/true);
  auto as_result_type = [&](const Scalar& v) {
    if (integral && !v.is_integral(true)) {
      const double d = v.to_double();
      KILN_CHECK(std::isfinite(d) && std::abs(d) < 9.2e18, "arange(): unsupported range: ", d);
      return Scalar(static_cast<int64_t>(d));
    }
    return v;
  };
  const Scalar start = as_result_type(start_in), end = as_result_type(end_in), step = as_result_type(step_in);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  KILN_CHECK(std::isfinite(s) && std::isfinite(e), "arange(): unsupported range: ", s, " -> ", e);
  KILN_CHECK(st != 0, "arange(): step must be nonzero");
  KILN_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                   "arange(): upper bound and larger bound inconsistent with step sign");
  const bool from_given_bounds = integral && out.dtype() != ScalarType::Int64;
  double count = from_given_bounds ? std::ceil((end_in.to_double() - start_in.to_double()) / step_in.to_double())
                                   : std::ceil((e - s) / st);
  if (out.dtype() == ScalarType::Int64) {
    // torch subtracts the int64 bounds as int64 before going to double (arange(2**63 - 8, 2**63 - 1)
    // has 7 elements; the doubles would both be 2**63)
    const uint64_t diff = static_cast<uint64_t>(end.to_long()) - static_cast<uint64_t>(start.to_long());
    count = std::ceil(static_cast<double>(static_cast<int64_t>(diff)) / static_cast<double>(step.to_long()));
  }
  KILN_CHECK(count >= 0 && count < 9.0e18, "arange(): invalid size, possible overflow");
  const int64_t n = static_cast<int64_t>(count);
  if (out.numel() != n || out.dim() != 1) out.impl()->set_sizes_contiguous({n});
  KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(out.dtype(), "arange", [&] {
    scalar_t* p = static_cast<scalar_t*>(out.data_ptr());
    const int64_t stride = out.strides()[0];
    if (std::is_integral_v<scalar_t> && start.is_integral(true) && step.is_integral(true)) {
      const int64_t s0 = start.to_long(), d = step.to_long();
      for (int64_t i = 0; i < n; ++i) p[i * stride] = convert<scalar_t>(s0 + i * d);
    } else {
      for (int64_t i = 0; i < n; ++i) p[i * stride] = convert<scalar_t>(s + i * st);
    }
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
