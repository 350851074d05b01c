#include "runtime/kernels/cpu/onednn_common.h"

#include <atomic>
#include <oneapi/dnnl/dnnl.hpp>

namespace kiln {
namespace cpu {
namespace {
std::atomic<bool> enabled{true};  // torch's default
}  // namespace

bool onednn_enabled() { return enabled.load(std::memory_order_relaxed); }
void set_onednn_enabled(bool value) { enabled.store(value, std::memory_order_relaxed); }

dnnl::engine& onednn_cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

}  // namespace cpu
}  // namespace kiln
