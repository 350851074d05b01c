#include "runtime/core/warning.h"

#include <atomic>
#include <cstdint>

namespace kiln {
namespace {
std::atomic<WarningHandler> handler{nullptr};
}  // namespace

void set_warning_handler(WarningHandler h) { handler.store(h); }

void warn(const std::string& message) {
  if (WarningHandler h = handler.load()) h(message);
}

void warn_if_out_resized(IntArrayRef out_shape, IntArrayRef shape) {
  int64_t numel = 1;
  for (int64_t s : out_shape) numel *= s;
  if (numel == 0 || out_shape == shape) return;
  warn(out_resized_message(out_shape, shape));
}

std::string out_resized_message(IntArrayRef out_shape, IntArrayRef shape) {
  return "An output with one or more elements was resized since it had shape " + shape_str(out_shape) +
         ", which does not match the required output shape " + shape_str(shape) +
         ". This behavior is deprecated, and in a future PyTorch release outputs will not be resized unless they "
         "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
         "with t.resize_(0).";
}

}  // namespace kiln
