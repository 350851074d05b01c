// C++ operators on tensors (a + b, a * 2, -a, a += b), as libtorch has them.
// Hand-written on top of the generated API; included by generated/api/kiln.h.
#pragma once

#include "generated/api/add.h"
#include "generated/api/div.h"
#include "generated/api/mul.h"
#include "generated/api/neg.h"
#include "generated/api/sub.h"

namespace kiln {

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return add(neg(b), a); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline const Tensor& operator+=(const Tensor& a, const Tensor& b) { return a.add_(b); }
inline const Tensor& operator+=(const Tensor& a, const Scalar& b) { return a.add_(b); }
inline const Tensor& operator-=(const Tensor& a, const Tensor& b) { return a.sub_(b); }
inline const Tensor& operator-=(const Tensor& a, const Scalar& b) { return a.sub_(b); }
inline const Tensor& operator*=(const Tensor& a, const Tensor& b) { return a.mul_(b); }
inline const Tensor& operator*=(const Tensor& a, const Scalar& b) { return a.mul_(b); }
inline const Tensor& operator/=(const Tensor& a, const Tensor& b) { return a.div_(b); }
inline const Tensor& operator/=(const Tensor& a, const Scalar& b) { return a.div_(b); }

}  // namespace kiln
