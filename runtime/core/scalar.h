// A Python-like number: bool, int64 or double, remembering which.
#pragma once

#include <cstdint>

#include "runtime/core/convert.h"
#include "runtime/core/dtype.h"

namespace kiln {

class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : kind_(ScalarType::Bool) { i_ = v; }
  Scalar(int v) : kind_(ScalarType::Int64) { i_ = v; }
  Scalar(int64_t v) : kind_(ScalarType::Int64) { i_ = v; }
  Scalar(long long v) : kind_(ScalarType::Int64) { i_ = static_cast<int64_t>(v); }
  Scalar(double v) : kind_(ScalarType::Float64) { d_ = v; }
  Scalar(float v) : kind_(ScalarType::Float64) { d_ = v; }

  bool is_floating_point() const { return kind_ == ScalarType::Float64; }
  bool is_integral(bool include_bool) const {
    return kind_ == ScalarType::Int64 || (include_bool && kind_ == ScalarType::Bool);
  }
  bool is_boolean() const { return kind_ == ScalarType::Bool; }
  // Bool, Int64 or Float64: the type of the Python number it came from.
  ScalarType type() const { return kind_; }

  template <typename T>
  T to() const {
    return is_floating_point() ? convert<T>(d_) : convert<T>(i_);  // defined for NaN, inf, overflow
  }
  double to_double() const { return to<double>(); }
  int64_t to_long() const { return to<int64_t>(); }
  bool to_bool() const { return is_floating_point() ? d_ != 0 : i_ != 0; }

  bool equal(double v) const { return is_floating_point() ? d_ == v : static_cast<double>(i_) == v; }

 private:
  ScalarType kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace kiln
