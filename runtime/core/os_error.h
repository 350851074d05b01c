// An operating-system error on a named file (open, read, write fail with an errno).
// Its own header, not error.h, because only file code needs it and error.h is in every file.
// The Python layer raises OSError(errno, strerror, filename), which Python itself turns into
// FileNotFoundError, PermissionError, IsADirectoryError, ... as open() does.
#pragma once

#include <string>

#include "runtime/core/error.h"

namespace kiln {

class OSError : public Error {
 public:
  // `context` says who failed ("load_file"); the message reads "load_file: path: strerror".
  OSError(int error_number, const std::string& filename, const std::string& context);

  int error_number() const { return error_number_; }
  const std::string& filename() const { return filename_; }

 private:
  int error_number_;
  std::string filename_;
};

}  // namespace kiln
