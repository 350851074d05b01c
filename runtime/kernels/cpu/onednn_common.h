// What kiln's oneDNN kernels (onednn_conv.cc, onednn_eltwise.cc) share: the switch and the engine.
#pragma once

namespace dnnl {
struct engine;
}  // namespace dnnl

namespace kiln {
namespace cpu {

// Whether kiln's CPU kernels may call oneDNN where torch would: torch.backends.mkldnn.enabled
// (torch._C._set_mkldnn_enabled). Off, convolutions and gelu run kiln's own loops, as torch's
// native kernels do with the flag off.
bool onednn_enabled();
void set_onednn_enabled(bool enabled);

// The CPU engine every oneDNN primitive of kiln's is made for.
dnnl::engine& onednn_cpu_engine();

}  // namespace cpu
}  // namespace kiln
