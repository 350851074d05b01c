"""kiln.device: where a tensor lives ('cpu', or 'cuda' once that backend exists)."""


class device:
    _kiln_device = True  # lets the C++ argument parser recognise device objects

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise ValueError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise ValueError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


_default_device = [None]


def set_default_device(device_):
    """torch.set_default_device: the device factory functions use. kiln computes on the CPU only, so
    'cpu' (or None, the default) is accepted and any other device raises, as torch's CPU-only builds
    do when such a factory runs."""
    if device_ is not None:
        device_ = check_cpu(device_)
    _default_device[0] = device_


def check_cpu(device_):
    """device_ as a kiln.device when it is the CPU (None passes); any other device raises, as torch's
    CPU-only builds do when a tensor is made there."""
    if device_ is None:
        return None
    d = device(device_) if not isinstance(device_, device) else device_
    if d.type != "cpu":
        raise AssertionError("kiln not compiled with CUDA enabled" if d.type == "cuda"
                             else f"kiln has no {d.type} device")
    return d


def get_default_device():
    """The device factory functions use (torch 2.3): always cpu for kiln."""
    return _default_device[0] or device("cpu")
