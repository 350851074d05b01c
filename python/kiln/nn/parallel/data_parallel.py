"""DataParallel as torch builds it on a machine without GPUs: it keeps `module`, has no devices
(device_ids == []) and forward calls the module directly, so `model = nn.DataParallel(model)` runs
unchanged and checkpoints keep torch's `module.` key prefix."""
from ..modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []  # torch stops here when no GPU is available (no output_device or dim)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
