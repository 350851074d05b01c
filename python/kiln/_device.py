"""kiln.device: where a tensor lives ('cpu', or 'cuda' once that backend exists)."""


def _type_name(x):
    return builtins_type(x).__name__


builtins_type = type


class device:
    _kiln_device = True  # lets the C++ argument parser recognise device objects

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        # torch's checks: a bare int is a CUDA ordinal; the index an int, not negative; a bad string
        # is a RuntimeError
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"Device(): argument 'index' (position 2) must be int, not {_type_name(index)}")
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool) and index is None:
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError(f"Device(): argument 'type' (position 1) must be str, not {_type_name(type)}")
        elif ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        # torch compares devices with devices only: device('cpu') == 'cpu' is False
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
