#include "runtime/kernels/cpu/onednn_enabled.h"

#include <atomic>

namespace kiln {
namespace cpu {
namespace {
std::atomic<bool> enabled{true};  // torch's default
}  // namespace

bool onednn_enabled() { return enabled.load(std::memory_order_relaxed); }
void set_onednn_enabled(bool value) { enabled.store(value, std::memory_order_relaxed); }

}  // namespace cpu
}  // namespace kiln
