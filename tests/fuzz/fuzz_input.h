// Decodes fuzzer bytes into the arguments of kiln calls, biased toward hostile values:
// huge and negative sizes, INT_MIN / -1, NaN and Inf, empty tensors, zero strides,
// out-of-range dims and indices, overlapping (aliased) tensors. When the bytes run out
// every read returns its first, benign choice, so any input decodes to valid calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "generated/api/tensor.h"

namespace kiln {
namespace fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool exhausted() const { return pos_ >= size_; }

  uint8_t byte();
  uint32_t below(uint32_t n);  // uniform-ish in [0, n)

  bool boolean() { return byte() & 1; }
  int64_t int64();
  double float64();
  Scalar scalar();
  std::string string();
  ScalarType dtype();
  Device device();
  std::vector<int64_t> int_list();
  Tensor tensor();
  std::vector<Tensor> tensor_list();
  std::vector<Tensor> optional_tensor_list();  // None entries are undefined tensors

  // Optional<T>: None one time in four.
  std::optional<int64_t> optional_int64() { return none() ? std::nullopt : std::optional<int64_t>(int64()); }
  std::optional<double> optional_float64() { return none() ? std::nullopt : std::optional<double>(float64()); }
  std::optional<Scalar> optional_scalar() { return none() ? std::nullopt : std::optional<Scalar>(scalar()); }
  std::optional<std::string> optional_string() {
    return none() ? std::nullopt : std::optional<std::string>(string());
  }
  std::optional<ScalarType> optional_dtype() { return none() ? std::nullopt : std::optional<ScalarType>(dtype()); }
  std::optional<Device> optional_device() { return none() ? std::nullopt : std::optional<Device>(device()); }
  std::optional<std::vector<int64_t>> optional_int_list() {
    return none() ? std::nullopt : std::optional<std::vector<int64_t>>(int_list());
  }
  Tensor optional_tensor() { return none() ? Tensor() : tensor(); }

 private:
  bool none() { return below(4) == 0; }
  Tensor fresh_tensor();

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::vector<Tensor> made_;  // earlier tensors: reused so calls see aliased inputs
};

// A result of a fuzzed call: sometimes differentiated, so backward formulas run too.
void use_result(FuzzInput& in, const Tensor& result);
template <typename T>
void use_result(FuzzInput&, const T&) {}

struct FuzzOp {
  const char* name;
  void (*call)(FuzzInput& in);
};
extern const FuzzOp kFuzzOps[];
extern const size_t kNumFuzzOps;

// Runs the calls encoded in `data`; a kiln::Error is a correct answer to hostile input,
// anything else (another exception, a crash, a sanitizer report) is a finding.
void run_one_input(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace kiln
