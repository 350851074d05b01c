#include "runtime/core/error.h"

#include <cstdio>

namespace kiln {
namespace detail {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace detail
}  // namespace kiln
