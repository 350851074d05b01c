#include "runtime/core/os_error.h"

#include <cstring>

namespace kiln {

OSError::OSError(int error_number, const std::string& filename, const std::string& context)
    : Error(context + ": " + filename + ": " + std::strerror(error_number)),
      error_number_(error_number),
      filename_(filename) {}

}  // namespace kiln
