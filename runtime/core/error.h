// kiln's typed errors and the KILN_CHECK family that throws them.
// The Python layer maps each type to the exception PyTorch raises:
//   Error -> RuntimeError, ValueError -> ValueError, IndexError -> IndexError,
//   TypeError -> TypeError, NotImplementedError -> NotImplementedError,
//   DeviceUnavailableError -> AssertionError (torch's "not compiled with CUDA enabled"),
//   LinAlgError -> kiln.linalg.LinAlgError (a RuntimeError, as torch.linalg.LinAlgError).
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

namespace kiln {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};
class IndexError : public Error {
 public:
  using Error::Error;
};
class TypeError : public Error {
 public:
  using Error::Error;
};
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

// A matrix the factorization cannot handle (singular, not positive-definite, no convergence).
class LinAlgError : public Error {
 public:
  using Error::Error;
};

// A device this build has no backend for (runtime/core/device_backend.h).
class DeviceUnavailableError : public NotImplementedError {
 public:
  using NotImplementedError::NotImplementedError;
};

namespace detail {
// Message building without <sstream> (a heavy header every tensor user would pay for).
std::string format_double(double v);
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
inline void append(std::string& s, bool v) { s += v ? "true" : "false"; }
template <typename T>
std::enable_if_t<std::is_integral_v<T>> append(std::string& s, T v) {
  s += std::to_string(v);
}
template <typename T>
std::enable_if_t<std::is_floating_point_v<T>> append(std::string& s, T v) {
  s += format_double(static_cast<double>(v));
}
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::string s;
  (append(s, args), ...);
  return s;
}
}  // namespace detail

}  // namespace kiln

// Message formatting only happens on the failure path.
#define KILN_CHECK_TYPED(ErrorType, cond, ...)                  \
  do {                                                          \
    if (__builtin_expect(!(cond), 0)) {                         \
      throw ::kiln::ErrorType(::kiln::detail::str_cat(__VA_ARGS__)); \
    }                                                           \
  } while (0)

#define KILN_CHECK(cond, ...) KILN_CHECK_TYPED(Error, cond, __VA_ARGS__)
#define KILN_CHECK_VALUE(cond, ...) KILN_CHECK_TYPED(ValueError, cond, __VA_ARGS__)
#define KILN_CHECK_INDEX(cond, ...) KILN_CHECK_TYPED(IndexError, cond, __VA_ARGS__)
#define KILN_CHECK_TYPE(cond, ...) KILN_CHECK_TYPED(TypeError, cond, __VA_ARGS__)
#define KILN_CHECK_LINALG(cond, ...) KILN_CHECK_TYPED(LinAlgError, cond, __VA_ARGS__)
#define KILN_CHECK_NOT_IMPLEMENTED(cond, ...) KILN_CHECK_TYPED(NotImplementedError, cond, __VA_ARGS__)
