"""kiln.device: where a tensor lives ('cpu', or 'cuda' once that backend exists)."""
import re


def _type_name(x):
    return builtins_type(x).__name__


builtins_type = type


# torch 1.13's device types; kiln computes on the cpu, but names the others as torch does.
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "ort", "xla",
          "lazy", "vulkan", "mps", "meta", "hpu", "privateuseone")
_SPEC = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")  # torch's TYPE[:INDEX], no leading zeros


def _parse(spec):
    """'cuda:1' -> ('cuda', 1), with torch's RuntimeErrors for a malformed string or an unknown type."""
    if not spec:
        raise RuntimeError("Device string must not be empty")
    m = _SPEC.fullmatch(spec)
    if m is None:
        raise RuntimeError(f"Invalid device string: '{spec}'")
    if m.group(1) not in _TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: {spec}")
    digits = m.group(2)
    if digits is not None and len(digits) > 9:  # past int: torch's own message
        raise RuntimeError(f"Could not parse device index '{digits}' in device string '{spec}'")
    index = None if digits is None else int(digits)
    if index is not None and index > 127:  # torch 1.13 wraps it into int8 (cpu:300 is cpu:44); kiln refuses
        raise RuntimeError(f"Device index {index} in device string '{spec}' is out of range (device indices go "
                           f"up to 127)")
    return m.group(1), index


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
        else:
            type, parsed = _parse(type)
            if parsed is not None and index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed "
                                   f"explicitly: {type}:{parsed}")
            index = parsed if parsed is not None else index
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        if index is not None and index > 127:
            raise RuntimeError(f"Device index {index} is out of range (device indices go up to 127)")
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


def check_cpu(device_, factory=False):
    """device_ as a kiln.device when it is the CPU (None passes); any other device raises, as torch's
    CPU-only builds do when a tensor is made or moved there: cuda AssertionError ("not compiled with
    CUDA enabled"), a type kiln has no backend for (xla, mps, meta ...) RuntimeError, or
    NotImplementedError from a factory (torch's "Could not run 'aten::empty' ... 'XLA' backend")."""
    if device_ is None:
        return None
    d = device(device_) if not isinstance(device_, device) else device_
    if d.type == "cuda":
        raise AssertionError("kiln not compiled with CUDA enabled")
    if d.type != "cpu" and (factory or d.index is not None):  # torch: no kernel for that backend
        raise NotImplementedError(f"kiln has no {d.type} backend: it cannot make tensors on device '{d}' "
                                  f"(kiln computes on the cpu)")
    if d.type != "cpu":
        raise RuntimeError(f"kiln is not linked with support for {d.type} devices (kiln computes on the cpu)")
    return d


def get_default_device():
    """The device factory functions use (torch 2.3): always cpu for kiln."""
    return _default_device[0] or device("cpu")
