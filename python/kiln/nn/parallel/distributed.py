"""DistributedDataParallel: wraps a module for multi-process training. It needs an initialized
process group, which kiln cannot start yet (kiln.distributed has no backend), so construction
raises after torch's argument checks, as torch does without init_process_group."""
from ... import distributed as _dist
from ..modules.module import Module


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module "
                               "doesn't have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if process_group is None and not _dist.is_initialized():
            raise RuntimeError(f"{_dist._NOT_INITIALIZED} ({_dist._NO_BACKEND}, so DistributedDataParallel "
                               "cannot run; use the module directly)")
        raise RuntimeError(f"{_dist._NO_BACKEND}: DistributedDataParallel cannot use process_group")
