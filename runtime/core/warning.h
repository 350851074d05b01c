// Warnings raised by kernels (torch's TORCH_WARN). The Python module installs a handler that
// issues each as a Python UserWarning (an exception where a warnings filter says so: the handler
// then throws, and the op stops there); without one they are dropped.
#pragma once

#include <string>

#include "runtime/core/array_ref.h"

namespace kiln {

using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);

void warn(const std::string& message);

// torch's resize_output: an out= that has elements and the wrong shape is resized with this
// deprecation warning (an empty one silently).
void warn_if_out_resized(IntArrayRef out_shape, IntArrayRef shape);
// That warning's text (also issued from Python: python/kiln/linalg/_out.py).
std::string out_resized_message(IntArrayRef out_shape, IntArrayRef shape);

}  // namespace kiln
