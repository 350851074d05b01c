// kiln's typed errors and the KILN_CHECK family that throws them.
// The Python layer maps each type to the exception PyTorch raises:
//   Error -> RuntimeError, ValueError -> ValueError, IndexError -> IndexError,
//   TypeError -> TypeError, NotImplementedError -> NotImplementedError.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

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

namespace detail {
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
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
#define KILN_CHECK_NOT_IMPLEMENTED(cond, ...) KILN_CHECK_TYPED(NotImplementedError, cond, __VA_ARGS__)
