// Whether kiln's CPU kernels may call oneDNN where torch would: torch.backends.mkldnn.enabled
// (torch._C._set_mkldnn_enabled). Off, convolutions and gelu run kiln's own loops, as torch's
// native kernels do with the flag off.
#pragma once

namespace kiln {
namespace cpu {

bool onednn_enabled();
void set_onednn_enabled(bool enabled);

}  // namespace cpu
}  // namespace kiln
