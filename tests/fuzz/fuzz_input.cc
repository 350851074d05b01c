#include "tests/fuzz/fuzz_input.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "generated/api/kiln.h"

namespace kiln {
namespace fuzz {

uint8_t FuzzInput::byte() { return pos_ < size_ ? data_[pos_++] : 0; }

uint32_t FuzzInput::below(uint32_t n) {
  const uint32_t v = (static_cast<uint32_t>(byte()) << 8) | byte();
  return n == 0 ? 0 : v % n;
}

int64_t FuzzInput::int64() {
  switch (byte() % 16) {
    case 8: return 0;
    case 9: return -1;
    case 10: return std::numeric_limits<int64_t>::min();
    case 11: return std::numeric_limits<int64_t>::max();
    case 12: return int64_t(1) << 31;
    case 13: return int64_t(1) << 40;
    case 14: return -(int64_t(1) << 33);
    case 15: {
      uint64_t raw = 0;
      for (int i = 0; i < 8; ++i) raw = (raw << 8) | byte();
      int64_t v;
      std::memcpy(&v, &raw, sizeof v);
      return v;
    }
    default: return static_cast<int64_t>(byte() % 8) - 2;  // typical dims, sizes and indices: -2..5
  }
}

double FuzzInput::float64() {
  switch (byte() % 12) {
    case 6: return std::numeric_limits<double>::quiet_NaN();
    case 7: return std::numeric_limits<double>::infinity();
    case 8: return -std::numeric_limits<double>::infinity();
    case 9: return -0.0;
    case 10: return 1e308;
    case 11: return std::numeric_limits<double>::denorm_min();
    default: return (static_cast<double>(byte()) - 128.0) / 16.0;
  }
}

Scalar FuzzInput::scalar() {
  switch (below(3)) {
    case 1: return Scalar(int64());
    case 2: return Scalar(boolean());
    default: return Scalar(float64());
  }
}

std::string FuzzInput::string() {
  static const char* const kChoices[] = {"mean", "sum", "none", "floor", "trunc", "", "bogus"};
  return kChoices[below(7)];
}

ScalarType FuzzInput::dtype() {
  static const ScalarType kTypes[] = {ScalarType::Float32, ScalarType::Float64, ScalarType::Int64,
                                      ScalarType::Int32,   ScalarType::Bool,    ScalarType::UInt8,
                                      ScalarType::Int8,    ScalarType::Int16,   ScalarType::Float16,
                                      ScalarType::BFloat16};
  return kTypes[below(10)];
}

Device FuzzInput::device() { return below(8) == 7 ? Device(DeviceType::CUDA, 0) : Device(); }

std::vector<int64_t> FuzzInput::int_list() {
  std::vector<int64_t> v(below(5));
  for (int64_t& x : v) x = int64();
  return v;
}

Tensor FuzzInput::fresh_tensor() {
  const ScalarType dt = dtype();
  const int64_t nd = below(5);
  std::vector<int64_t> sizes(nd);
  for (int64_t& s : sizes) s = below(4);
  // The layout: plain, transposed, every other element, broadcast (stride 0), or at an offset.
  const uint32_t layout = below(5);
  std::vector<int64_t> base_sizes = sizes;
  if (layout == 1 && nd >= 2) std::swap(base_sizes[0], base_sizes[1]);
  if (layout == 2 && nd >= 1) base_sizes[0] *= 2;
  if (layout == 3 && nd >= 1) base_sizes[0] = 1;
  if (layout == 4) {
    int64_t n = 3;
    for (int64_t s : sizes) n *= s;
    base_sizes = {n + 3};
  }
  // The small integer and 16-bit float dtypes are drawn as int64 / float64 values and converted
  // (wrapping, rounding, overflowing to inf as a conversion does).
  const bool converted = dt == ScalarType::UInt8 || dt == ScalarType::Int8 || dt == ScalarType::Int16 ||
                         dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  const ScalarType drawn = !converted ? dt : is_floating_type(dt) ? ScalarType::Float64 : ScalarType::Int64;
  Tensor base = kiln::empty(base_sizes, drawn);
  const int64_t n = base.numel();
  switch (drawn) {
    case ScalarType::Float32:
      for (int64_t i = 0; i < n; ++i) static_cast<float*>(base.data_ptr())[i] = static_cast<float>(float64());
      break;
    case ScalarType::Float64:
      for (int64_t i = 0; i < n; ++i) static_cast<double*>(base.data_ptr())[i] = float64();
      break;
    case ScalarType::Int64:
      for (int64_t i = 0; i < n; ++i) static_cast<int64_t*>(base.data_ptr())[i] = int64();
      break;
    case ScalarType::Int32:
      for (int64_t i = 0; i < n; ++i) static_cast<int32_t*>(base.data_ptr())[i] = static_cast<int32_t>(int64());
      break;
    default:
      for (int64_t i = 0; i < n; ++i) static_cast<bool*>(base.data_ptr())[i] = boolean();
  }
  if (converted) base = base.to(dt);
  if (base.is_floating_point() && below(3) == 0) base.set_requires_grad(true);
  if (layout == 1 && nd >= 2) return kiln::transpose(base, 0, 1);
  if (layout == 2 && nd >= 1) return base.slice(0, 0, std::nullopt, 2);
  if (layout == 3 && nd >= 1) return base.expand(sizes);
  if (layout == 4) {
    std::vector<int64_t> strides(nd);
    int64_t s = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      strides[d] = s;
      s *= std::max<int64_t>(sizes[d], 1);
    }
    return kiln::as_strided(base, sizes, strides, 3);
  }
  return base;
}

Tensor FuzzInput::tensor() {
  if (!made_.empty() && below(4) == 0) return made_[below(static_cast<uint32_t>(made_.size()))];
  Tensor t = fresh_tensor();
  if (made_.size() < 16) made_.push_back(t);
  return t;
}

std::vector<Tensor> FuzzInput::tensor_list() {
  std::vector<Tensor> v(below(4));
  for (Tensor& t : v) t = tensor();
  return v;
}

std::vector<Tensor> FuzzInput::optional_tensor_list() {
  std::vector<Tensor> v(below(4));
  for (Tensor& t : v) t = optional_tensor();
  return v;
}

void use_result(FuzzInput& in, const Tensor& result) {
  // Views can be huge without memory (expand to 2^40 elements): differentiating those would
  // only measure patience, so large results are left alone.
  if (result.defined() && result.requires_grad() && result.numel() <= (1 << 16) && in.boolean())
    kiln::sum(result).backward();
}

void run_one_input(const uint8_t* data, size_t size) {
  static const bool trace = std::getenv("KILN_FUZZ_TRACE") != nullptr;  // prints each call and its time
  FuzzInput in(data, size);
  for (int call = 0; call < 8 && !in.exhausted(); ++call) {
    const FuzzOp& op = kFuzzOps[in.below(static_cast<uint32_t>(kNumFuzzOps))];
    const auto start = std::chrono::steady_clock::now();
    const char* outcome = "ok";
    if (trace) std::fprintf(stderr, "%-28s ", op.name);
    try {
      op.call(in);
    } catch (const Error&) {
      outcome = "error";  // a typed kiln error: the right answer to hostile arguments
    }
    if (trace) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "%-5s %8.2f ms\n", outcome, ms);
    }
  }
}

}  // namespace fuzz
}  // namespace kiln
